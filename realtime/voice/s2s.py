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
from collections import deque
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
from realtime.voice.s2s_floor import Floor
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

    async def end_of_input(self) -> None:
        """The audio sent since the last call is a turn: answer it (may be called again)."""
        ...

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
    """One NPC over a speech-to-speech engine for one audio source.

    Without a `floor` the source is one recording (an HTTP body): all of it is sent and
    answered once it ends. With one (a Discord channel, `s2s_floor.Floor`), the engine hears
    one speaker at a time and is asked to answer at the end of each utterance; the run lasts
    until the source ends and every turn asked for has been answered."""

    def __init__(self, service: MemoryService, config: VoiceConfig, engine: SpeechToSpeech,
                 sink: AudioSink, *, floor: Floor | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.service = service
        self.config = config
        self.engine = engine
        self.sink = sink
        self.floor = floor
        self.context = ContextManager(config.context_window_tokens)
        self.consolidator = Consolidator(service, config.session_id, self.context,
                                         interval_s=config.consolidate_every_s, clock=clock)
        self.result = S2SResult()
        self._asked: deque[tuple[str, str]] = deque()  # (speaker id, name) per turn committed
        self._unanswered = 0

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

        async def consume() -> None:
            async for event in self.engine.events():
                if event.audio is not None:
                    self.result.audio_s += event.audio.seconds
                    await self.sink.play(event.audio)
                if event.player_text.strip():
                    who, name = self._asked.popleft() if self._asked else ("player", "")
                    self.result.player.append(event.player_text)
                    self.context.add("player", event.player_text, speaker_id=who,
                                     speaker_name=name or who, npc_id=cfg.npc_id)
                if event.npc_text.strip():
                    self.result.npc.append(event.npc_text)
                    self.context.add("npc", event.npc_text, speaker_id=cfg.npc_id,
                                     speaker_name=npc_name, npc_id=cfg.npc_id)
                await self.consolidator.tick()
                if event.done:
                    self._unanswered -= 1
                    if sender.done() and self._unanswered <= 0:
                        return

        # the player may talk while the NPC answers
        sender = asyncio.create_task(self._pump(source))
        consumer = asyncio.create_task(consume())
        try:
            await asyncio.wait({sender, consumer}, return_when=asyncio.FIRST_COMPLETED)
            if sender.done():
                await sender  # its error, if any, is the run's
                if self._unanswered > 0:
                    await consumer
            else:
                await consumer  # the engine hung up first
                await sender
        finally:
            for task in (sender, consumer):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await self.engine.close()
            await self.sink.close()
            self.result.written += await self.consolidator.consolidate_now()
        return self.result

    async def _pump(self, source: AudioSource) -> None:
        """The source's audio to the engine; a turn asked for at each utterance's end (with a
        floor) or once at the source's end (without)."""
        last: tuple[str, str] = ("player", "")
        async for frame in source.frames():
            if self.floor is None:
                last = (frame.speaker_id, frame.speaker_name)
                await self.engine.send_audio(frame)
                continue
            step = self.floor.feed(frame)
            for piece in step.send:
                await self.engine.send_audio(piece)
            if step.commit:
                await self._ask((frame.speaker_id, frame.speaker_name))
        if self.floor is None:
            await self._ask(last)
        elif self.floor.open and self.floor.holder is not None:
            await self._ask((self.floor.holder, ""))

    async def _ask(self, speaker: tuple[str, str]) -> None:
        self._asked.append(speaker)
        self._unanswered += 1
        await self.engine.end_of_input()
