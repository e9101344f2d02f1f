"""Who may use the dashboard, and that a change came from the dashboard's own pages.

A browser cannot send the API's `Authorization: Bearer` header on a page load, so, when the
service has a token, the dashboard has a login: the DM types the token once and gets a session
cookie (`HttpOnly`, `SameSite=Strict`, path `/dashboard`). The cookie's value is an HMAC of the
token, not the token: changing the token logs every browser out, and a stolen cookie does not
give the bearer token the JSON API wants. The cookie opens only `/dashboard` paths; the JSON API
still needs the header. Without a token the service listens on loopback only (the bind rule)
and the dashboard is open there, as the API is.

Cross-site requests: every change is a POST under `/dashboard` and must carry the double-submit
token (`X-CSRF-Token` header, or the `csrf_token` field of the login form) equal to the
`glyphoxa_csrf` cookie, and, when the browser says where it comes from (`Origin`, else
`Referer`), come from this host. A page on another site can make the browser send the cookies
but can read neither, so it cannot produce the header; the Host check (`request_guards`) still
runs before this gate, so DNS rebinding never gets this far.

This is a pure ASGI middleware placed outside the bearer middleware: it answers the login form
itself (the bearer middleware would refuse it) and marks a request with a valid cookie as
authenticated (`realtime.auth.AUTHENTICATED`), which the bearer middleware honours.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from realtime.auth import AUTHENTICATED
from realtime.dashboard.templates import CSRF_STATE, render_page

PREFIX = "/dashboard"
LOGIN_PATH = f"{PREFIX}/login"
# The stylesheet and vendored scripts hold nothing of a campaign; the login page needs them.
STATIC_PREFIX = f"{PREFIX}/static/"
SESSION_COOKIE = "glyphoxa_dash"
CSRF_COOKIE = "glyphoxa_csrf"
CSRF_HEADER = b"x-csrf-token"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOGIN_BODY_LIMIT = 8192


def session_value(token: str) -> str:
    """The session cookie's value for a token: an HMAC, so the cookie is not the token."""
    return hmac.new(token.encode(), b"glyphoxa dashboard session", hashlib.sha256).hexdigest()


def _headers(scope: dict[str, Any]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for name, value in scope.get("headers", ()):
        out.setdefault(name, value)
    return out


def _cookies(headers: dict[bytes, bytes]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get(b"cookie", b"").decode("latin-1"))
    except Exception:  # noqa: BLE001 - a malformed cookie header is no cookie at all
        return {}
    return {k: m.value for k, m in jar.items()}


def same_origin(headers: dict[bytes, bytes]) -> bool:
    """Whether the browser's `Origin` (else `Referer`) names this request's own host; a
    request that names neither (not a browser's cross-site form) passes this check and still
    needs the CSRF token."""
    host = headers.get(b"host", b"").decode("latin-1").lower()
    for name in (b"origin", b"referer"):
        value = headers.get(name)
        if value is None:
            continue
        text = value.decode("latin-1")
        if text == "null":
            return False
        return urlsplit(text).netloc.lower() == host
    return True


def _cookie_header(name: str, value: str, *, secure: bool, max_age: int | None = None) -> bytes:
    parts = [f"{name}={value}", f"Path={PREFIX}", "HttpOnly", "SameSite=Strict"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if secure:
        parts.append("Secure")
    return "; ".join(parts).encode("latin-1")


async def _send_simple(send: Any, status: int, body: bytes, content_type: bytes,
                       extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()), *extra],
    })
    await send({"type": "http.response.body", "body": body})


class DashboardGate:
    """Login (with a token), the CSRF cookie and checks, for paths under `/dashboard`."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token
        self._session = session_value(token) if token else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        cookies = _cookies(headers)
        secure = scope.get("scheme") == "https"
        new_csrf = None
        csrf = cookies.get(CSRF_COOKIE, "")
        if len(csrf) < 32:
            csrf = new_csrf = secrets.token_urlsafe(32)
        scope.setdefault("state", {})[CSRF_STATE] = csrf
        extra = ([(b"set-cookie", _cookie_header(CSRF_COOKIE, new_csrf, secure=secure))]
                 if new_csrf else [])

        method = scope.get("method", "GET")
        if path == LOGIN_PATH:
            await self._login(scope, receive, send, method, headers, csrf, extra, secure)
            return
        if method not in SAFE_METHODS:
            given = headers.get(CSRF_HEADER, b"").decode("latin-1")
            if (new_csrf or not same_origin(headers)
                    or not hmac.compare_digest(given.encode(), csrf.encode())):
                await _send_simple(send, 403, b'{"error": "forbidden", "detail": "a dashboard '
                                   b'change must come from a dashboard page (CSRF token or '
                                   b'origin missing or wrong): reload the page"}',
                                   b"application/json", extra)
                return
        if self._session is not None:
            if hmac.compare_digest(cookies.get(SESSION_COOKIE, "").encode(),
                                   self._session.encode()) or (
                    method in SAFE_METHODS and path.startswith(STATIC_PREFIX)):
                scope["state"][AUTHENTICATED] = True
            elif b"authorization" not in headers:
                # A page load goes to the login form; an htmx call is told to log in.
                if method in SAFE_METHODS and b"hx-request" not in headers:
                    await _send_simple(send, 303, b"", b"text/plain",
                                       [(b"location", LOGIN_PATH.encode()), *extra])
                else:
                    await _send_simple(send, 401, b'{"error": "unauthorized", "detail": "log '
                                       b'in to the dashboard first"}', b"application/json",
                                       [(b"hx-redirect", LOGIN_PATH.encode()), *extra])
                return
        await self.app(scope, receive, self._with_cookies(send, extra))

    @staticmethod
    def _with_cookies(send: Any, extra: list[tuple[bytes, bytes]]) -> Any:
        if not extra:
            return send

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return sending

    async def _login(self, scope: dict[str, Any], receive: Any, send: Any, method: str,
                     headers: dict[bytes, bytes], csrf: str, extra: list[tuple[bytes, bytes]],
                     secure: bool) -> None:
        error = ""
        if self.token is None:  # loopback without a token: nothing to log in to
            await _send_simple(send, 303, b"", b"text/plain",
                               [(b"location", f"{PREFIX}/".encode()), *extra])
            return
        if method == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if len(body) > LOGIN_BODY_LIMIT:
                    await _send_simple(send, 413, b"", b"text/plain")
                    return
                if not message.get("more_body"):
                    break
            form = parse_qs(body.decode("utf-8", "replace"))
            given_csrf = (form.get(CSRF_FIELD) or [""])[0]
            given = (form.get("token") or [""])[0]
            if not same_origin(headers) or not hmac.compare_digest(given_csrf.encode(),
                                                                   csrf.encode()):
                error = "The form expired; try again."
            elif hmac.compare_digest(given.encode(), self.token.encode()):
                cookie = _cookie_header(SESSION_COOKIE, self._session or "", secure=secure,
                                        max_age=30 * 24 * 3600)
                await _send_simple(send, 303, b"", b"text/plain",
                                   [(b"location", f"{PREFIX}/".encode()),
                                    (b"set-cookie", cookie), *extra])
                return
            else:
                error = "That is not the service's token."
        page = render_page("login.html", csrf_token=csrf, error=error).encode()
        await _send_simple(send, 401 if error else 200, page, b"text/html; charset=utf-8",
                           extra)
