"""Speech-to-speech engines: one model hears the player and speaks the NPC, no STT/TTS stages.

Memory reaches such an engine in two ways only: the hot context, injected as text into its
instructions when the session opens, and the tier's memory tools, offered as function
definitions and executed through the same dispatch as the cascaded loop, HTTP and MCP
(`tool_bridge.run_call`). There is no pre-fetch: the engine yields no partial transcripts.
What was said on both sides enters the `ContextManager` log from the engine's transcripts, and
the `Consolidator` writes it to L1 (on its clock and when the audio ends).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from glyphoxa_pipelines.providers.speech import Synthesized
from realtime.service import MemoryService
from realtime.tools import Tier, ToolScope, tools_for_tier
from realtime.voice.consolidator import Consolidator
from realtime.voice.context_manager import ContextManager
from realtime.voice.interfaces import AudioFrame, AudioSink, AudioSource, ToolCall
from realtime.voice.loop import INSTRUCTIONS, VoiceConfig
from realtime.voice.tool_bridge import ToolOutcome, function_definitions, run_call

log = logging.getLogger(__name__)

ToolHandler = Callable[[ToolCall], Awaitable[str]]


@dataclass(slots=True)
class S2SEvent:
    """What the engine reports: NPC audio, a finished transcript (either side), or the end of
    one response (`done`)."""

    audio: Synthesized | None = None
    player_text: str = ""
    npc_text: str = ""
    done: bool = False


class SpeechToSpeech(Protocol):
    """A duplex speech model session. Tool calls are answered inside the engine through
    `on_tool_call`, so the model's function-call round trip never leaves its protocol."""

    async def open(self, instructions: str, tools: Sequence[dict[str, Any]],
                   on_tool_call: ToolHandler) -> None: ...

    async def send_audio(self, frame: AudioFrame) -> None: ...

    async def end_of_input(self) -> None: ...

    def events(self) -> AsyncIterator[S2SEvent]: ...

    async def close(self) -> None: ...


@dataclass
class S2SResult:
    player: list[str] = field(default_factory=list)
    npc: list[str] = field(default_factory=list)
    tool_calls: list[ToolOutcome] = field(default_factory=list)
    audio_s: float = 0.0
    written: int = 0


class S2SLoop:
    """One NPC over a speech-to-speech engine for one audio source."""

    def __init__(self, service: MemoryService, config: VoiceConfig, engine: SpeechToSpeech,
                 sink: AudioSink, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.service = service
        self.config = config
        self.engine = engine
        self.sink = sink
        self.context = ContextManager(config.context_window_tokens)
        self.consolidator = Consolidator(service, config.session_id, self.context,
                                         interval_s=config.consolidate_every_s, clock=clock)
        self.result = S2SResult()

    async def run(self, source: AudioSource) -> S2SResult:
        cfg = self.config
        context = await self.service.hot_context(cfg.session_id, cfg.npc_id)
        tier = cfg.tier or Tier.STANDARD  # no utterance to judge before it is heard
        specs = tools_for_tier(tier, self.service.latencies)
        offered = [s.name for s in specs]
        scope = ToolScope(context.campaign_id, cfg.session_id, cfg.npc_id)
        npc_name = str(context.identity.get("name") or cfg.npc_id)

        async def on_tool_call(call: ToolCall) -> str:
            outcome = await run_call(self.service, call, scope, offered)
            self.result.tool_calls.append(outcome)
            return str(outcome.message()["content"])

        await self.engine.open(f"{INSTRUCTIONS}\n\n{context.prompt}",
                               function_definitions(specs), on_tool_call)

        async def pump() -> None:
            async for frame in source.frames():
                await self.engine.send_audio(frame)
            await self.engine.end_of_input()

        sender = asyncio.create_task(pump())  # the player may talk while the NPC answers
        try:
            async for event in self.engine.events():
                if event.audio is not None:
                    self.result.audio_s += event.audio.seconds
                    await self.sink.play(event.audio)
                if event.player_text.strip():
                    self.result.player.append(event.player_text)
                    self.context.add("player", event.player_text, speaker_id="player",
                                     npc_id=cfg.npc_id)
                if event.npc_text.strip():
                    self.result.npc.append(event.npc_text)
                    self.context.add("npc", event.npc_text, speaker_id=cfg.npc_id,
                                     speaker_name=npc_name, npc_id=cfg.npc_id)
                await self.consolidator.tick()
                if event.done and sender.done():
                    break
            await sender  # its error, if any, is the run's
        finally:
            if not sender.done():
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sender
            await self.engine.close()
            await self.sink.close()
            self.result.written += await self.consolidator.consolidate_now()
        return self.result
