"""The dashboard's login and CSRF gate: with a token, pages need the login cookie (which opens
only the dashboard, never the JSON API); every change needs the double-submit token and a
same-origin browser; the Host check still comes first."""

from __future__ import annotations

import re
from typing import Any

import httpx

from realtime.dashboard.gate import CSRF_COOKIE, SESSION_COOKIE, same_origin, session_value
from tests.dashboard.dashboard_support import TOKEN, Seed, client_for


def _token_field(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, html[:300]
    return found.group(1)


async def test_login_with_the_token(dash_service: Any, seed: Seed) -> None:
    async with client_for(dash_service, token=TOKEN) as client:
        r = await client.get("/dashboard/")
        assert r.status_code == 303 and r.headers["location"] == "/dashboard/login"
        r = await client.get("/dashboard/", headers={"HX-Request": "true"})
        assert r.status_code == 401 and r.headers["hx-redirect"] == "/dashboard/login"
        css = await client.get("/dashboard/static/dashboard.css")  # the login page's style
        assert css.status_code == 200 and "font-family" in css.text
        # the static files' openness is theirs only: a path that climbs out finds nothing
        sneak = await client.get(f"/dashboard/static/../c/{seed.campaign_id}")
        assert sneak.status_code in (303, 404) and "Night 1" not in sneak.text
        form = await client.get("/dashboard/login")
        assert form.status_code == 200 and CSRF_COOKIE in client.cookies
        field = _token_field(form.text)

        wrong = await client.post("/dashboard/login", data={"token": "nope", "csrf_token": field})
        assert wrong.status_code == 401 and "That is not the service" in wrong.text
        assert SESSION_COOKIE not in client.cookies
        stale = await client.post("/dashboard/login", data={"token": TOKEN, "csrf_token": "x"})
        assert stale.status_code == 401 and "form expired" in stale.text
        assert SESSION_COOKIE not in client.cookies
        foreign = await client.post("/dashboard/login", data={"token": TOKEN,
                                                               "csrf_token": field},
                                    headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 401 and SESSION_COOKIE not in client.cookies

        ok = await client.post("/dashboard/login", data={"token": TOKEN, "csrf_token": field})
        assert ok.status_code == 303
        cookie = ok.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/dashboard" in cookie
        assert TOKEN not in cookie and session_value(TOKEN) in cookie
        page = await client.get(f"/dashboard/c/{seed.campaign_id}")
        assert page.status_code == 200 and "Night 1" in page.text
        # the cookie opens the dashboard only: the JSON API still wants the bearer token
        api = await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue")
        assert api.status_code == 401
        api = await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue",
                               headers={"Authorization": f"Bearer {TOKEN}"})
        assert api.status_code == 200
    async with client_for(dash_service, token=TOKEN) as other:
        # a cookie made for another token is no login
        other.cookies.set(SESSION_COOKIE, session_value("another-token"), path="/dashboard")
        assert (await other.get("/dashboard/")).status_code == 303
        # the bearer header works on dashboard pages too (scripts)
        r = await other.get("/dashboard/", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 200


async def test_changes_need_the_csrf_token_and_same_origin(
    client: httpx.AsyncClient, seed: Seed, dash_service: Any
) -> None:
    c = f"/dashboard/c/{seed.campaign_id}"
    html = (await client.get(f"{c}/review")).text
    token = re.search(r'"X-CSRF-Token": "([^"]+)"', html).group(1)  # type: ignore[union-attr]
    assert client.cookies[CSRF_COOKIE] == token
    url = f"{c}/review/{seed.pending_fact}/confirm"
    assert (await client.post(url)).status_code == 403
    assert (await client.post(url, headers={"X-CSRF-Token": "wrong" * 10})).status_code == 403
    r = await client.post(url, headers={"X-CSRF-Token": token,
                                        "Origin": "http://attacker.example"})
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    async with client_for(dash_service) as fresh:  # no cookie at all: a header alone proves nothing
        assert (await fresh.post(url, headers={"X-CSRF-Token": token})).status_code == 403
    queue = (await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue")).json()
    assert [f["id"] for f in queue["facts"]] == [seed.pending_fact]  # nothing changed yet
    r = await client.post(url, headers={"X-CSRF-Token": token,
                                        "Origin": "http://127.0.0.1"})
    assert r.status_code == 200 and "confirmed" in r.text
    queue = (await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue")).json()
    assert queue["facts"] == []


async def test_the_host_check_applies(client: httpx.AsyncClient) -> None:
    # no token: nothing to log in to
    r = await client.get("/dashboard/login")
    assert r.status_code == 303 and r.headers["location"] == "/dashboard/"
    r = await client.get("/dashboard/", headers={"Host": "rebound.example"})
    assert r.status_code == 421


def test_same_origin() -> None:
    host = {b"host": b"127.0.0.1:8000"}
    assert same_origin(host)  # no Origin, no Referer: not a browser's cross-site form
    assert same_origin({**host, b"origin": b"http://127.0.0.1:8000"})
    assert same_origin({**host, b"referer": b"http://127.0.0.1:8000/dashboard/c/x"})
    assert not same_origin({**host, b"origin": b"http://127.0.0.1:9999"})
    assert not same_origin({**host, b"origin": b"null"})
    assert not same_origin({**host, b"referer": b"https://evil.example/page"})
