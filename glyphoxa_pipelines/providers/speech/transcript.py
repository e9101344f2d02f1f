"""What was heard: a transcript and its words with Whisper's probabilities.

Why a module of its own: the local decoders (`whisper`, `whisper_window`) and the remote one
build the same shape. Whisper's word tokens do not always start a new word ("Vax" +
"'ildan"), so pieces without a leading space are folded into the word before, keeping the
lowest probability: one unsure piece makes the word unsure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TranscriptWord:
    """One whitespace-separated word of a transcript with Whisper's probability for it."""

    text: str
    start_s: float
    end_s: float
    probability: float


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was heard: `text` and its words, one `TranscriptWord` per `text.split()` item."""

    text: str
    words: tuple[TranscriptWord, ...] = ()

    @property
    def word_confidences(self) -> list[float]:
        return [w.probability for w in self.words]


def join_words(pieces: list[tuple[str, float, float, float]]) -> Transcript:
    """A transcript from Whisper's (token text, start, end, probability) word pieces."""
    words: list[list[Any]] = []
    for text, start, end, prob in pieces:
        if not text.strip():
            continue
        if words and not text[:1].isspace():
            last = words[-1]
            last[0] += text.strip()
            last[2] = end
            last[3] = min(last[3], prob)
            continue
        # a piece holding several words ("  a b") gives each of them its probability
        words.extend([part, start, end, prob] for part in text.split())
    out = tuple(TranscriptWord(w[0], round(w[1], 3), round(w[2], 3), float(w[3])) for w in words)
    return Transcript(" ".join(w.text for w in out), out)
