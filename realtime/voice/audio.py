"""Audio in and out as plain files and buffers: the WAV source and sink the CLI, the HTTP
endpoint, the tests and the bench use, and the conversion to Discord's playback format.

WAV through the standard library's `wave` (16-bit PCM) keeps the loop free of an audio I/O
dependency; resampling is `resample` from the speech providers (polyphase, no aliasing).
"""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from glyphoxa_pipelines.providers.speech import Synthesized
from glyphoxa_pipelines.providers.speech.whisper import resample
from realtime.voice.interfaces import AudioFrame

DISCORD_RATE = 48_000  # Discord plays 48 kHz stereo 16-bit PCM, 20 ms frames


def read_wav(data: bytes | Path) -> Synthesized:
    """Mono float32 samples from a 16-bit PCM WAV (a stereo file is averaged to mono)."""
    raw = data.read_bytes() if isinstance(data, Path) else data
    with wave.open(io.BytesIO(raw), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError("only 16-bit PCM WAV is supported")
        channels = wav.getnchannels()
        rate = wav.getframerate()
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    samples = pcm.astype(np.float32) / 32768.0
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return Synthesized(samples.astype(np.float32), rate)


def wav_bytes(audio: Synthesized) -> bytes:
    """A 16-bit mono PCM WAV of `audio`."""
    pcm = (np.clip(audio.samples, -1.0, 1.0) * 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(audio.sample_rate)
        wav.writeframes(pcm.tobytes())
    return buf.getvalue()


def discord_pcm(audio: Synthesized) -> bytes:
    """`audio` as Discord plays it: 48 kHz, stereo, signed 16-bit little-endian."""
    mono = resample(audio.samples, audio.sample_rate, DISCORD_RATE)
    pcm = (np.clip(mono, -1.0, 1.0) * 32767).astype("<i2")
    return np.repeat(pcm, 2).tobytes()


@dataclass
class WavSource:
    """One speaker's WAV as frames of `frame_ms`. `realtime` paces them like a microphone;
    off (the default for files), they come as fast as the loop takes them."""

    audio: Synthesized
    speaker_id: str = "player"
    speaker_name: str = ""
    frame_ms: int = 20
    realtime: bool = False
    trailing_silence_ms: int = 600  # so a file that ends mid-word still ends its utterance

    @classmethod
    def from_file(cls, path: Path, **kwargs: object) -> WavSource:
        return cls(read_wav(path), **kwargs)  # type: ignore[arg-type]

    async def frames(self) -> AsyncIterator[AudioFrame]:
        rate = self.audio.sample_rate
        step = rate * self.frame_ms // 1000
        tail = np.zeros(rate * self.trailing_silence_ms // 1000, dtype=np.float32)
        samples = np.concatenate([self.audio.samples, tail])
        for start in range(0, len(samples), step):
            yield AudioFrame(samples[start:start + step], rate, self.speaker_id,
                             self.speaker_name)
            await asyncio.sleep(self.frame_ms / 1000 if self.realtime else 0)


@dataclass
class BufferSink:
    """Keeps what the NPC said, in order, at the first clip's rate."""

    clips: list[Synthesized] = field(default_factory=list)

    async def play(self, audio: Synthesized) -> None:
        self.clips.append(audio)

    async def close(self) -> None:
        return None

    def joined(self) -> Synthesized | None:
        if not self.clips:
            return None
        rate = self.clips[0].sample_rate
        parts = [resample(c.samples, c.sample_rate, rate) for c in self.clips]
        return Synthesized(np.concatenate(parts).astype(np.float32), rate)


@dataclass
class WavFileSink(BufferSink):
    """Writes everything the NPC said to one WAV file when closed."""

    path: Path = Path("npc.wav")

    async def close(self) -> None:
        audio = self.joined()
        if audio is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(wav_bytes(audio))
