"""Campaigns and their sessions: the timeline, a session's summary and recap (text and audio),
and the reprocess button."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse

from glyphoxa_pipelines.memory import (
    CampaignStore,
    NotFoundError,
    SessionStore,
    SummaryStore,
)
from realtime.api.deps import service
from realtime.api.routes import sessions as session_routes
from realtime.dashboard.templates import page
from realtime.service import MemoryService

router = APIRouter()


async def campaign_or_404(svc: MemoryService, campaign_id: str) -> Any:
    camp = await svc.run(CampaignStore.get.op(svc.campaigns, campaign_id), transaction=False)
    if camp is None:
        raise NotFoundError(f"unknown campaign {campaign_id!r}")
    return camp


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, svc: MemoryService = Depends(service)) -> HTMLResponse:
    camps = await svc.run(CampaignStore.list.op(svc.campaigns), transaction=False)
    return page(request, "index.html", campaigns=camps)


@router.get("/c/{campaign_id}", response_class=HTMLResponse)
async def campaign_page(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    sessions = await svc.run(
        SessionStore.list_sessions.op(svc.sessions, campaign_id, 500), transaction=False
    )
    sessions.reverse()  # the timeline reads oldest first
    return page(request, "campaign.html", campaign=camp, sessions=sessions,
                launch=request.app.state.reprocessor.launches.get(campaign_id))


@router.get("/c/{campaign_id}/s/{session_id}", response_class=HTMLResponse)
async def session_page(
    request: Request, campaign_id: str, session_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    session = await svc.run(SessionStore.get_session.op(svc.sessions, session_id))
    if session is None or session.campaign_id != campaign_id:
        raise NotFoundError(f"unknown session {session_id!r} in campaign {campaign_id!r}")
    summary = await svc.run(SummaryStore.get.op(svc.tools.summaries, session_id),
                            transaction=False)
    try:  # the API's own recap route: the same text, and audio only when the file exists
        recap = await session_routes.get_recap(session_id, svc)
    except NotFoundError:
        recap = None
    return page(request, "session.html", campaign=camp, session=session, summary=summary,
                recap=recap, launch=request.app.state.reprocessor.launches.get(campaign_id))


@router.get("/c/{campaign_id}/s/{session_id}/recap/audio")
async def recap_audio(
    campaign_id: str, session_id: str, svc: MemoryService = Depends(service)
) -> FileResponse:
    """The recap's audio under the dashboard's path, so the session cookie opens it; the file
    comes from the API's own audio route."""
    session = await svc.run(SessionStore.get_session.op(svc.sessions, session_id))
    if session is None or session.campaign_id != campaign_id:
        raise NotFoundError(f"unknown session {session_id!r} in campaign {campaign_id!r}")
    return await session_routes.get_recap_audio(session_id, svc)


@router.post("/c/{campaign_id}/reprocess", response_class=HTMLResponse)
async def reprocess(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    launch = request.app.state.reprocessor.launch(campaign_id)
    return page(request, "reprocess_status.html", campaign=camp, launch=launch)


@router.get("/c/{campaign_id}/reprocess", response_class=HTMLResponse)
async def reprocess_status(
    request: Request, campaign_id: str, svc: MemoryService = Depends(service)
) -> HTMLResponse:
    camp = await campaign_or_404(svc, campaign_id)
    return page(request, "reprocess_status.html", campaign=camp,
                launch=request.app.state.reprocessor.launches.get(campaign_id))
