"""Bearer-token auth: required whenever the service listens beyond loopback.

A pure ASGI middleware (not a FastAPI dependency) so it also guards the mounted MCP endpoint.
`/healthz` stays open for load balancers; everything else needs `Authorization: Bearer <token>`
once a token is configured. The scheme is case-insensitive (RFC 7235: `bearer` is `Bearer`).
A request that carried the token is marked in `scope["state"]` (`AUTHENTICATED`), so an open
path can still show more to an authenticated caller (`/healthz` shows error text only then).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Any

OPEN_PATHS = frozenset({"/healthz"})
AUTHENTICATED = "glyphoxa_authenticated"


class AuthConfigError(RuntimeError):
    """Refusing to listen beyond loopback without a token."""


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Raise unless `host` is loopback or a token is set."""
    if not is_loopback(host) and not token:
        raise AuthConfigError(
            f"refusing to listen on {host!r} without GLYPHOXA_API_TOKEN: beyond loopback every "
            "request must carry a bearer token (set GLYPHOXA_API_TOKEN, or bind 127.0.0.1)"
        )


def is_authenticated(scope: dict[str, Any]) -> bool:
    """Whether the bearer middleware accepted this request's token."""
    return bool(scope.get("state", {}).get(AUTHENTICATED))


def _credentials(header: bytes) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` value; the scheme in any case."""
    scheme, _, token = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return token.strip()


class BearerAuthMiddleware:
    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        given: bytes | None = None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = _credentials(value)
                break
        # An outer gate may have authenticated the request already (the dashboard's session
        # cookie, `realtime.dashboard.gate`, on its own paths only).
        ok = is_authenticated(scope) or (
            given is not None and hmac.compare_digest(given, self._expected))
        if ok:
            scope.setdefault("state", {})[AUTHENTICATED] = True
        if ok or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": "unauthorized", "detail": "a valid 'Authorization: Bearer <token>' "
             "header is required"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
