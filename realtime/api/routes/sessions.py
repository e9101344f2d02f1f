"""Campaigns and sessions: start, end, list, scene, and the recap a session opens with."""

from __future__ import annotations

import mimetypes
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse

from glyphoxa_pipelines.memory import Campaign, NotFoundError, Recap, RecapStore, SessionStore
from realtime.api.deps import service
from realtime.schemas import CampaignIn, SceneIn, SessionIn
from realtime.service import MemoryService

router = APIRouter(prefix="/v1", tags=["sessions"])


@router.put("/campaigns/{campaign_id}", status_code=200)
async def put_campaign(
    campaign_id: str, body: CampaignIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    if body.id != campaign_id:
        from glyphoxa_pipelines.memory import InvalidInputError

        raise InvalidInputError(f"body id {body.id!r} differs from the path's {campaign_id!r}")
    camp = await svc.upsert_campaign(
        Campaign(body.id, body.name, body.description, body.system)
    )
    return asdict(camp)


@router.post("/campaigns/{campaign_id}/sessions", status_code=201)
async def start_session(
    campaign_id: str, body: SessionIn | None = None, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    body = body or SessionIn()
    session = await svc.start_session(
        campaign_id,
        body.session_id,
        title=body.title,
        started_at=body.started_at,
        scene=body.scene,
    )
    return asdict(session)


@router.get("/campaigns/{campaign_id}/sessions")
async def list_sessions(
    campaign_id: str,
    status: str | None = Query(None, pattern="^(live|ended)$"),
    limit: int = Query(20, ge=1, le=500),
    svc: MemoryService = Depends(service),
) -> dict[str, Any]:
    sessions = await svc.run(
        SessionStore.list_sessions.op(svc.sessions, campaign_id, limit, status=status)
    )
    return {"campaign_id": campaign_id, "sessions": [asdict(s) for s in sessions]}


@router.get("/sessions/{session_id}")
async def get_session(session_id: str, svc: MemoryService = Depends(service)) -> dict[str, Any]:
    session = await svc.run(SessionStore.get_session.op(svc.sessions, session_id))
    if session is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    return asdict(session)


@router.post("/sessions/{session_id}/end")
async def end_session(session_id: str, svc: MemoryService = Depends(service)) -> dict[str, Any]:
    return asdict(await svc.end_session(session_id))


@router.put("/sessions/{session_id}/scene")
async def set_scene(
    session_id: str, body: SceneIn, svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    return asdict(await svc.set_scene(session_id, body.model_dump()))


async def _recap(svc: MemoryService, session_id: str) -> Recap:
    recap = await svc.run(RecapStore.get.op(svc.tools.recaps, session_id), transaction=False)
    if recap is None:
        session = await svc.run(SessionStore.get_session.op(svc.sessions, session_id))
        what = "unknown session" if session is None else "no recap yet for session"
        raise NotFoundError(f"{what} {session_id!r}")
    return recap


def _audio_file(recap: Recap) -> Path | None:
    """The recap's audio when the file is still there (the pipeline writes it under the
    service's home; a moved or pruned home leaves the text alone)."""
    path = Path(recap.audio_path) if recap.audio_path else None
    return path if path is not None and path.is_file() else None


@router.get("/sessions/{session_id}/recap")
async def get_recap(session_id: str, svc: MemoryService = Depends(service)) -> dict[str, Any]:
    """The "previously on…" text, and where its audio is served when there is a file."""
    recap = await _recap(svc, session_id)
    audio = _audio_file(recap)
    return {
        "session_id": recap.session_id,
        "campaign_id": recap.campaign_id,
        "text": recap.text,
        "method": recap.method,
        "created_at": recap.created_at,
        "audio_url": f"/v1/sessions/{session_id}/recap/audio" if audio else None,
    }


@router.get("/sessions/{session_id}/recap/audio", response_class=FileResponse)
async def get_recap_audio(session_id: str, svc: MemoryService = Depends(service)) -> FileResponse:
    audio = _audio_file(await _recap(svc, session_id))
    if audio is None:
        raise NotFoundError(f"session {session_id!r} has no recap audio")
    media = mimetypes.guess_type(audio.name)[0] or "application/octet-stream"
    return FileResponse(audio, media_type=media, filename=f"{session_id}-recap{audio.suffix}")
