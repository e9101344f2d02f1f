"""Entities and their facts: search, edit names, aliases and attributes, merge a duplicate,
retcon a fact with its history in view.

Edits go through the JSON API's DM routes (`realtime.api.routes.dm`); the merge, which the
API does not offer, is one DM edit (`MemoryService.edit`: one transaction, caches dropped)
composed of store operations (`realtime.dashboard.merge`).
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, Response

from glyphoxa_pipelines.memory import KnowledgeGraph, NotFoundError
from realtime.api.deps import service
from realtime.api.routes import dm
from realtime.dashboard.forms import attribute_lines, body, name_list
from realtime.dashboard.merge import merge_entities_op
from realtime.dashboard.reads import entity_facts_op
from realtime.dashboard.routes.campaigns import campaign_or_404
from realtime.dashboard.templates import page
from realtime.schemas import EntityPatch
from realtime.service import MemoryService

router = APIRouter()


@router.get("/c/{campaign_id}/entities", response_class=HTMLResponse)
async def entities_page(
    request: Request,
    campaign_id: str,
    q: str = Query("", max_length=200),
    type: str = Query("", max_length=50),  # noqa: A002 - the query parameter's name
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    found = await svc.run(KnowledgeGraph.find_entities.op(
        svc.graph, campaign_id, type=type or None, name=q or None, limit=500),
        transaction=False)
    all_types = sorted({e.type for e in await svc.run(
        KnowledgeGraph.find_entities.op(svc.graph, campaign_id), transaction=False)})
    template = "entity_rows.html" if request.headers.get("hx-request") else "entities.html"
    return page(request, template, campaign=camp, entities=found, q=q, type=type,
                types=all_types)


async def _entity_page(request: Request, svc: MemoryService, campaign_id: str,
                       entity_id: str, status_code: int = 200) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    ent = await svc.run(KnowledgeGraph.get_entity.op(svc.graph, campaign_id, entity_id),
                        transaction=False)
    if ent is None:
        raise NotFoundError(f"unknown entity {entity_id!r} in campaign {campaign_id!r}")
    facts = await svc.run(entity_facts_op(campaign_id, entity_id), transaction=False)
    others = [e for e in await svc.run(KnowledgeGraph.find_entities.op(
        svc.graph, campaign_id, type=ent.type), transaction=False) if e.id != ent.id]
    return page(request, "entity.html", status_code, campaign=camp, entity=ent, facts=facts,
                others=others)


@router.get("/c/{campaign_id}/entities/{entity_id}", response_class=HTMLResponse)
async def entity_page(
    request: Request, campaign_id: str, entity_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    return await _entity_page(request, svc, campaign_id, entity_id)


@router.post("/c/{campaign_id}/entities/{entity_id}", response_class=HTMLResponse)
async def update_entity(
    request: Request,
    campaign_id: str,
    entity_id: str,
    name: str = Form(...),
    aliases: str = Form(""),
    attributes: str = Form(""),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    """Names, aliases and attributes as the form shows them: an attribute line removed from
    the form is removed from the entity."""
    ent = await svc.run(KnowledgeGraph.get_entity.op(svc.graph, campaign_id, entity_id),
                        transaction=False)
    if ent is None:
        raise NotFoundError(f"unknown entity {entity_id!r} in campaign {campaign_id!r}")
    attrs = attribute_lines(attributes)
    # Stripped: a blank name must be the form's 422, not the database's CHECK.
    patch = body(EntityPatch, name=name.strip(), aliases=name_list(aliases), attributes=attrs,
                 remove_attributes=[k for k in ent.attributes if k not in attrs])
    await dm.update_entity(campaign_id, entity_id, patch, svc)
    return await _entity_page(request, svc, campaign_id, entity_id)


@router.post("/c/{campaign_id}/entities/{entity_id}/merge")
async def merge(
    campaign_id: str,
    entity_id: str,
    into: str = Form(...),
    svc: MemoryService = Depends(service),
) -> Response:
    keep = await svc.edit(campaign_id, merge_entities_op(svc.graph, campaign_id, entity_id,
                                                         into), names=True)
    # the merged entity's page is gone: htmx follows to the kept one's
    return Response(status_code=204, headers={
        "HX-Redirect": f"/dashboard/c/{campaign_id}/entities/{keep.id}"})


@router.post("/c/{campaign_id}/entities/{entity_id}/facts/{fact_id}/retcon",
             response_class=HTMLResponse)
async def retcon(
    request: Request, campaign_id: str, entity_id: str, fact_id: int,
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    await dm.retcon_fact(campaign_id, fact_id, None, svc)
    return await _entity_page(request, svc, campaign_id, entity_id)
