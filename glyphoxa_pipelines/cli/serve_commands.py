"""`glyphoxa serve` (HTTP API + MCP over streamable HTTP) and `glyphoxa mcp` (MCP over stdio).

FastAPI, uvicorn and the MCP SDK are imported inside the commands: the CLI stays cheap to load,
and nothing on this path imports Dagster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from glyphoxa_pipelines.config import Settings
    from realtime.service import MemoryService
    from realtime.voice.engines import VoiceEngines


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("mcp")(mcp)


def _service() -> MemoryService:
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url
    from realtime.service import MemoryService

    settings = Settings.from_env()
    return MemoryService(resolve_url(settings), settings=settings)


def serve(
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8080, help="Port to listen on."),
    mcp_http: bool = typer.Option(True, help="Mount MCP (streamable HTTP) at /mcp."),
    log_level: str = typer.Option("info", help="uvicorn log level."),
    workers: int = typer.Option(1, min=1, help="Worker processes behind this port; they "
                                "share pre-fetch results and cache invalidations through "
                                "PostgreSQL, so any worker serves any session."),
    voice: bool = typer.Option(False, help="Mount the voice loop at /v1/voice (loads the "
                               "speech engines; GLYPHOXA_LLM_MODEL names the chat model)."),
) -> None:
    """Run the realtime memory API. Beyond loopback GLYPHOXA_API_TOKEN is required."""
    import uvicorn

    from glyphoxa_pipelines.config import Settings
    from realtime.api.app import create_app
    from realtime.auth import AuthConfigError, check_bind

    settings = Settings.from_env()
    try:
        check_bind(host, settings.api_token)
    except AuthConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if workers > 1:
        import os

        os.environ["GLYPHOXA_BIND_HOST"] = host
        os.environ["GLYPHOXA_MCP_HTTP"] = "1" if mcp_http else "0"
        os.environ["GLYPHOXA_VOICE"] = "1" if voice else "0"
        # Any worker may serve a session's next hot context: share what each pre-fetched.
        os.environ.setdefault("GLYPHOXA_SHARED_PREFETCH", "1")
        uvicorn.run("realtime.api.app:app_from_env", factory=True, host=host, port=port,
                    workers=workers, log_level=log_level, access_log=False)
        return
    engines = _voice_engines(settings) if voice else None
    app = create_app(_service(), token=settings.api_token, mount_mcp=mcp_http, host=host,
                     voice=engines)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)


def _voice_engines(settings: Settings) -> VoiceEngines:
    """Loaded before the server starts listening: a missing model fails the start, not the
    first player's turn."""
    from glyphoxa_pipelines.providers.speech import SpeechModelMissing
    from realtime.voice.engines import EngineConfigError, engines_from_env

    try:
        engines = engines_from_env(settings)
        engines.load()
    except (SpeechModelMissing, EngineConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    return engines


def mcp(
    campaign: str = typer.Option(..., help="Campaign id the tools answer for."),
    npc: str | None = typer.Option(None, help="The NPC asking (its visibility applies)."),
    session: str | None = typer.Option(None, help="The current session ('last' resolves "
                                       "relative to it)."),
    tier: str | None = typer.Option(None, help="Declare only this tier's tools: FAST, "
                                    "STANDARD or DEEP."),
) -> None:
    """Serve the memory tools over MCP stdio (for an LLM client that spawns this command)."""
    import asyncio
    import logging
    import sys

    from realtime import tools as tl
    from realtime.mcp.server import run_stdio
    from realtime.tools import ToolScope

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout is the protocol
    chosen = tl.Tier(tier.upper()) if tier else None
    asyncio.run(run_stdio(_service(), ToolScope(campaign, session, npc), chosen))
