"""Liveness and degraded-mode reporting."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from realtime.api.deps import service
from realtime.auth import is_authenticated
from realtime.service import MemoryService

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(request: Request, svc: MemoryService = Depends(service)) -> dict[str, Any]:
    """Database reachable, degraded mode, spool depth and dead letters, pre-fetch and tool
    latency figures. The last error's text (it can quote a transcript) only with the token."""
    report = await svc.health()
    error = report.pop("last_error", None)
    # Degraded mode is entered only on a lost connection or a timeout: that is its kind.
    report["last_error_kind"] = "database_unavailable" if error else None
    if error and is_authenticated(request.scope):
        report["last_error"] = error
    return report
