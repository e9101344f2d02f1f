"""One dispatch for every caller (HTTP, MCP, CLI): validate the arguments, bind the campaign
and the viewer, run the tool, time it. Degraded memory is a result the LLM can read, not a
crash.

The viewer is resolved here, once per call and before any tool runs, so no tool can forget it:
the caller's bound id becomes an NPC of the campaign or None (public only), or the call fails
(`realtime.viewers`). The arguments cannot name a viewer: their models forbid unknown keys."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import InvalidInputError
from realtime.tools import (
    get_recap,
    get_session_summary,
    query_entities,
    search_facts,
    search_graph,
    search_sessions,
)
from realtime.tools.context import ToolContext
from realtime.tools.registry import validate
from realtime.tools.results import degraded_result, ok_answer, refused_result
from realtime.tools.scope import ToolScope
from realtime.tools.tiers import LatencyTracker, refusal

Handler = Callable[[ToolContext, Any, ToolScope], Awaitable[list[dict[str, Any]]]]

HANDLERS: dict[str, Handler] = {
    "memory.search_sessions": search_sessions.run,
    "memory.query_entities": query_entities.run,
    "memory.get_session_summary": get_session_summary.run,
    "memory.get_recap": get_recap.run,
    "memory.search_facts": search_facts.run,
    "memory.search_graph": search_graph.run,
}


async def call_tool(
    ctx: ToolContext,
    name: str,
    arguments: dict[str, Any] | None,
    scope: ToolScope,
    *,
    campaign_of: Callable[[str], Awaitable[str]],
    viewer_of: Callable[[str, str | None], Awaitable[str | None]],
    latencies: LatencyTracker,
) -> dict[str, Any]:
    """Validate, refuse a tool the scope's tier does not offer, run, time. A scope with a
    session but no campaign gets the session's; its NPC is checked by `viewer_of`
    (campaign, bound id) -> the NPC or None."""
    args = validate(name, arguments)
    if scope.tier is not None and not latencies.offers(scope.tier, name):
        return refused_result(name, scope.tier, refusal(name, scope.tier, latencies))
    campaign_id = scope.campaign_id
    if campaign_id is None and scope.session_id:
        try:
            campaign_id = await campaign_of(scope.session_id)
        except DatabaseUnavailableError:
            return degraded_result(name)
    if campaign_id is None:
        raise InvalidInputError(
            "a tool call needs a campaign: bind campaign_id or session_id in its context"
        )
    try:
        npc_id = await viewer_of(campaign_id, scope.npc_id)
    except DatabaseUnavailableError:
        return degraded_result(name)
    scope = dataclasses.replace(scope, campaign_id=campaign_id, npc_id=npc_id)
    start = time.perf_counter()
    try:
        results = await HANDLERS[name](ctx, args, scope)
    except DatabaseUnavailableError:
        return degraded_result(name)
    elapsed = (time.perf_counter() - start) * 1000
    latencies.record(name, elapsed)
    return ok_answer(name, results, elapsed)
