"""What every route shares: the service (read from `request.app.state.service`) and a fast
JSON response."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request, Response

from realtime.service import MemoryService


async def service(request: Request) -> MemoryService:
    """Async on purpose: FastAPI runs a sync dependency in its thread pool, and that hand-off
    cost more than the whole hot-context query under concurrent load."""
    return request.app.state.service


def fast_json(content: Any, status_code: int = 200) -> Response:
    """Serialize with orjson directly: FastAPI's jsonable_encoder walks every value in Python
    and costs milliseconds on a hot context; our payloads are plain JSON already."""
    body = orjson.dumps(content, default=str, option=orjson.OPT_NON_STR_KEYS)
    return Response(body, status_code=status_code, media_type="application/json")
