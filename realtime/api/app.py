"""The HTTP app factory: FastAPI routers, JSON errors, bearer auth, MCP over streamable HTTP.

`create_app(service)` takes an unopened `MemoryService` (tests build one on a temporary
database); the lifespan opens it, runs the MCP session manager, and closes both. Every error
the API returns, from a handler, a guard or the router itself (404, 405, an unparseable body),
has the one documented shape `{"error": <kind>, "detail": <text>}`; an unexpected exception
is a 500 of that shape whose detail quotes nothing (it could quote the transcript).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError
from realtime.api.limits import MAX_BODY_BYTES
from realtime.api.request_guards import (
    BodyLimitMiddleware,
    HostGuardMiddleware,
    PathTextMiddleware,
)
from realtime.api.routes import context, dm, entries, health, presence, sessions, tools
from realtime.auth import BearerAuthMiddleware, check_bind, is_loopback
from realtime.dashboard import DashboardGate, install_dashboard
from realtime.service import MemoryService
from realtime.tools import ToolInputError, UnknownToolError

if TYPE_CHECKING:
    from realtime.voice.engines import VoiceEngines

log = logging.getLogger(__name__)


def _error(status: int, error: str, detail: Any, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail, **extra}, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        ]
        return _error(422, "invalid request", "; ".join(problems), problems=problems)

    @app.exception_handler(ToolInputError)
    async def _tool_input(_: Request, exc: ToolInputError) -> JSONResponse:
        return _error(422, "invalid tool arguments", str(exc), problems=exc.problems)

    @app.exception_handler(UnknownToolError)
    async def _unknown_tool(_: Request, exc: UnknownToolError) -> JSONResponse:
        return _error(404, "unknown tool", str(exc))

    @app.exception_handler(NotFoundError)
    async def _not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return _error(404, "not found", str(exc))

    @app.exception_handler(InvalidInputError)
    async def _bad_input(_: Request, exc: InvalidInputError) -> JSONResponse:
        return _error(422, "invalid input", str(exc))

    @app.exception_handler(DatabaseUnavailableError)
    async def _unavailable(_: Request, exc: DatabaseUnavailableError) -> JSONResponse:
        return _error(503, "memory degraded", str(exc), degraded=True)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "not found", 405: "method not allowed", 413: "request too large"}
        kind = kinds.get(exc.status_code, "invalid request" if exc.status_code < 500
                         else "internal error")
        response = _error(exc.status_code, kind, str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path,
                      exc_info=exc)
        return _error(500, "internal error", "the service failed on this request; its log "
                      "has the cause")


def create_app(
    service: MemoryService,
    *,
    token: str | None = None,
    mount_mcp: bool = True,
    host: str = "127.0.0.1",
    open_service: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int | None = None,
    voice: VoiceEngines | None = None,
) -> FastAPI:
    """The ASGI app for a server bound to `host`. With `token`, every path but /healthz needs
    the bearer token; without one, `host` must be loopback (`AuthConfigError` otherwise), and
    requests must name a loopback host or one of `allowed_hosts` (default: the comma-separated
    GLYPHOXA_ALLOWED_HOSTS) in their Host header. The checks live here, not in the CLI, so every
    way of building the app (`glyphoxa serve`, `uvicorn --factory`) applies them. With `voice`
    engines the voice routes (/v1/voice) are mounted; without, nothing of the voice loop is
    imported."""
    check_bind(host, token)
    if allowed_hosts is None:
        allowed_hosts = [
            h for h in os.environ.get("GLYPHOXA_ALLOWED_HOSTS", "").split(",") if h.strip()
        ]
    mcp_manager = None
    if mount_mcp:
        from realtime.mcp.server import http_session_manager

        mcp_manager, mcp_asgi = http_session_manager(service, host=host,
                                                     allowed_hosts=allowed_hosts)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if open_service:
                await service.open()
                stack.push_async_callback(service.close)
            if mcp_manager is not None:
                await stack.enter_async_context(mcp_manager.run())
            yield

    app = FastAPI(
        title="Glyphoxa realtime memory",
        version="1",
        description="Live transcript, NPC hot context, speculative pre-fetch and memory tools.",
        lifespan=lifespan,
    )
    app.state.service = service
    install_error_handlers(app)
    for router in (health, sessions, entries, context, tools, dm, presence):
        app.include_router(router.router)
    install_dashboard(app)
    if voice is not None:
        from realtime.voice.http_api import voice_router

        app.include_router(voice_router(lambda: service, voice))
    if mount_mcp:
        from starlette.routing import Route

        app.router.routes.append(Route("/mcp", endpoint=mcp_asgi, methods=["GET", "POST",
                                                                           "DELETE"]))
    # Added innermost first: a request meets the Host check, then the dashboard's login and
    # CSRF gate (its cookie counts as the token on /dashboard paths), then auth, then the body
    # limit, then the path text check.
    app.add_middleware(PathTextMiddleware)
    app.add_middleware(BodyLimitMiddleware, limit=max_body_bytes or MAX_BODY_BYTES)
    if token:
        app.add_middleware(BearerAuthMiddleware, token=token)
    app.add_middleware(DashboardGate, token=token)
    if is_loopback(host):
        app.add_middleware(HostGuardMiddleware, allowed_hosts=allowed_hosts,
                           loopback_socket=not token)
    return app


def app_from_env() -> FastAPI:
    """App factory for `uvicorn --factory` (several workers): settings from the environment.
    Refuses (`AuthConfigError`) a non-loopback GLYPHOXA_BIND_HOST without a token, as
    `glyphoxa serve` does; set GLYPHOXA_BIND_HOST to the address uvicorn binds."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url

    settings = Settings.from_env()
    host = os.environ.get("GLYPHOXA_BIND_HOST", "127.0.0.1")
    check_bind(host, settings.api_token)  # before the database is touched: fail fast
    voice = None
    if os.environ.get("GLYPHOXA_VOICE", "0") == "1":
        from realtime.voice.engines import engines_from_env

        voice = engines_from_env(settings)
        voice.load()
    service = MemoryService(resolve_url(settings), settings=settings)
    return create_app(service, token=settings.api_token, host=host, voice=voice,
                      mount_mcp=os.environ.get("GLYPHOXA_MCP_HTTP", "1") != "0")
