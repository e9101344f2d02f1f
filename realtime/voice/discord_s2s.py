"""A speech-to-speech engine on a Discord voice connection.

The pieces exist on their own; this is how they join for one NPC in one channel:

    voice receive (packets, any thread)
      -> PacketReceiver (DAVE hook, opus per SSRC, SPEAKING mapping, silence fill)
      -> VoiceReceiveSource (per-user frames onto the event loop)
      -> S2SLoop with a Floor (one speaker at a time; each utterance's end is a turn)
      -> the engine (hot context as its instructions, memory tools through the one dispatch)
      -> DiscordPlayback (the engine's 24 kHz speech as 48 kHz stereo 20 ms frames)

The live receiver calls `speaking`, `packet` and `tick` (the `PacketReceiver` face) from its
thread; `stop` ends the conversation (the bot leaves, the session ends): the last turn is
answered, the consolidator writes both sides to L1, the engine's connection is closed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from realtime.service import MemoryService
from realtime.voice.dave import FrameDecryptor
from realtime.voice.discord_audio import DiscordPlayback, VoiceReceiveSource
from realtime.voice.loop import VoiceConfig
from realtime.voice.s2s import S2SLoop, S2SResult, SpeechToSpeech
from realtime.voice.s2s_floor import Floor
from realtime.voice.voice_receive import PacketReceiver


class DiscordS2S:
    """Build inside the running event loop (the receive source is bound to it)."""

    def __init__(self, service: MemoryService, config: VoiceConfig, engine: SpeechToSpeech,
                 voice_client: Any, *, decryptor: FrameDecryptor | None = None,
                 floor: Floor | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = VoiceReceiveSource(asyncio.get_running_loop())
        self.receiver = PacketReceiver(self.source, decryptor=decryptor)
        self.playback = DiscordPlayback(voice_client)
        self.floor = floor or Floor()
        self.loop = S2SLoop(service, config, engine, self.playback, floor=self.floor,
                            clock=clock)

    async def run(self) -> S2SResult:
        """Until `stop`: the conversation's result (what was heard, said, called, written)."""
        return await self.loop.run(self.source)

    def stop(self) -> None:
        """From any thread: no more audio; the turn under way is still answered."""
        self.source.close()
