"""The words a fix rewrote, as Whisper heard them: each whitespace word of the line that the
fix's span overlaps, with Whisper's probability of it. The guards that weigh a context fix by
Whisper's doubt (`names_out_of_play`, `sure_words`, `garbled_lines`) read the same words the
same way."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from glyphoxa_pipelines.correction.models import Correction

_WORD = re.compile(r"\S+")


@lru_cache(maxsize=8)
def line_words(text: str) -> tuple[tuple[str, int, int], ...]:
    """The whitespace words of `text`, each with its start and end, kept for the last few
    lines: the guards read them once per fix, several guards per line."""
    return tuple((m.group(), m.start(), m.end()) for m in _WORD.finditer(text))


def words_under(
    text: str, c: Correction, word_confidences: Sequence[float]
) -> list[tuple[str, float]] | None:
    """The words of `text` that `c` overlaps, each with its probability; None when the
    confidences do not fit the text's words (they belong to another text: no signal)."""
    words = line_words(text)
    if len(words) != len(word_confidences):
        return None
    start, end = c.start, c.end
    return [
        (word, p)
        for (word, begin, stop), p in zip(words, word_confidences, strict=True)
        if begin < end and start < stop
    ]
