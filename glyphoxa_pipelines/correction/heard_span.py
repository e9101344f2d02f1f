"""The words a fix rewrote, as Whisper heard them: each whitespace word of the line that the
fix's span overlaps, with Whisper's probability of it. The guards that weigh a context fix by
Whisper's doubt (`names_out_of_play`, `sure_words`) read the same words the same way."""

from __future__ import annotations

import re
from collections.abc import Sequence

from glyphoxa_pipelines.correction.models import Correction

_WORD = re.compile(r"\S+")


def words_under(
    text: str, c: Correction, word_confidences: Sequence[float]
) -> list[tuple[str, float]] | None:
    """The words of `text` that `c` overlaps, each with its probability; None when the
    confidences do not fit the text's words (they belong to another text: no signal)."""
    words = list(_WORD.finditer(text))
    if len(words) != len(word_confidences):
        return None
    return [
        (m.group(), p)
        for m, p in zip(words, word_confidences, strict=True)
        if m.start() < c.end and c.start < m.end()
    ]
