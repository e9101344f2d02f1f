"""Discord adapters for the voice loop: receive (per-user PCM in) and playback (PCM out).

Receive is optional and experimental: discord.py does not receive audio, and the
`discord-ext-voice-recv` extension that does has no released support for Discord's DAVE
end-to-end encryption. So nothing here imports it: `VoiceReceiveSource.write(user, data)` has
the shape of its `BasicSink` callback (`voice_recv.BasicSink(source.write)`, then
`voice_client.listen(sink)`), and any other receiver that hands over 48 kHz stereo 16-bit PCM
per user can call it the same way. It is called on the receiver's thread; frames cross to the
loop's event loop through `call_soon_threadsafe`.

Playback is discord.py's own `AudioSource` contract: `read()` returns 20 ms of 48 kHz stereo
16-bit PCM (3,840 bytes), and an empty result ends the playback.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import discord
import numpy as np

from glyphoxa_pipelines.providers.speech import Synthesized
from realtime.voice.audio import DISCORD_RATE, discord_pcm
from realtime.voice.interfaces import AudioFrame

FRAME_BYTES = DISCORD_RATE // 50 * 2 * 2  # 20 ms, stereo, 16-bit


class VoiceReceiveSource:
    """Per-user frames from a voice receiver, as the loop's `AudioSource`."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._loop = loop or asyncio.get_running_loop()
        self._queue: asyncio.Queue[AudioFrame | None] = asyncio.Queue()

    def write(self, user: Any, data: Any) -> None:
        """One packet's PCM for `user` (anything with `id` and `display_name`)."""
        pcm = getattr(data, "pcm", data)
        if user is None or not pcm:
            return
        stereo = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        mono = stereo.reshape(-1, 2).mean(axis=1) if len(stereo) % 2 == 0 else stereo
        frame = AudioFrame(mono.astype(np.float32), DISCORD_RATE, str(user.id),
                           str(getattr(user, "display_name", "") or user.id))
        self._loop.call_soon_threadsafe(self._queue.put_nowait, frame)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def frames(self) -> AsyncIterator[AudioFrame]:
        while (frame := await self._queue.get()) is not None:
            yield frame


class DiscordPlayback(discord.AudioSource):
    """The loop's `AudioSink` playing through a connected `discord.VoiceClient`."""

    def __init__(self, voice_client: Any) -> None:
        self.voice_client = voice_client
        self._buffer = bytearray()
        self._lock = threading.Lock()  # read() runs on discord.py's player thread

    async def play(self, audio: Synthesized) -> None:
        pcm = discord_pcm(audio)
        with self._lock:
            self._buffer += pcm
        if not self.voice_client.is_playing():
            self.voice_client.play(self)

    async def close(self) -> None:
        return None

    def read(self) -> bytes:
        with self._lock:
            if not self._buffer:
                return b""
            frame = bytes(self._buffer[:FRAME_BYTES])
            del self._buffer[:FRAME_BYTES]
        return frame.ljust(FRAME_BYTES, b"\0")

    def is_opus(self) -> bool:
        return False
