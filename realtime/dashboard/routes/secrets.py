"""Secrets and visibility: every non-public fact, who sees it now, and the reveal.

"Who sees it" is the visibility rule run as each NPC (`reads.who_sees_op`), not a reading of
`known_by` here; the reveal and the visibility change are the JSON API's DM routes.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from realtime.api.deps import service
from realtime.api.routes import dm
from realtime.dashboard.forms import body
from realtime.dashboard.reads import hidden_facts_op, who_sees_op
from realtime.dashboard.routes.campaigns import campaign_or_404
from realtime.dashboard.routes.npcs import campaign_npcs
from realtime.dashboard.templates import page
from realtime.schemas import RevealIn, VisibilityIn
from realtime.service import MemoryService

router = APIRouter()


async def _secrets_page(request: Request, svc: MemoryService, campaign_id: str
                        ) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    facts = await svc.run(hidden_facts_op(campaign_id), transaction=False)
    npcs = await campaign_npcs(svc, campaign_id)
    seen = await svc.run(who_sees_op(campaign_id, [n.id for n in npcs],
                                     [f.relationship.id for f in facts]), transaction=False)
    names = {n.id: n.name for n in npcs}
    return page(request, "secrets.html", campaign=camp, facts=facts, npcs=npcs, seen=seen,
                names=names)


@router.get("/c/{campaign_id}/secrets", response_class=HTMLResponse)
async def secrets_page(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    return await _secrets_page(request, svc, campaign_id)


@router.post("/c/{campaign_id}/secrets/{fact_id}/reveal", response_class=HTMLResponse)
async def reveal(
    request: Request,
    campaign_id: str,
    fact_id: int,
    to: list[str] = Form(default=[]),
    everyone: str = Form(""),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    """To the ticked NPCs, or (the "reveal to all" button) public."""
    await dm.reveal(campaign_id, fact_id, body(RevealIn, to=None if everyone else to), svc)
    return await _secrets_page(request, svc, campaign_id)


@router.post("/c/{campaign_id}/secrets/{fact_id}/visibility", response_class=HTMLResponse)
async def visibility(
    request: Request,
    campaign_id: str,
    fact_id: int,
    visibility: str = Form(...),
    known_by: list[str] = Form(default=[]),
    svc: MemoryService = Depends(service),
) -> HTMLResponse:
    await dm.set_visibility(campaign_id, fact_id,
                            body(VisibilityIn, visibility=visibility, known_by=known_by), svc)
    return await _secrets_page(request, svc, campaign_id)
