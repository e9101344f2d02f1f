"""What every command needs: the service, which campaign this guild runs, who is the DM,
and the live session; plus tracking of in-flight commands so shutdown can let them finish.

The DM is a member with the configured role (by name, case-insensitive) or one who may manage
the guild; everyone else gets the read-only commands.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import discord

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import Session, SessionStore
from realtime.discord.config import BotConfig
from realtime.discord.replies import BotError, NotAllowed, answering
from realtime.discord.voice_link import VoiceLinks
from realtime.service import MemoryService


def is_dm(user: Any, dm_role: str) -> bool:
    perms = getattr(user, "guild_permissions", None)
    if perms is not None and perms.manage_guild:
        return True
    wanted = dm_role.casefold()
    return any(role.name.casefold() == wanted for role in getattr(user, "roles", ()))


@dataclass
class BotContext:
    service: MemoryService
    config: BotConfig
    voice: VoiceLinks | None = None  # None: no voice (tests, or a bot run without it)
    closing: bool = False
    _inflight: set[asyncio.Task[Any]] = field(default_factory=set)

    def campaign(self, interaction: discord.Interaction, *, edit: bool = False) -> str:
        """The guild's campaign; with `edit`, only for the DM."""
        if interaction.guild_id is None:
            raise BotError("Use Glyphoxa's commands in a server channel, not in direct messages.")
        campaign = self.config.campaign_for(interaction.guild_id)
        if campaign is None:
            raise BotError("This server runs no campaign: ask the bot's operator to map it "
                           "(GLYPHOXA_DISCORD_GUILDS).")
        if self.closing:
            raise BotError("The bot is shutting down; try again once it is back.")
        if edit and not is_dm(interaction.user, self.config.dm_role):
            raise NotAllowed(f"Only the DM (role '{self.config.dm_role}' or a server manager) "
                             "can change the campaign's memory.")
        return campaign

    def is_dm(self, interaction: discord.Interaction) -> bool:
        return is_dm(interaction.user, self.config.dm_role)

    async def live_session(self, campaign: str) -> Session | None:
        """The campaign's most recent live session, if any."""
        sessions = await self.service.run(
            SessionStore.list_sessions.op(self.service.sessions, campaign, 1, status="live"),
            transaction=False,
        )
        return sessions[0] if sessions else None

    async def require_live_session(self, campaign: str) -> Session:
        session = await self.live_session(campaign)
        if session is None:
            raise BotError("No live session: start one with /session start.")
        return session

    async def edit(self, campaign: str, op: Op, *, names: bool = False) -> Any:
        """A DM edit composed of several store operations: the service's own edit path."""
        return await self.service.edit(campaign, op, names=names)

    @contextlib.asynccontextmanager
    async def answering(self, interaction: discord.Interaction) -> AsyncIterator[None]:
        """A command body: errors reported to the user (`replies.answering`), and the command
        counted as in flight until it returns, so `drain` can wait for it."""
        task = asyncio.current_task()
        if task is not None:
            self._inflight.add(task)
        try:
            async with answering(interaction):
                yield
        finally:
            if task is not None:
                self._inflight.discard(task)

    async def drain(self, timeout_s: float = 10.0) -> int:
        """Refuse new commands and wait for those in flight; returns how many were still
        running at the deadline (they are left alone, not cancelled mid-write)."""
        self.closing = True
        pending = {t for t in self._inflight if t is not asyncio.current_task()}
        if not pending:
            return 0
        _, still = await asyncio.wait(pending, timeout=timeout_s)
        return len(still)
