"""Speech to text through any OpenAI-compatible `/audio/transcriptions` endpoint.

The audio goes up as a 16-bit PCM WAV (every server accepts it) and the campaign's names as
the `prompt`, which is how these endpoints take vocabulary hints (Whisper's `hotwords` has no
wire equivalent). They return no per-word probabilities, so the transcript carries no words
and an empty `word_confidences`: better no confidence gating than gating on numbers nobody
measured.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.openai_client import make_client
from glyphoxa_pipelines.providers.speech.whisper import Transcript

DEFAULT_API_KEY_ENV = "GLYPHOXA_STT_API_KEY"


class TranscriptionError(RuntimeError):
    """The transcription endpoint failed or answered something that is not a transcript."""


def pcm16_wav(samples: np.ndarray, rate: int) -> bytes:
    """Mono float32 in [-1, 1] as a 16-bit PCM WAV file."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return buf.getvalue()


@dataclass
class RemoteRecognizer:
    """`model` at `base_url` (OpenAI when None); a `Recognizer` for the voice loop.

    No retries: a late transcript is a late answer at the table (as for the chat turn)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    language: str | None = "en"
    timeout_s: float = 30.0
    client: Any = None

    def _client(self) -> Any:
        if self.client is None:
            self.client = make_client(self.base_url, self.api_key,
                                      api_key_env=DEFAULT_API_KEY_ENV, timeout_s=self.timeout_s)
        return self.client

    def transcribe(
        self, samples: np.ndarray, sample_rate: int, *, hotwords: str | None = None
    ) -> Transcript:
        import openai

        kwargs: dict[str, Any] = {}
        if hotwords:
            kwargs["prompt"] = hotwords
        if self.language:
            kwargs["language"] = self.language
        try:
            response = self._client().audio.transcriptions.create(
                model=self.model, file=("speech.wav", pcm16_wav(samples, sample_rate),
                                        "audio/wav"),
                response_format="json", **kwargs,
            )
        except openai.OpenAIError as exc:
            raise TranscriptionError(
                f"transcription by {self.base_url or 'openai'} failed: {exc}") from exc
        text = getattr(response, "text", None)
        if not isinstance(text, str):
            raise TranscriptionError(f"{self.model} answered no transcript")
        return Transcript(" ".join(text.split()))
