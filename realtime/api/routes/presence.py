"""Who heard a session's lines, as the DM sees and corrects it: spans of equal presence, and
edits of a span (present / absent witnesses, NPCs told of it, public). An edit is effective at
the next read: the hot context, pre-fetch and the tools read presence from the table."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_pipelines.memory.presence import PresenceEdit
from realtime.api.deps import fast_json, service
from realtime.api.limits import EntityRef
from realtime.service import MemoryService

router = APIRouter(prefix="/v1/sessions", tags=["presence"])

NpcList = list[EntityRef]


class PresenceIn(BaseModel):
    """A span of lines (by entry id, spoken order, both ends included; left out: from the
    first line / to the last) and what changes in it."""

    model_config = ConfigDict(extra="forbid")

    first_entry_id: int | None = Field(None, ge=1)
    last_entry_id: int | None = Field(None, ge=1)
    present: NpcList = Field(default_factory=list, max_length=200,
                             description="NPCs who heard these lines (added as witnesses).")
    absent: NpcList = Field(default_factory=list, max_length=200,
                            description="NPCs who did not hear them after all.")
    told: NpcList = Field(default_factory=list, max_length=200,
                          description="NPCs told of these lines, who may recall them.")
    untold: NpcList = Field(default_factory=list, max_length=200)
    public: bool | None = Field(None, description="true: every NPC may recall these lines; "
                                "false: only their witnesses and those told.")


def _spans(spans: list[Any]) -> list[dict[str, Any]]:
    return [asdict(s) for s in spans]


@router.get("/{session_id}/presence")
async def get_presence(session_id: str, svc: MemoryService = Depends(service)) -> Any:
    """The session's lines as spans of equal presence, in spoken order."""
    spans = await svc.presence(session_id)
    return fast_json({"session_id": session_id, "spans": _spans(spans)})


@router.patch("/{session_id}/presence")
async def edit_presence(
    session_id: str, body: PresenceIn, svc: MemoryService = Depends(service)
) -> Any:
    """Correct who heard a span of lines, or tell NPCs of it; the spans after the edit."""
    edit = PresenceEdit(body.first_entry_id, body.last_entry_id, tuple(body.present),
                        tuple(body.absent), tuple(body.told), tuple(body.untold), body.public)
    result = await svc.edit_presence(session_id, edit)
    return fast_json(dict(result, spans=_spans(result["spans"])))
