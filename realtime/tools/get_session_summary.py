"""`memory.get_session_summary`: the summary of the previous, the current or a named session
of the caller's campaign."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SessionStore, SummaryStore
from realtime.tools.args import GetSessionSummaryArgs
from realtime.tools.context import ToolContext
from realtime.tools.results import iso
from realtime.tools.scope import ToolScope

LAST = ("last", "previous", "last session", "latest")


async def run(
    ctx: ToolContext, args: GetSessionSummaryArgs, scope: ToolScope
) -> list[dict[str, Any]]:
    campaign = scope.campaign_id or ""
    which = args.session.lower()

    def op() -> Op:
        if which in LAST:
            summary = yield from SummaryStore.latest.op(
                ctx.summaries, campaign, before_session=scope.session_id
            )
        else:
            sid = scope.session_id if which == "current" else args.session
            summary = yield from SummaryStore.get.op(ctx.summaries, sid or "")
            if summary is not None and summary.campaign_id != campaign:
                summary = None  # another campaign's session: as if it did not exist
        if summary is None:
            return []
        session = yield from SessionStore.get_session.op(ctx.sessions, summary.session_id)
        return [
            {
                "text": summary.summary,
                "key_points": list(summary.key_points),
                "source": {
                    "session_id": summary.session_id,
                    "title": session.title if session else "",
                    "when": iso(session.started_at) if session else None,
                    "method": summary.method,
                },
            }
        ]

    return await ctx.run(op(), transaction=False)
