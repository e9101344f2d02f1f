"""The review queue: each pending fact confirmed, rejected or corrected in one click, and each
new spelling of a known entity the pipeline heard accepted as an alias or dismissed for good.

The buttons call the JSON API's own DM routes (`realtime.api.routes.dm`), so a confirmation
here is the API's confirmation: canon, DM-confirmed, caches dropped, in the next hot context.
An edit is the API's retcon with a replacement: the extracted fact stays as history, the
corrected one is the DM's.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from glyphoxa_pipelines.memory import KnowledgeGraph, NotFoundError
from realtime.api.deps import service
from realtime.api.routes import dm
from realtime.dashboard.forms import body
from realtime.dashboard.routes.campaigns import campaign_or_404
from realtime.dashboard.templates import page
from realtime.schemas import FactIn, RetconIn, SpellingIn
from realtime.service import MemoryService

router = APIRouter()


@router.get("/c/{campaign_id}/review", response_class=HTMLResponse)
async def review_page(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    queue = await dm.review_queue(campaign_id, svc)
    return page(request, "review.html", campaign=camp, facts=queue["facts"],
                spellings=queue["spellings"])


@router.post("/c/{campaign_id}/review/spellings/{entity_id}/{answer}",
             response_class=HTMLResponse)
async def spelling(
    request: Request,
    campaign_id: str,
    entity_id: str,
    answer: Literal["accept", "dismiss"],
    spelling: str = Form(...),
    row: int = Form(0, ge=0),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    """The API's own answer routes: an accepted spelling is the entity's alias at once."""
    said = body(SpellingIn, spelling=spelling)
    if answer == "accept":
        out = await dm.accept_spelling(campaign_id, entity_id, said, svc)
        outcome = f"{out['aliases'][-1]} is now an alias of {out['name']}"  # as heard
    else:
        out = await dm.dismiss_spelling(campaign_id, entity_id, said, svc)
        outcome = f"{out['spelling']} dismissed"
    return page(request, "spelling_done.html", row=row, outcome=outcome, answer=answer)


@router.post("/c/{campaign_id}/review/{fact_id}/confirm", response_class=HTMLResponse)
async def confirm(
    request: Request, campaign_id: str, fact_id: int, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    await dm.confirm_fact(campaign_id, fact_id, svc)
    return page(request, "review_done.html", fact_id=fact_id, outcome="confirmed")


@router.post("/c/{campaign_id}/review/{fact_id}/reject", response_class=HTMLResponse)
async def reject(
    request: Request, campaign_id: str, fact_id: int, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    await dm.reject_fact(campaign_id, fact_id, svc)
    return page(request, "review_done.html", fact_id=fact_id, outcome="rejected")


@router.post("/c/{campaign_id}/review/{fact_id}/edit", response_class=HTMLResponse)
async def edit(
    request: Request,
    campaign_id: str,
    fact_id: int,
    source: str = Form(...),
    relation: str = Form(...),
    target: str = Form(...),
    evidence: str = Form(""),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    old = await svc.run(KnowledgeGraph.get_relationship.op(svc.graph, campaign_id, fact_id),
                        transaction=False)
    if old is None:
        raise NotFoundError(f"unknown fact {fact_id} in campaign {campaign_id!r}")
    replacement = body(FactIn, source=source, relation=relation, target=target,
                       evidence=evidence, visibility=old.visibility, known_by=old.known_by,
                       session_id=old.session_id)
    out = await dm.retcon_fact(campaign_id, fact_id, body(RetconIn, replacement=replacement),
                               svc)
    return page(request, "review_done.html", fact_id=fact_id, outcome="corrected",
                replacement=out["replacement"])
