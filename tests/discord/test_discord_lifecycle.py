"""Bot settings, the `glyphoxa discord` command, and clean shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from discord_fakes import GUILD, FakeChannel, FakeInteraction, member
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.memory import SessionStore
from realtime.discord.bot import shutdown
from realtime.discord.commands import GlyphoxaTree
from realtime.discord.config import BotConfig, BotConfigError, parse_guild_map
from realtime.discord.context import BotContext
from realtime.discord.voice_link import VoiceLinks

TOKEN = "MTIzNDU2.secret-token-value"


def test_config_from_env() -> None:
    cfg = BotConfig.from_env({"GLYPHOXA_DISCORD_TOKEN": TOKEN,
                              "GLYPHOXA_DISCORD_CAMPAIGN": "main",
                              "GLYPHOXA_DISCORD_GUILDS": "11=first, 22=second"})
    assert cfg.campaign_for(11) == "first" and cfg.campaign_for(33) == "main"
    assert cfg.campaign_for(None) is None and cfg.dm_role == "DM"
    assert TOKEN not in repr(cfg)
    only_map = BotConfig.from_env({"GLYPHOXA_DISCORD_TOKEN": TOKEN}, guilds="11=first",
                                  dm_role="Game Master")
    assert only_map.campaign_for(22) is None and only_map.dm_role == "Game Master"
    with pytest.raises(BotConfigError, match="GLYPHOXA_DISCORD_TOKEN"):
        BotConfig.from_env({"GLYPHOXA_DISCORD_CAMPAIGN": "main"})
    with pytest.raises(BotConfigError, match="no campaign") as exc:
        BotConfig.from_env({"GLYPHOXA_DISCORD_TOKEN": TOKEN})
    assert TOKEN not in str(exc.value)
    with pytest.raises(BotConfigError, match="'11:first'"):
        parse_guild_map("11:first")


def test_cli_refuses_without_token_and_never_prints_it() -> None:
    runner = CliRunner()
    clear = {"GLYPHOXA_DISCORD_TOKEN": None, "GLYPHOXA_DISCORD_CAMPAIGN": None,
             "GLYPHOXA_DISCORD_GUILDS": None}
    missing = runner.invoke(app, ["discord", "--campaign", "main"], env=clear)
    assert missing.exit_code == 2 and "set GLYPHOXA_DISCORD_TOKEN" in missing.output
    no_campaign = runner.invoke(app, ["discord"], env={**clear, "GLYPHOXA_DISCORD_TOKEN": TOKEN})
    assert no_campaign.exit_code == 2 and "no campaign for the bot" in no_campaign.output
    assert TOKEN not in no_campaign.output
    assert runner.invoke(app, ["discord", "--help"]).exit_code == 0


async def test_shutdown_finishes_commands_and_ends_nothing(
    ctx: BotContext, tree: GlyphoxaTree, db: Any, campaign_id: str, monkeypatch: Any
) -> None:
    ctx.voice = VoiceLinks()
    table = FakeChannel(10, guild_id=GUILD)
    dm = member("DM", voice_channel=table)
    start = FakeInteraction(GUILD, dm)
    await tree.get_command("session").get_command("start").callback(start, title="Live")
    assert "Listening in voice-10" in start.last.text and len(table.clients) == 1

    release = asyncio.Event()
    real_queue = ctx.service.review_queue

    async def slow_queue(campaign: str) -> list[Any]:
        await release.wait()
        return await real_queue(campaign)

    monkeypatch.setattr(ctx.service, "review_queue", slow_queue)
    slow = FakeInteraction(GUILD, dm)
    task = asyncio.create_task(tree.get_command("review").callback(slow))
    await asyncio.sleep(0.01)
    asyncio.get_running_loop().call_later(0.05, release.set)
    await shutdown(ctx, drain_s=5)

    assert task.done() and "review queue is empty" in slow.last.text  # it got to answer
    assert table.clients[0].disconnects == 1 and ctx.voice.link(GUILD) is None
    live = SessionStore(db).list_sessions(campaign_id, 5, status="live")
    assert [s.title for s in live] == ["Live"]  # shutting down ends no session
    late = FakeInteraction(GUILD, dm)
    await tree.get_command("session").get_command("end").callback(late)
    assert late.last.ephemeral and "shutting down" in late.last.text
    assert SessionStore(db).list_sessions(campaign_id, 5, status="live")
