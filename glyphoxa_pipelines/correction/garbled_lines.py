"""No context fix among neighbours Whisper mostly doubted.

The context stage accepts a looser sound match because the scene and the words around a
doubtful word vouch for it: the neighbours were heard, so the one odd window is the name. When
Whisper doubted most of the other words of the line too (their median word probability under
`GARBLED_MEDIAN`), the neighbours were guessed as well: the audio was garbled, or the words
are ones tiny.en has no tokens for ("R. Kelly would agree" heard as "Are Kelly with a
gree?"), and a window of them that happens to sound like a scene name ("Kelly with",
Keyleth) is chance, not evidence.

What stays: stage 1's fixes (they stand on the sound alone, scene or not); a context fix whose
neighbours Whisper heard mostly with confidence, however doubted the name's own words were;
a fix with no other word in the line to judge by.
"""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_pipelines.correction.heard_span import line_words, words_over
from glyphoxa_pipelines.correction.models import Correction

# Whisper bet against most of the other words: the same floor as a very doubted word's
GARBLED_MEDIAN = 0.5


def garbled_around(
    text: str, start: int, end: int, word_confidences: Sequence[float] | None
) -> bool:
    """Whisper gave most words of `text` outside `start:end` less than even odds. The words
    inside are those the span overlaps (one run, `words_over`), unless one word holds the
    whole span and more on both sides: that word stays among the others."""
    _, begins, stops = line_words(text)
    if not word_confidences or len(begins) != len(word_confidences):
        return False  # confidences that do not fit the words say nothing
    inside = words_over(text, start, end)
    if len(inside) == 1 and begins[inside.start] < start and stops[inside.start] > end:
        inside = range(0)
    others = sorted([*word_confidences[: inside.start], *word_confidences[inside.stop :]])
    if not others:
        return False
    # `statistics.median`'s arithmetic (the middle one, or the two middle ones' mean) without
    # its checks and copies: the guard asks it for every fix of the context stage
    half = len(others) // 2
    middle = others[half] if len(others) % 2 else (others[half - 1] + others[half]) / 2
    return middle < GARBLED_MEDIAN


def heard_clearly(
    text: str, corrections: list[Correction], word_confidences: Sequence[float] | None
) -> list[Correction]:
    """The context stage's `corrections` without those among garbled neighbours."""
    if not corrections or not word_confidences:
        return corrections
    return [
        c
        for c in corrections
        if c.method != "context" or not garbled_around(text, c.start, c.end, word_confidences)
    ]
