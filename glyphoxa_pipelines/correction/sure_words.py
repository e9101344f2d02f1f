"""Ordinary words Whisper was sure of become a name by context only at stage 1's bar.

The context stage lowers the resemblance a window needs when the scene vouches for a name,
because tiny.en writes the nearest words it knows for a name it has no tokens for ("drink it"
for Trinket) and then doubts them. When every word of the window is ordinary English and
Whisper gave each better than even odds, that second signal is missing: the words were most
likely said. A scene name that merely sounds near them ("who's stone" and Whitestone, at a
Jaro-Winkler of 0.81) is then chance, and the more names a scene holds, the likelier. Such a
fix must reach `split_threshold`, the bar stage 1 sets for ordinary words becoming one name.
A window of only function words (Zipf of `function_zipf` or more: "If I") Whisper was sure
of never becomes a name, however exactly it sounds like one (Ify): such words are said
far more often than any name is heard as them.

What stays: a window holding one word that is no ordinary English ("Hi, Burias"); a window
Whisper doubted in any word (p under `low_confidence`: "kill it" for Keyleth); a close
match ("stones can" for Stoneskin, 0.96); stage 1's fixes; lines without confidences (no
word can be told sure or doubted).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.correction.heard_span import words_under
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig
from glyphoxa_pipelines.correction.name_index import word_zipf

_LETTERS = re.compile(r"[\w'’]+")


def sure_floor(
    text: str, c: Correction, word_confidences: Sequence[float], cfg: CorrectionConfig
) -> float | None:
    """The least Zipf frequency of the words `c` rewrote when Whisper heard every one of them
    with better than even odds; None when it doubted one, or when the confidences do not fit
    the text's words."""
    inside = words_under(text, c, word_confidences)
    if inside is None:
        return None
    pieces = [w for word, _ in inside for w in _LETTERS.findall(word)]
    if not pieces or any(p < cfg.low_confidence for _, p in inside):
        return None
    return min(word_zipf(w) for w in pieces)


def stands(
    text: str, c: Correction, word_confidences: Sequence[float], cfg: CorrectionConfig
) -> bool:
    """Whether a context fix survives the words Whisper was sure of."""
    floor = sure_floor(text, c, word_confidences, cfg)
    if floor is None or floor < cfg.common_zipf:
        return True  # a doubted word, or one that is no ordinary English: the context's call
    if floor >= cfg.function_zipf:
        return False  # "If I" sounds exactly like Ify, and is said a thousand times as often
    return c.score >= cfg.split_threshold


def doubted_or_close(
    text: str,
    corrections: list[Correction],
    word_confidences: Sequence[float] | None,
    cfg: CorrectionConfig,
) -> list[Correction]:
    """The context stage's `corrections` without loose matches over sure, ordinary words,
    nor any match over sure function words."""
    if not corrections or not word_confidences:
        return corrections
    return [
        c for c in corrections if c.method != "context" or stands(text, c, word_confidences, cfg)
    ]
