"""Live transcript: utterances (corrected inline, written or spooled) and partials."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from realtime.api.deps import fast_json, service
from realtime.schemas import EntryBatchIn, EntryIn, PartialIn
from realtime.service import MemoryService

router = APIRouter(prefix="/v1/sessions", tags=["transcript"])


@router.post("/{session_id}/entries", status_code=201)
async def write_entries(
    session_id: str, body: EntryIn | EntryBatchIn, svc: MemoryService = Depends(service)
) -> Any:
    """One utterance or `{"entries": [...]}`. 201 when written, 202 when spooled (the database
    is away; the entries land, in order and once, when it returns)."""
    items = body.entries if isinstance(body, EntryBatchIn) else [body]
    result = await svc.write_entries(session_id, items)
    return fast_json(result, status_code=202 if result["spooled"] else 201)


@router.post("/{session_id}/partials")
async def partial(
    session_id: str, body: PartialIn, svc: MemoryService = Depends(service)
) -> Any:
    """A partial STT transcript: fires speculative pre-fetch, returns at once."""
    return fast_json(await svc.partial(session_id, body.text, body.npc_id))
