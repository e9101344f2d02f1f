"""The Discord client: opens the memory service, syncs the slash commands, watches the bot's
own voice state, and shuts down cleanly.

Clean shutdown ends nothing by accident: a live session stays live (the DM ends sessions, and
the bot may be back in a minute); commands in flight get to finish and answer; the voice
connections are left on purpose (so nobody "repairs" them); entries spooled while PostgreSQL
was away are replayed if it is back; then the service closes its pool.
"""

from __future__ import annotations

import logging
from typing import Any

import discord

from realtime.discord.commands import build_tree
from realtime.discord.config import BotConfig
from realtime.discord.context import BotContext
from realtime.discord.voice_link import VoiceLinks
from realtime.service import MemoryService

log = logging.getLogger(__name__)


def intents() -> discord.Intents:
    """Slash commands need no privileged intent; voice states tell us about our own drops
    and where the DM sits."""
    chosen = discord.Intents.none()
    chosen.guilds = True
    chosen.voice_states = True
    return chosen


async def shutdown(ctx: BotContext, *, drain_s: float = 10.0) -> None:
    """Everything but closing the gateway (that is the client's own `close`)."""
    left = await ctx.drain(drain_s)
    if left:
        log.warning("%d command(s) still running at shutdown", left)
    if ctx.voice is not None:
        await ctx.voice.close_all()
    svc = ctx.service
    if svc.spool.depth and not svc.degraded:
        await svc.replay_spool()
    if svc.spool.depth:
        log.warning("%d spooled write(s) stay on disk; they are replayed on the next start",
                    svc.spool.depth)


class GlyphoxaBot(discord.Client):
    def __init__(self, config: BotConfig, service: MemoryService, **options: Any) -> None:
        super().__init__(intents=intents(), **options)
        self.config = config
        self.ctx = BotContext(service, config, voice=VoiceLinks())
        self.tree = build_tree(self, self.ctx)
        self._shut = False

    async def setup_hook(self) -> None:
        await self.ctx.service.open()
        # Guild commands appear at once; global ones (for the default campaign) may take a
        # while to show in every guild.
        for guild_id in self.config.guild_campaigns:
            guild = discord.Object(id=guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        if self.config.default_campaign is not None:
            await self.tree.sync()

    async def on_ready(self) -> None:
        log.info("connected as %s to %d guild(s)", self.user, len(self.guilds))

    async def on_voice_state_update(self, member: discord.Member, before: discord.VoiceState,
                                    after: discord.VoiceState) -> None:
        me = self.user
        if me is not None and member.id == me.id and before.channel and after.channel is None:
            assert self.ctx.voice is not None
            self.ctx.voice.disconnected(member.guild.id)

    async def close(self) -> None:
        if not self._shut:
            self._shut = True
            try:
                await shutdown(self.ctx)
            finally:
                await super().close()
                await self.ctx.service.close()
        else:
            await super().close()
