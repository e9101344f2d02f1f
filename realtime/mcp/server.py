"""The memory tools through the official MCP SDK (low-level `Server`): stdio for
`glyphoxa mcp`, streamable HTTP mounted at /mcp in `glyphoxa serve`.

Who asks is bound outside the tool arguments, as over HTTP: stdio binds campaign / session /
NPC from the command line; over HTTP the `X-Glyphoxa-Campaign`, `X-Glyphoxa-Session`,
`X-Glyphoxa-Npc` headers (or `campaign`, `session`, `npc` query parameters) bind them per
request. `X-Glyphoxa-Tier` (or `tier`) limits tools/list to a budget tier, and a call to a
tool outside it is refused (a tool result with is_error).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError
from realtime import tools as tl
from realtime.api.limits import check_json
from realtime.auth import is_loopback
from realtime.service import MemoryService
from realtime.tools import ToolScope

log = logging.getLogger(__name__)


def _from_request(request: Any, header: str, param: str) -> str | None:
    if request is None:
        return None
    value = request.headers.get(header) or request.query_params.get(param)
    return value or None


def build_server(
    service: MemoryService,
    *,
    bound: ToolScope | None = None,
    tier: tl.Tier | None = None,
) -> Server[Any]:
    """An MCP server exposing the memory tools of `service`."""

    def scope_of(ctx: Any) -> tuple[ToolScope, tl.Tier | None]:
        request = getattr(ctx, "request", None)
        b = bound or ToolScope()
        scope = ToolScope(
            _from_request(request, "x-glyphoxa-campaign", "campaign") or b.campaign_id,
            _from_request(request, "x-glyphoxa-session", "session") or b.session_id,
            _from_request(request, "x-glyphoxa-npc", "npc") or b.npc_id,
        )
        wanted = _from_request(request, "x-glyphoxa-tier", "tier")
        return scope, tl.Tier(wanted.upper()) if wanted else tier

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        _, chosen = scope_of(ctx)
        specs = (
            tl.tools_for_tier(chosen, service.latencies)
            if chosen
            else sorted(tl.TOOLS.values(), key=lambda s: s.name)
        )
        return types.ListToolsResult(
            tools=[
                types.Tool(name=s.name, description=s.description, input_schema=s.input_schema())
                for s in specs
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Every failure is a tool result the LLM can read (is_error), never a JSON-RPC error:
        # the SDK would send an unexpected exception as code 0 with its raw text, which can
        # quote SQL and the transcript.
        scope, chosen = scope_of(ctx)
        scope = ToolScope(scope.campaign_id, scope.session_id, scope.npc_id, chosen)
        try:
            check_json(params.arguments or {})
            result = await service.call_tool(params.name, params.arguments, scope)
        except (tl.ToolInputError, tl.UnknownToolError, InvalidInputError, NotFoundError,
                ValueError) as exc:
            return _tool_error(str(exc))
        except DatabaseUnavailableError:
            return _tool_error("memory is unavailable right now; answer from what you "
                               "already know")
        except Exception:
            log.exception("memory tool %s failed", params.name)
            return _tool_error("the memory tool failed (internal error)")
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(result, default=str))],
            structured_content=json.loads(json.dumps(result, default=str)),
            is_error=result.get("status") != "ok",
        )

    return Server(
        "glyphoxa-memory",
        version="1",
        instructions="Long-term memory of the campaign, as the bound NPC knows it.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        structured_content={"status": "error", "error": message},
        is_error=True,
    )


def http_session_manager(
    service: MemoryService, *, host: str = "127.0.0.1", allowed_hosts: Sequence[str] = ()
) -> tuple[StreamableHTTPSessionManager, StreamableHTTPASGIApp]:
    """Streamable HTTP transport for mounting in the FastAPI app (stateless: any replica can
    answer any request). DNS-rebinding protection when bound to loopback; `allowed_hosts` are
    the extra host names the JSON API answers too."""
    security = None
    if is_loopback(host):
        extra = [h.strip().lower() for h in allowed_hosts if h.strip()]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost",
                           *extra, *(f"{h}:*" for h in extra)],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
                             *(f"http://{h}:*" for h in extra)],
        )
    manager = StreamableHTTPSessionManager(
        app=build_server(service), stateless=True, json_response=True,
        security_settings=security,
    )
    return manager, StreamableHTTPASGIApp(manager)


async def run_stdio(service: MemoryService, bound: ToolScope, tier: tl.Tier | None) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(service, bound=bound, tier=tier)
    await service.open()
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await service.close()
