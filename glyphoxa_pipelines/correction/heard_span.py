"""The words a fix rewrote, as Whisper heard them: each whitespace word of the line that the
fix's span overlaps, with Whisper's probability of it. The guards that weigh a context fix by
Whisper's doubt (`names_out_of_play`, `sure_words`, `garbled_lines`) read the same words the
same way."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache

from glyphoxa_pipelines.correction.models import Correction

_WORD = re.compile(r"\S+")

# a line's whitespace words, their starts and their ends
LineWords = tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]


@lru_cache(maxsize=8)
def line_words(text: str) -> LineWords:
    """The whitespace words of `text`, their starts and their ends, kept for the last few
    lines: the guards read them once per fix, several guards per line."""
    found = list(_WORD.finditer(text))
    return (
        tuple(m.group() for m in found),
        tuple(m.start() for m in found),
        tuple(m.end() for m in found),
    )


def words_over(text: str, start: int, end: int) -> range:
    """Which whitespace words of `text` the span `start:end` overlaps. Words come in order and
    apart, so they are one run: from the first that ends after `start` up to the first that
    begins at `end` or later (two bisections instead of a pass over the line)."""
    _, begins, stops = line_words(text)
    first = bisect_right(stops, start)
    return range(first, bisect_left(begins, end, first))


def words_under(
    text: str, c: Correction, word_confidences: Sequence[float]
) -> list[tuple[str, float]] | None:
    """The words of `text` that `c` overlaps, each with its probability; None when the
    confidences do not fit the text's words (they belong to another text: no signal)."""
    words = line_words(text)[0]
    if len(words) != len(word_confidences):
        return None
    return [(words[k], word_confidences[k]) for k in words_over(text, c.start, c.end)]
