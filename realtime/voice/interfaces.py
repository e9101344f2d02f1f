"""The voice loop's provider interfaces: what it needs from audio, speech and chat engines.

Protocols rather than base classes: the bundled engines (`SpeechToText`, `TextToSpeech` in
`glyphoxa_pipelines.providers.speech`) satisfy them without knowing the loop exists, and a
test or another vendor's engine only has to have the same methods.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from glyphoxa_pipelines.providers.speech import Synthesized, Transcript


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """A short piece (10-30 ms) of one speaker's mono float32 audio in [-1, 1]."""

    samples: np.ndarray
    sample_rate: int
    speaker_id: str = "player"
    speaker_name: str = ""


class AudioSource(Protocol):
    """Per-speaker audio as it arrives (a file, an HTTP body, Discord voice receive)."""

    def frames(self) -> AsyncIterator[AudioFrame]: ...


class AudioSink(Protocol):
    """Where the NPC's speech goes (a WAV file, Discord playback)."""

    async def play(self, audio: Synthesized) -> None: ...

    async def close(self) -> None: ...


class Recognizer(Protocol):
    """Speech to text with Whisper-style word probabilities; `hotwords` biases decoding."""

    def transcribe(
        self, samples: np.ndarray, sample_rate: int, *, hotwords: str | None = None
    ) -> Transcript: ...


class Synthesizer(Protocol):
    """Text to speech, one sentence at a time."""

    def synthesize(self, text: str) -> Synthesized: ...


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for, arguments still as the JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ChatEvent:
    """A streamed piece of the model's answer: text, or (at the end) the calls it wants."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


class ChatModel(Protocol):
    """A streaming chat model that may call functions (OpenAI chat completions semantics)."""

    def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> AsyncIterator[ChatEvent]: ...
