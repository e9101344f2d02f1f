"""A lone heard word becomes, by context, only a name that is in play.

The context stage accepts a window on one of two signals: the scene, or Whisper's doubt. On
doubt alone, one word that sounds roughly like one of a campaign's thousands of names is
chance, not evidence: tiny.en doubts many words it heard right ("dinette", "shithead"), and a
misheard name of the scene often sounds a little like some other name too ("Kila", said for
Keyleth, scores higher against an unrelated "Keill"). The more names a campaign holds, the
more such near sounds there are. So when the scene is known, a context fix of a single heard
word to a name outside it is withdrawn: the word is left as heard.

What stays: context fixes to scene names; a window of several words ("Elder Nax" for
Eldrinax, "Box Machina" for Vox Machina: a name heard split, or anchored by its own other
word, is more than one near sound); stage 1's fixes (they stand on the sound alone); every
fix when no scene is known (nothing to tell names in play from the rest).
"""

from __future__ import annotations

from collections.abc import Iterable

from glyphoxa_pipelines.correction.models import Correction
from glyphoxa_pipelines.correction.name_index import NameIndex
from glyphoxa_pipelines.correction.scene_rivals import scene_of


def lone_word(c: Correction) -> bool:
    """The fix rewrote one heard word (a hyphenated or apostrophed word is one word)."""
    return len(c.original.split()) == 1


def in_play_only(
    corrections: list[Correction], index: NameIndex, scene: Iterable[str] | None
) -> list[Correction]:
    """The context stage's `corrections` without lone words written as names out of play."""
    suspects = [c for c in corrections if c.method == "context" and lone_word(c)]
    if not scene or not suspects:  # most lines: no such fix, the scene is not looked at
        return corrections
    entities, _ = scene_of(index, scene)
    dropped = {id(c) for c in suspects if c.entity not in entities}
    return [c for c in corrections if id(c) not in dropped] if dropped else corrections
