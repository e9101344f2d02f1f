"""The recap path's `/audio/speech` synthesizer as a voice-loop `Synthesizer`.

The loop needs samples, not a file: the endpoint is asked for WAV (no decoder dependency for
mp3 or opus) and the 16-bit PCM is read with the standard library. Retries stay the recap
synthesizer's policy, but few: the loop speaks sentence by sentence and a stalled sentence
holds up the rest.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass

import numpy as np

from glyphoxa_pipelines.providers.speech.local_tts import Synthesized
from glyphoxa_pipelines.providers.speech.remote import SpeechError, SpeechSynthesizer


def decode_wav(data: bytes) -> Synthesized:
    """A 16-bit PCM WAV (any channel count: mixed down) as mono float32 samples."""
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            if w.getsampwidth() != 2:
                raise SpeechError(f"expected 16-bit PCM, got {8 * w.getsampwidth()}-bit")
            channels, rate = w.getnchannels(), w.getframerate()
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    except (wave.Error, EOFError) as exc:
        raise SpeechError(f"the speech endpoint answered no WAV: {exc}") from exc
    samples = pcm.astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return Synthesized(samples, rate)


@dataclass
class RemoteVoice:
    """Speech from `synthesizer`'s endpoint, one sentence per call."""

    synthesizer: SpeechSynthesizer

    @classmethod
    def create(cls, model: str, *, voice: str = "alloy", base_url: str | None = None,
               api_key: str | None = None) -> RemoteVoice:
        return cls(SpeechSynthesizer(model=model, voice=voice, base_url=base_url,
                                     api_key=api_key, response_format="wav", timeout_s=30.0,
                                     max_retries=1, max_wait_s=2.0))

    def synthesize(self, text: str) -> Synthesized:
        return decode_wav(self.synthesizer.synthesize(text))
