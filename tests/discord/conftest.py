"""A real MemoryService on the test run's embedded PostgreSQL, and per-test bot wiring: a
guild mapped to a fresh campaign, the real CommandTree built over it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from discord_fakes import GUILD  # noqa: E402

from realtime.discord.commands import GlyphoxaTree, build_tree  # noqa: E402
from realtime.discord.config import BotConfig  # noqa: E402
from realtime.discord.context import BotContext  # noqa: E402


@pytest.fixture(scope="session")
async def bot_service(database_url: str, glyphoxa_home: Path) -> AsyncIterator[object]:
    from glyphoxa_pipelines.config import Settings
    from realtime.service import MemoryService

    svc = MemoryService(database_url, settings=Settings(home=glyphoxa_home),
                        spool_dir=glyphoxa_home / "discord-spool", probe_interval_s=0.2)
    await svc.open(warm_embedder=False)
    yield svc
    await svc.close()


@pytest.fixture
def ctx(bot_service: object, campaign_id: str) -> BotContext:
    return BotContext(bot_service, BotConfig("test-token", {GUILD: campaign_id}))  # type: ignore[arg-type]


@pytest.fixture
def tree(ctx: BotContext) -> GlyphoxaTree:
    return build_tree(discord.Client(intents=discord.Intents.none()), ctx)
