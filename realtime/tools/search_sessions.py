"""`memory.search_sessions`: what was said in past sessions (see `realtime/session_search/`)."""

from __future__ import annotations

from typing import Any

from realtime.session_search import search_sessions
from realtime.tools.args import SearchSessionsArgs
from realtime.tools.context import ToolContext
from realtime.tools.scope import ToolScope


async def run(ctx: ToolContext, args: SearchSessionsArgs, scope: ToolScope) -> list[dict[str, Any]]:
    # The NPC's recall (dispatch resolved it: an NPC of the campaign, or None, the DM's or an
    # unscoped caller's, who recall everything).
    found = await search_sessions(ctx, args, scope.campaign_id or "", ctx.search,
                                  listener=scope.npc_id)
    ctx.search_counters.count(found.text_leg)
    return found.results
