"""The scene of a live session: the names said in its last turns, the context stage's prior.

Among thousands of known names, the few said in the turns just before (and the speaker's own)
are by far the likeliest to be said again, so the context stage (`context.py`) lets them win on
less resemblance. The scene is built from what the corrector itself settled, turn after turn:
names heard right and names it corrected, never the raw mishearings.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from glyphoxa_pipelines.correction.models import CorrectionResult
from glyphoxa_pipelines.correction.name_index import NameIndex
from glyphoxa_pipelines.correction.phonetic import tokenize

SCENE_TURNS = 40  # about two minutes of table talk: a name said then is still in play


def names_said(result: CorrectionResult, index: NameIndex) -> list[str]:
    """Canonical names of the entities a corrected utterance names: its corrections, and every
    window of words spelled exactly like a known name or alias (case aside)."""
    said = [c.entity for c in result.corrections if c.entity]
    tokens = tokenize(result.text)
    by_joined, by_surface = index.by_joined, index.by_surface
    for first in range(len(tokens)):
        joined = ""
        for last in range(first, min(len(tokens), first + index.max_words)):
            token = tokens[last]
            if last > first and not token.joinable:
                break
            # "Grimjaw's" names Grimjaw: the last word is read without its possessive too
            for norm, end in ((token.base_norm, token.base_end), (token.norm, token.end)):
                forms = by_joined.get(joined + norm)
                if not forms:
                    continue
                window = result.text[tokens[first].start : end]
                folded = window.casefold()
                # "pike" may be the fish: a name of ordinary words counts only as written
                form = by_surface.get(window) or next(
                    (f for f in forms if not f.common and f.surface.casefold() == folded), None
                )
                if form is not None:
                    said.append(form.canonical)
                    break
            joined += token.norm
    return list(dict.fromkeys(said))


def speaker_names(index: NameIndex, *names: str | None) -> list[str]:
    """Canonical names of those of the speaker's names that are known names: the NPC voiced,
    or a player whose display name is their character's. They join the scene of their turn."""
    out = []
    for name in names:
        form = index.by_surface.get(" ".join((name or "").split()))
        if form is not None:
            out.append(form.canonical)
    return out


class SceneMemory:
    """The names of one session's last `turns` utterances, oldest forgotten first.

    One per live session (the transcript writer keeps them) or per pipeline pass over a
    session's entries in order. Not thread-safe beyond what `deque` gives: one writer a session.
    """

    __slots__ = ("_turns",)

    def __init__(self, turns: int = SCENE_TURNS) -> None:
        if turns < 1:
            raise ValueError(f"a scene spans at least one turn, not {turns}")
        self._turns: deque[tuple[str, ...]] = deque(maxlen=turns)

    def names(self, *extra: str | None) -> tuple[str, ...]:
        """The scene as distinct names, with `extra` (the speaker's own name) first."""
        out = [name for name in extra if name]
        for turn in self._turns:
            out.extend(turn)
        return tuple(dict.fromkeys(out))

    def remember(self, names: Iterable[str]) -> None:
        """One turn said these names (possibly none: a turn without names still ages the scene)."""
        self._turns.append(tuple(names))
