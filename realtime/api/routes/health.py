"""Liveness and degraded-mode reporting."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from realtime.api.deps import service
from realtime.service import MemoryService

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(svc: MemoryService = Depends(service)) -> dict[str, Any]:
    """Database reachable, degraded mode, spool depth, pre-fetch and tool latency figures."""
    return await svc.health()
