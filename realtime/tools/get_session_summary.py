"""`memory.get_session_summary`: the summary of the previous, the current or a named session
of the caller's campaign."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SummaryStore
from realtime.tools.args import GetSessionSummaryArgs
from realtime.tools.context import ToolContext
from realtime.tools.scope import ToolScope
from realtime.tools.session_pick import pick_op, source_op


async def run(
    ctx: ToolContext, args: GetSessionSummaryArgs, scope: ToolScope
) -> list[dict[str, Any]]:
    def op() -> Op:
        summary = yield from pick_op(
            args.session, scope,
            lambda campaign, before: SummaryStore.latest.op(
                ctx.summaries, campaign, before_session=before, listener=scope.npc_id),
            lambda sid: SummaryStore.get.op(ctx.summaries, sid, listener=scope.npc_id),
        )
        if summary is None:
            return []
        source = yield from source_op(ctx, summary)
        return [{"text": summary.summary, "key_points": list(summary.key_points),
                 "source": source}]

    return await ctx.run(op(), transaction=False)
