"""`memory.search_sessions`: what was said in past sessions (see `realtime/session_search/`)."""

from __future__ import annotations

from typing import Any

from realtime.session_search import search_sessions
from realtime.tools.args import SearchSessionsArgs
from realtime.tools.context import ToolContext
from realtime.tools.results import CHARS_PER_TOKEN, RESULT_SEPARATOR_CHARS, envelope_chars
from realtime.tools.scope import ToolScope

NAME = "memory.search_sessions"


def results_tokens(max_tokens: int, top_k: int) -> int:
    """The tokens left for the results of an answer of `max_tokens` once its envelope is paid
    (`results.envelope_chars`, whole tokens, rounded against the results): `max_tokens` is the
    whole answer the model reads, and the voice loop cuts an answer past 6,000 characters
    (1,500 tokens' worth): an answer past it would lose its last result's citation.
    (`reader_chars` counts a separator after every result, one more than is sent.)"""
    reserve = envelope_chars(NAME, top_k) - RESULT_SEPARATOR_CHARS
    return max(1, max_tokens - -(-reserve // CHARS_PER_TOKEN))


def results_budget(args: SearchSessionsArgs) -> SearchSessionsArgs:
    """The arguments with `max_tokens` cut to what is left for the results."""
    return args.model_copy(update={"max_tokens": results_tokens(args.max_tokens, args.top_k)})


async def run(ctx: ToolContext, args: SearchSessionsArgs, scope: ToolScope) -> list[dict[str, Any]]:
    # The NPC's recall (dispatch resolved it: an NPC of the campaign, or None, the DM's or an
    # unscoped caller's, who recall everything).
    found = await search_sessions(ctx, results_budget(args), scope.campaign_id or "",
                                  ctx.search, listener=scope.npc_id)
    ctx.search_counters.count(found.text_leg)
    return found.results
