"""Memory tools over HTTP: list (per tier, with JSON schemas) and call."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from realtime import tools as tl
from realtime.api.deps import fast_json, service
from realtime.schemas import ToolCallIn
from realtime.service import MemoryService
from realtime.tools import ToolScope

router = APIRouter(prefix="/v1/tools", tags=["tools"])


@router.get("")
async def list_tools(
    tier: tl.Tier = Query(tl.Tier.DEEP), svc: MemoryService = Depends(service)
) -> dict[str, Any]:
    specs = tl.tools_for_tier(tier, svc.latencies)
    return {
        "tier": tier.value,
        "budget_ms": tl.TIER_BUDGET_MS[tier],
        "tools": [
            {
                "name": s.name,
                "description": s.description,
                "input_schema": s.input_schema(),
                "p50_ms": round(svc.latencies.p50(s.name), 3),
            }
            for s in specs
        ],
    }


@router.post("/{name}")
async def call_tool(
    name: str, body: ToolCallIn, svc: MemoryService = Depends(service)
) -> Any:
    tier = tl.Tier(body.tier) if body.tier else None
    scope = ToolScope(body.campaign_id, body.session_id, body.npc_id, tier)
    return fast_json(await svc.call_tool(name, body.arguments, scope))
