"""Stand-ins for the loop's speech ends, for tests of its wiring: a recognizer that hears
given lines, a voice that says nothing, and two tone bursts the VAD cuts into two turns."""

from __future__ import annotations

from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech import Synthesized, Transcript

RATE = 16_000


class ScriptedRecognizer:
    """Hears the given lines in order (the loop's wiring is under test, not Whisper)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def transcribe(self, samples: Any, sample_rate: int, *, hotwords: str | None = None
                   ) -> Transcript:
        return Transcript(self.lines.pop(0))


class Silent:
    def synthesize(self, text: str) -> Synthesized:
        return Synthesized(np.zeros(160, np.float32), RATE)


def two_utterances(lead_in: int = 8000) -> Synthesized:
    """A second of tone, a second of quiet, a second of tone: two turns for the VAD."""
    t = np.arange(RATE) / RATE
    tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    quiet = np.zeros(RATE, np.float32)
    return Synthesized(np.concatenate([quiet[:lead_in], tone, quiet, tone, quiet]), RATE)
