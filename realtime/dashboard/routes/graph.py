"""The knowledge graph as a picture: cytoscape draws the elements `graph.json` returns,
filtered by entity type, by what one NPC may see (the visibility rule, as that NPC), and by
the session that produced the facts."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from glyphoxa_pipelines.memory import KnowledgeGraph, SessionStore
from realtime.api.deps import fast_json, service
from realtime.dashboard.graph_view import graph_elements
from realtime.dashboard.reads import graph_facts_op
from realtime.dashboard.routes.campaigns import campaign_or_404
from realtime.dashboard.routes.npcs import campaign_npcs
from realtime.dashboard.templates import page
from realtime.service import MemoryService

router = APIRouter()


@router.get("/c/{campaign_id}/graph", response_class=HTMLResponse)
async def graph_page(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    entities = await svc.run(KnowledgeGraph.find_entities.op(svc.graph, campaign_id),
                             transaction=False)
    sessions = await svc.run(SessionStore.list_sessions.op(svc.sessions, campaign_id, 500),
                             transaction=False)
    return page(request, "graph.html", campaign=camp, npcs=await campaign_npcs(svc, campaign_id),
                sessions=sessions, types=sorted({e.type for e in entities}))


@router.get("/c/{campaign_id}/graph.json")
async def graph_json(
    campaign_id: str,
    type: list[str] = Query(default=[]),  # noqa: A002 - the query parameter's name
    npc: str = Query("", max_length=200),
    session: str = Query("", max_length=200),
    svc: MemoryService = Depends(service),
) -> Any:
    await campaign_or_404(svc, campaign_id)
    # An NPC's view goes through the viewer check (unknown -> 404, not an NPC -> 422);
    # no NPC chosen is the DM's view, everything.
    viewer = await svc.viewer(campaign_id, npc) if npc else None
    entities = await svc.run(KnowledgeGraph.find_entities.op(svc.graph, campaign_id),
                             transaction=False)
    facts = await svc.run(graph_facts_op(campaign_id, viewer, session or None),
                          transaction=False)
    return fast_json(graph_elements(entities, facts, types=type,
                                    only_connected=bool(npc or session)))
