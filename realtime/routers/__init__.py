"""One router per concern; each reads the service from `request.app.state.service`."""

from __future__ import annotations

from fastapi import Request

from realtime.service import MemoryService


def service(request: Request) -> MemoryService:
    return request.app.state.service
