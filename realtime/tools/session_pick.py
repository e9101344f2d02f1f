"""Which session a per-session tool means ("last", "current" or an id) and the citation it
gives, shared by `memory.get_session_summary` and `memory.get_recap`: both read one row per
session, never across campaigns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SessionStore
from realtime.tools.context import ToolContext
from realtime.tools.results import iso
from realtime.tools.scope import ToolScope

LAST = ("last", "previous", "last session", "latest")


class SessionRow(Protocol):
    campaign_id: str
    session_id: str
    method: str


def pick_op(
    which: str,
    scope: ToolScope,
    latest: Callable[[str, str | None], Op[Any]],
    by_session: Callable[[str], Op[Any]],
) -> Op[Any]:
    """The row for `which`: the latest before the caller's session, the caller's session, or
    a named one; None when there is none or it belongs to another campaign (as if it did
    not exist). The stores' reads take the NPC asking (`scope.npc_id`) and skip sessions it
    heard nothing of (`visibility.session_heard`)."""
    campaign = scope.campaign_id or ""
    key = which.lower()
    if key in LAST:
        return (yield from latest(campaign, scope.session_id))
    sid = scope.session_id if key == "current" else which
    row = yield from by_session(sid or "")
    return row if row is not None and row.campaign_id == campaign else None


def source_op(ctx: ToolContext, row: SessionRow) -> Op[dict[str, Any]]:
    """The citation of a per-session result: session id, title, start and method."""
    session = yield from SessionStore.get_session.op(ctx.sessions, row.session_id)
    return {
        "session_id": row.session_id,
        "title": session.title if session else "",
        "when": iso(session.started_at) if session else None,
        "method": row.method,
    }
