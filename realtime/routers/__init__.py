"""One router per concern; each reads the service from `request.app.state.service`."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request, Response

from realtime.service import MemoryService


def service(request: Request) -> MemoryService:
    return request.app.state.service


def fast_json(content: Any, status_code: int = 200) -> Response:
    """Serialize with `json.dumps` directly: FastAPI's jsonable_encoder walks every value in
    Python and costs milliseconds on a hot context; our payloads are plain JSON already."""
    body = json.dumps(content, separators=(",", ":"), default=str, ensure_ascii=False)
    return Response(body.encode(), status_code=status_code, media_type="application/json")
