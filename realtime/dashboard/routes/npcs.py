"""What an NPC would know: its hot context for a session and a recall preview, both read the
way the NPC's own turn reads them (`MemoryService.hot_context`, `MemoryService.call_tool` with
the NPC bound), so the DM sees exactly what the NPC would be given, secret marks included."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from glyphoxa_pipelines.memory import Entity, InvalidInputError, KnowledgeGraph, SessionStore
from realtime.api.deps import service
from realtime.dashboard.routes.campaigns import campaign_or_404
from realtime.dashboard.templates import page
from realtime.service import MemoryService
from realtime.tools import ToolScope

router = APIRouter()

# The tools a preview may call: the read tools an NPC's turn uses, none that writes.
RECALL_TOOLS = ("memory.search_facts", "memory.query_entities", "memory.search_sessions",
                "memory.search_graph")


async def campaign_npcs(svc: MemoryService, campaign_id: str) -> list[Entity]:
    return await svc.run(KnowledgeGraph.find_entities.op(svc.graph, campaign_id, type="npc"),
                         transaction=False)


@router.get("/c/{campaign_id}/npcs", response_class=HTMLResponse)
async def npcs_page(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    return page(request, "npcs.html", campaign=camp, npcs=await campaign_npcs(svc, campaign_id))


@router.get("/c/{campaign_id}/npcs/{npc_id}", response_class=HTMLResponse)
async def npc_page(
    request: Request,
    campaign_id: str,
    npc_id: str,
    session: str = Query("", max_length=200),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    """The hot context the NPC's next turn would get in `session` (default: the newest live
    session, else the newest)."""
    camp = await campaign_or_404(svc, campaign_id)
    await svc.viewer(campaign_id, npc_id)  # unknown -> 404, not an NPC -> 422, as the API
    npc = await svc.run(KnowledgeGraph.get_entity.op(svc.graph, campaign_id, npc_id),
                        transaction=False)
    sessions = await svc.run(SessionStore.list_sessions.op(svc.sessions, campaign_id, 100),
                             transaction=False)
    chosen = next((s for s in sessions if s.id == session), None)
    if session and chosen is None:
        raise InvalidInputError(f"session {session!r} is not one of {campaign_id!r}'s")
    chosen = chosen or next((s for s in sessions if s.status == "live"), None) or (
        sessions[0] if sessions else None)
    context: dict[str, Any] | None = None
    if chosen is not None:
        # not counted as a turn: the NPC's real first turn keeps its first-turn framing
        context = (await svc.hot_context(chosen.id, npc_id, count_turn=False)).as_dict()
    return page(request, "npc.html", campaign=camp, npc=npc, sessions=sessions,
                session=chosen, context=context, tools=RECALL_TOOLS)


@router.get("/c/{campaign_id}/npcs/{npc_id}/recall", response_class=HTMLResponse)
async def recall_preview(
    request: Request,
    campaign_id: str,
    npc_id: str,
    q: str = Query(..., min_length=1, max_length=500),
    tool: str = Query(RECALL_TOOLS[0]),
    session: str = Query("", max_length=200),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    """A memory tool called with the NPC bound, as its turn would call it (no tier: every
    tool may run, as for an operator)."""
    if tool not in RECALL_TOOLS:
        raise InvalidInputError(f"tool: choose one of {', '.join(RECALL_TOOLS)}")
    scope = ToolScope(campaign_id, session or None, npc_id, None)
    result = await svc.call_tool(tool, {"query": q}, scope)
    return page(request, "recall.html", result=result, tool=tool, q=q)
