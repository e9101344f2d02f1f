"""`memory.get_recap`: the "previously on…" recap of the previous, the current or a named
session of the caller's campaign, in the words the table heard at the session's start.

A recap retells a session like its summary, so an NPC reads it only where it heard some of
the session (`visibility.session_heard`, composed into the store's read);
its audio file is named (not sent) for a caller that can play it.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import RecapStore
from realtime.tools.args import GetRecapArgs
from realtime.tools.context import ToolContext
from realtime.tools.scope import ToolScope
from realtime.tools.session_pick import pick_op, source_op


async def run(ctx: ToolContext, args: GetRecapArgs, scope: ToolScope) -> list[dict[str, Any]]:
    def op() -> Op:
        recap = yield from pick_op(
            args.session, scope,
            lambda campaign, before: RecapStore.latest.op(
                ctx.recaps, campaign, before_session=before, listener=scope.npc_id),
            lambda sid: RecapStore.get.op(ctx.recaps, sid, listener=scope.npc_id),
        )
        if recap is None:
            return []
        source = yield from source_op(ctx, recap)
        return [{"text": recap.text, "has_audio": bool(recap.audio_path), "source": source}]

    return await ctx.run(op(), transaction=False)
