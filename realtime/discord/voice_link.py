"""The bot's voice connections, one per guild, each kept up by a `Reconnector`.

The bot joins the DM's voice channel when a session starts (the live voice loop and recap
audio need the connection) and leaves when it ends. A drop in between is repaired with the
same state (guild, channel, session); leaving on purpose closes the reconnector first, so the
intentional disconnect is not "repaired". Leaving never ends the session: that is /session end.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord

from realtime.discord.reconnect import Backoff, Reconnector, Sleep

log = logging.getLogger(__name__)


@dataclass
class VoiceState:
    """What survives a reconnect."""

    guild_id: int
    channel: Any  # a discord.VoiceChannel (anything with `async connect(...)`)
    session_id: str


class VoiceLinks:
    def __init__(self, *, backoff: Backoff | None = None, sleep: Sleep = asyncio.sleep) -> None:
        self.backoff = backoff or Backoff()
        self._sleep = sleep
        self._links: dict[int, Reconnector[VoiceState, Any]] = {}

    async def _connect(self, state: VoiceState) -> Any:
        # discord.py's own reconnect loop is off: ours keeps the state and the schedule.
        return await state.channel.connect(reconnect=False, self_deaf=False)

    async def _gave_up(self, state: VoiceState, error: BaseException | None) -> None:
        log.error("voice in guild %s lost for good (session %s): %s", state.guild_id,
                  state.session_id, error)
        self._links.pop(state.guild_id, None)

    def link(self, guild_id: int) -> Reconnector[VoiceState, Any] | None:
        return self._links.get(guild_id)

    async def join(self, channel: Any, session_id: str) -> None:
        guild_id = channel.guild.id
        current = self._links.get(guild_id)
        if current is not None:
            if current.state.channel.id == channel.id and current.connection is not None:
                current.state.session_id = session_id
                return
            await self.leave(guild_id)
        state = VoiceState(guild_id, channel, session_id)
        rec: Reconnector[VoiceState, Any] = Reconnector(
            self._connect, state, backoff=self.backoff, sleep=self._sleep,
            on_give_up=self._gave_up,
        )
        rec.start(await self._connect(state))
        self._links[guild_id] = rec

    def disconnected(self, guild_id: int) -> None:
        """The bot's voice state in the guild went to no channel: Discord dropped it (or we
        left, in which case the link is gone already and this does nothing)."""
        rec = self._links.get(guild_id)
        if rec is not None:
            rec.disconnected()

    async def leave(self, guild_id: int) -> None:
        rec = self._links.pop(guild_id, None)
        if rec is None:
            return
        await rec.close()
        if rec.connection is not None:
            await rec.connection.disconnect(force=False)

    async def close_all(self) -> None:
        for guild_id in list(self._links):
            await self.leave(guild_id)

    async def play(self, guild_id: int, audio_path: str | None) -> bool:
        """Play a recap's audio file in the guild's voice channel; False when there is no
        connection, no file, no ffmpeg, or something is already playing."""
        rec = self._links.get(guild_id)
        conn = rec.connection if rec else None
        if conn is None or not audio_path or not Path(audio_path).is_file():
            return False
        if shutil.which("ffmpeg") is None or conn.is_playing():
            return False
        conn.play(discord.FFmpegPCMAudio(audio_path))
        return True
