"""A speech-to-speech engine over an OpenAI-Realtime-style websocket event protocol.

Client events sent: `session.update` (instructions = the hot context as text, tools = the
tier's memory tools in the Realtime function format, 16-bit PCM both ways),
`input_audio_buffer.append` (base64 PCM at the engine's rate), `input_audio_buffer.commit` +
`response.create` when the input ends, and for each `response.function_call_arguments.done`
a `conversation.item.create` carrying the `function_call_output`, then `response.create` so
the model answers with the result. Server events read: `response.audio.delta`,
`response.audio_transcript.done`, `conversation.item.input_audio_transcription.completed`,
`response.done` and `error`. A response that called functions is not the end of the turn: the
`done` event goes out only after a response that called none.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech import Synthesized
from glyphoxa_pipelines.providers.speech.whisper import resample
from realtime.voice.interfaces import AudioFrame, ToolCall
from realtime.voice.s2s import S2SEvent, ToolHandler

REALTIME_RATE = 24_000  # the protocol's pcm16 rate
DEFAULT_API_KEY_ENV = "GLYPHOXA_S2S_API_KEY"


class RealtimeProtocolError(RuntimeError):
    """The server sent an `error` event."""


def realtime_tools(definitions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions tool definitions in the Realtime shape (no `function` nesting)."""
    return [{"type": "function", **d["function"]} for d in definitions]


def pcm16_base64(samples: np.ndarray) -> str:
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    return base64.b64encode(pcm).decode()


def decode_pcm16(data: str, rate: int) -> Synthesized:
    pcm = np.frombuffer(base64.b64decode(data), dtype="<i2")
    return Synthesized(pcm.astype(np.float32) / 32768.0, rate)


@dataclass
class OpenAIRealtimeEngine:
    """`url` is the full websocket address (with `?model=` for OpenAI; a local server's own)."""

    url: str
    api_key: str | None = None
    voice: str | None = None
    rate: int = REALTIME_RATE
    _ws: Any = field(default=None, repr=False)
    _on_tool_call: ToolHandler | None = field(default=None, repr=False)

    async def open(self, instructions: str, tools: Sequence[dict[str, Any]],
                   on_tool_call: ToolHandler) -> None:
        from websockets.asyncio.client import connect

        key = self.api_key or os.environ.get(DEFAULT_API_KEY_ENV) or os.environ.get(
            "OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._ws = await connect(self.url, additional_headers=headers, max_size=None)
        self._on_tool_call = on_tool_call
        session: dict[str, Any] = {
            "instructions": instructions,
            "tools": realtime_tools(tools),
            "tool_choice": "auto",
            "modalities": ["audio", "text"],
            "input_audio_format": "pcm16",
            "output_audio_format": "pcm16",
            "input_audio_transcription": {"model": "whisper-1"},
        }
        if self.voice:
            session["voice"] = self.voice
        await self._send({"type": "session.update", "session": session})

    async def _send(self, event: dict[str, Any]) -> None:
        await self._ws.send(json.dumps(event))

    async def send_audio(self, frame: AudioFrame) -> None:
        samples = frame.samples
        if frame.sample_rate != self.rate:
            samples = resample(samples, frame.sample_rate, self.rate)
        await self._send({"type": "input_audio_buffer.append", "audio": pcm16_base64(samples)})

    async def end_of_input(self) -> None:
        await self._send({"type": "input_audio_buffer.commit"})
        await self._send({"type": "response.create"})

    async def events(self) -> AsyncIterator[S2SEvent]:
        from websockets.exceptions import ConnectionClosed

        called = False  # did the response in progress call a function?
        try:
            async for raw in self._ws:
                event = json.loads(raw)
                kind = event.get("type", "")
                if kind == "response.audio.delta":
                    yield S2SEvent(audio=decode_pcm16(event["delta"], self.rate))
                elif kind == "response.audio_transcript.done":
                    yield S2SEvent(npc_text=event.get("transcript", ""))
                elif kind == "conversation.item.input_audio_transcription.completed":
                    yield S2SEvent(player_text=event.get("transcript", ""))
                elif kind == "response.function_call_arguments.done":
                    called = True
                    await self._answer_call(event)
                elif kind == "response.done":
                    if called:
                        called = False
                        await self._send({"type": "response.create"})
                    else:
                        yield S2SEvent(done=True)
                elif kind == "error":
                    raise RealtimeProtocolError(str(event.get("error")))
        except ConnectionClosed:
            return

    async def _answer_call(self, event: dict[str, Any]) -> None:
        assert self._on_tool_call is not None
        call = ToolCall(event.get("call_id", ""), event.get("name", ""),
                        event.get("arguments", ""))
        output = await self._on_tool_call(call)
        await self._send({"type": "conversation.item.create", "item": {
            "type": "function_call_output", "call_id": call.id, "output": output}})

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
