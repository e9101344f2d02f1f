"""The NPC's hot context, plus the tool tier chosen for this turn."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from realtime import tools as tl
from realtime.api.deps import fast_json, service
from realtime.service import MemoryService

router = APIRouter(prefix="/v1/sessions", tags=["context"])


@router.get("/{session_id}/npcs/{npc_id}/context")
async def hot_context(
    session_id: str,
    npc_id: str,
    budget: int | None = Query(None, ge=50, le=32_000, description="Token budget."),
    utterance: str = Query("", max_length=2000, description="The turn's text (tier choice)."),
    queue_depth: int = Query(0, ge=0, description="Voice turns waiting (tier choice)."),
    tier: tl.Tier | None = Query(None, description="DM override of the tool tier."),
    svc: MemoryService = Depends(service),
) -> Any:
    first = svc.turn_count(session_id, npc_id) == 0
    ctx = await svc.hot_context(session_id, npc_id, budget=budget)
    decision = tl.select_tier(
        utterance=utterance, dm_override=tier, queue_depth=queue_depth, first_turn=first
    )
    out = ctx.as_dict()
    out["tools"] = {
        "tier": decision.tier.value,
        "reason": decision.reason,
        "names": [s.name for s in tl.tools_for_tier(decision.tier, svc.latencies)],
    }
    return fast_json(out)
