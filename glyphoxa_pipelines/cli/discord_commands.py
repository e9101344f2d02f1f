"""`glyphoxa discord`: run the Discord bot (slash commands for the DM, voice connection).

discord.py is imported inside the command, so the rest of the CLI never loads it. The token
comes only from GLYPHOXA_DISCORD_TOKEN (never an option: options land in shell history and
process lists) and is never printed or logged.
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("discord")(discord_bot)


def discord_bot(
    campaign: str | None = typer.Option(
        None, "--campaign", "-c",
        help="Campaign every guild runs (default: GLYPHOXA_DISCORD_CAMPAIGN)."),
    guilds: str | None = typer.Option(
        None, help="Per-guild campaigns: '<guild id>=<campaign id>,...' "
        "(default: GLYPHOXA_DISCORD_GUILDS)."),
    dm_role: str | None = typer.Option(
        None, help="Role whose members may edit the campaign, besides server managers "
        "(default: GLYPHOXA_DISCORD_DM_ROLE or 'DM')."),
) -> None:
    """Run the Discord bot from GLYPHOXA_DISCORD_TOKEN."""
    from realtime.discord.config import BotConfig, BotConfigError

    try:
        config = BotConfig.from_env(campaign=campaign, guilds=guilds, dm_role=dm_role)
    except BotConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

    import asyncio
    import contextlib
    import signal

    import discord

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url
    from realtime.discord.bot import GlyphoxaBot
    from realtime.service import MemoryService

    settings = Settings.from_env()
    discord.utils.setup_logging()
    bot = GlyphoxaBot(config, MemoryService(resolve_url(settings), settings=settings))

    async def main() -> None:
        # SIGTERM (systemd, docker stop) shuts down as cleanly as Ctrl-C does.
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows
            loop.add_signal_handler(signal.SIGTERM, lambda: loop.create_task(bot.close()))
        async with bot:
            await bot.start(config.token)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass  # `async with bot` has shut it down cleanly already
    except discord.LoginFailure as exc:
        typer.echo("error: Discord refused the token in GLYPHOXA_DISCORD_TOKEN "
                   "(reset it in the developer portal)", err=True)
        raise typer.Exit(2) from exc
