"""`memory.get_recap`: the "previously on…" recap of the previous, the current or a named
session of the caller's campaign, in the words the table heard at the session's start.

A recap retells what the whole party saw, like a session summary, so every NPC may read it;
its audio file is named (not sent) for a caller that can play it.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import RecapStore, SessionStore
from realtime.tools.args import GetRecapArgs
from realtime.tools.context import ToolContext
from realtime.tools.get_session_summary import LAST
from realtime.tools.results import iso
from realtime.tools.scope import ToolScope


async def run(ctx: ToolContext, args: GetRecapArgs, scope: ToolScope) -> list[dict[str, Any]]:
    campaign = scope.campaign_id or ""
    which = args.session.lower()

    def op() -> Op:
        if which in LAST:
            recap = yield from RecapStore.latest.op(
                ctx.recaps, campaign, before_session=scope.session_id
            )
        else:
            sid = scope.session_id if which == "current" else args.session
            recap = yield from RecapStore.get.op(ctx.recaps, sid or "")
            if recap is not None and recap.campaign_id != campaign:
                recap = None  # another campaign's session: as if it did not exist
        if recap is None:
            return []
        session = yield from SessionStore.get_session.op(ctx.sessions, recap.session_id)
        return [
            {
                "text": recap.text,
                "has_audio": bool(recap.audio_path),
                "source": {
                    "session_id": recap.session_id,
                    "title": session.title if session else "",
                    "when": iso(session.started_at) if session else None,
                    "method": recap.method,
                },
            }
        ]

    return await ctx.run(op(), transaction=False)
