"""ASGI guards in front of every route: the Host header, the body size, the path and query text.

They run before routing, so they hold for the JSON API and the MCP mount alike, and a request
they refuse never reaches a handler:

- Host (DNS rebinding): on a loopback bind, a page on another origin can resolve its own name
  to 127.0.0.1 and talk to the service with the browser's help; its requests carry that
  foreign name in `Host`. Only loopback names (and configured extra hosts) are answered; the
  rest get 421, as the MCP SDK's own check does. Without a token the guard also refuses (403)
  a request that arrived on a non-loopback socket: `uvicorn --factory` does not tell the app
  the address it binds, but every request does.
- Body size: a Content-Length over the limit is refused at once, a streamed body as soon as
  it passes the limit (413).
- Path and query text: a `%00` or a lone surrogate in a path or query value would reach
  PostgreSQL as an id (422).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from realtime.api.limits import MAX_BODY_BYTES, text_problem
from realtime.auth import is_loopback

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


async def send_error(send: Any, status: int, error: str, detail: str) -> None:
    """The API's documented error body, `{"error": ..., "detail": ...}`, from raw ASGI."""
    body = json.dumps({"error": error, "detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def host_name(header: str) -> str:
    """The host part of a Host header value, port removed, lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostGuardMiddleware:
    """Answer only requests addressed to a loopback name or an allowed host; with
    `loopback_socket`, only requests that came in on a loopback socket."""

    def __init__(
        self, app: Any, allowed_hosts: Iterable[str] = (), *, loopback_socket: bool = False
    ) -> None:
        self.app = app
        self.allowed = LOOPBACK_HOSTS | {h.strip().lower() for h in allowed_hosts if h.strip()}
        self.loopback_socket = loopback_socket

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            server = scope.get("server")
            # uvicorn gives no server address for a Unix socket: local by nature
            if self.loopback_socket and server and not is_loopback(str(server[0])):
                await send_error(send, 403, "forbidden",
                                 "this service listens beyond loopback without "
                                 "GLYPHOXA_API_TOKEN: set a token, or bind 127.0.0.1")
                return
            given = ""
            for name, value in scope.get("headers", ()):
                if name == b"host":
                    given = value.decode("latin-1")
                    break
            if host_name(given) not in self.allowed:
                await send_error(send, 421, "misdirected request",
                                 "this service answers only requests addressed to its own "
                                 "host names (set GLYPHOXA_ALLOWED_HOSTS to add one)")
                return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """Refuse request bodies over `limit` bytes with 413."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._refuse(send)
                return
        seen = 0
        started = refused = False

        async def counting_receive() -> dict[str, Any]:
            # Over the limit: answer 413 now and tell the app the client went away (an
            # exception here would be turned into a 400 by the body parser).
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    refused = True
                    if not started:
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out already
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counting_receive, guarded_send)

    async def _refuse(self, send: Any) -> None:
        await send_error(send, 413, "request too large",
                         f"the request body is over {self.limit} bytes")


class PathTextMiddleware:
    """Refuse a path or query value that PostgreSQL could not store as text (422)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            problem = text_problem(scope.get("path", ""))
            where = "path"
            if problem is None:
                query = scope.get("query_string", b"").decode("latin-1")
                for key, value in parse_qsl(query, keep_blank_values=True,
                                            errors="surrogateescape"):
                    problem = text_problem(key) or text_problem(value)
                    if problem:
                        where = f"query parameter {key!r}"
                        break
            if problem:
                await send_error(send, 422, "invalid request", f"{where} {problem}")
                return
        await self.app(scope, receive, send)
