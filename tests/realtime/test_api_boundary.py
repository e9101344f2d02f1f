"""The HTTP boundary: what PostgreSQL would refuse is a 422 (never a 500, never spooled), sizes
are bounded, foreign Host headers get 421, and every error has the documented shape."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest


def _shaped(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert isinstance(body["error"], str) and "detail" in body, body
    return body


def _raw(body: dict[str, Any]) -> dict[str, Any]:
    """Request kwargs sending `body` as Python's json writes it: lone surrogates as `\\ud800`
    escapes, NaN and Infinity as bare words (what a careless client sends)."""
    return {"content": json.dumps(body).encode(),
            "headers": {"content-type": "application/json"}}


@pytest.fixture
async def live(rt_client: httpx.AsyncClient) -> str:
    cid = "rt-edge-" + uuid.uuid4().hex[:6]
    assert (await rt_client.put(f"/v1/campaigns/{cid}",
                                json={"id": cid, "name": "Edge"})).status_code == 200
    r = await rt_client.post(f"/v1/campaigns/{cid}/sessions", json={"session_id": f"{cid}-s"})
    assert r.status_code == 201, r.text
    return f"{cid}-s"


BAD_ENTRIES = [
    {"speaker_name": "Ana\x00"},
    {"speaker_name": "Ana\ud800"},
    {"speaker_id": "\x00"},
    {"npc_id": "x\udfff"},
    {"text": "hello\x00world"},
    {"idempotency_key": "k\x00"},
    {"spoken_at": "0001-01-01T00:00:00+14:00"},
    {"spoken_at": "9999-12-31T23:59:59+00:00"},
    {"spoken_at": "2999-01-01T00:00:00"},
    {"duration_s": 1e30},
    {"duration_s": 1e308},
    {"duration_s": float("inf")},
    {"duration_s": float("nan")},
    {"duration_s": -1},
]


@pytest.mark.parametrize("bad", BAD_ENTRIES, ids=[repr(b)[:40] for b in BAD_ENTRIES])
async def test_bad_entries_are_422_and_nothing_is_spooled(
    rt_client: httpx.AsyncClient, rt_service: Any, live: str, bad: dict[str, Any]
) -> None:
    depth = rt_service.spool.depth
    body = {"idempotency_key": "k-" + uuid.uuid4().hex[:6], "text": "hello", **bad}
    _shaped(await rt_client.post(f"/v1/sessions/{live}/entries", **_raw(body)), 422)
    assert rt_service.spool.depth == depth
    # the live transcript is untouched: the session still has no entries
    r = await rt_client.get(f"/v1/sessions/{live}")
    assert r.status_code == 200


async def test_clock_skew_allowance(rt_client: httpx.AsyncClient, live: str) -> None:
    from datetime import UTC, datetime, timedelta

    soon = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    r = await rt_client.post(f"/v1/sessions/{live}/entries",
                             json={"idempotency_key": "skew", "text": "hi", "spoken_at": soon})
    assert r.status_code == 201, r.text


BAD_EDITS = [
    ("post", "/entities", {"type": "npc", "name": "Bad\x00"}),
    ("post", "/entities", {"type": "npc", "name": "ok", "aliases": ["\ud800"]}),
    ("post", "/entities", {"type": "npc", "name": "ok", "attributes": {"k\x00": 1}}),
    ("post", "/entities", {"type": "npc", "name": "ok", "attributes": {"k": "x" * 70_000}}),
    ("post", "/entities", {"type": "npc", "name": "ok", "attributes": {"n": 2**70}}),
    ("post", "/entities", {"type": "npc", "name": "ok", "aliases": ["a"] * 51}),
    ("post", "/entities", {"type": "npc", "name": " "}),
    ("patch", "/entities/thaldrin", {"name": " \t"}),
    ("put", "/npcs/someone/profile", {"behavior_rules": ["x" * 5_000]}),
    ("put", "/npcs/someone/profile", {"emotional_state": "calm\x00"}),
    ("post", "/facts", {"source": "a", "relation": "knows", "target": "b",
                        "evidence": "x" * 20_000}),
    ("post", "/facts", {"source": "a\x00", "relation": "knows", "target": "b"}),
    ("post", "/facts", {"source": "a", "relation": "knows", "target": "b", "known_by": [""]}),
    ("post", "/sessions", {"title": "T\x00"}),
    ("post", "/sessions", {"started_at": "0001-01-01T00:00:00+14:00"}),
    ("post", "/sessions", {"scene": {"deep": [[[[[[[[[[["x"]]]]]]]]]]]}}),
]


@pytest.mark.parametrize("method,path,body", BAD_EDITS, ids=[f"{m} {p} {i}" for i, (m, p, _)
                                                             in enumerate(BAD_EDITS)])
async def test_bad_dm_edits_are_422(rt_client: httpx.AsyncClient, live: str, method: str,
                                    path: str, body: dict[str, Any]) -> None:
    cid = live.removesuffix("-s")
    r = await getattr(rt_client, method)(f"/v1/campaigns/{cid}{path}", **_raw(body))
    _shaped(r, 422)


async def test_huge_behaviour_rule_is_413(rt_client: httpx.AsyncClient, live: str) -> None:
    cid = live.removesuffix("-s")
    r = await rt_client.put(f"/v1/campaigns/{cid}/npcs/someone/profile",
                            json={"behavior_rules": ["x" * 10_000_000]})
    assert _shaped(r, 413)["error"] == "request too large"


async def test_bad_path_and_query_text(rt_client: httpx.AsyncClient, live: str) -> None:
    _shaped(await rt_client.get("/v1/sessions/a%00b"), 422)
    _shaped(await rt_client.get(f"/v1/sessions/{live}/npcs/x/context",
                                params={"utterance": "a\x00"}), 422)
    # the UTF-8 bytes of a lone surrogate decode to U+FFFD: a harmless unknown id
    _shaped(await rt_client.get("/v1/sessions/%ED%A0%80"), 404)


async def test_error_shape_for_router_errors(rt_client: httpx.AsyncClient, live: str) -> None:
    assert _shaped(await rt_client.get("/no/such/route"), 404)["error"] == "not found"
    assert _shaped(await rt_client.delete("/healthz"), 405)["error"] == "method not allowed"
    r = await rt_client.post(f"/v1/sessions/{live}/entries", content=b"{not json",
                             headers={"content-type": "application/json"})
    _shaped(r, 422)


async def test_body_size_limit(rt_service: Any, live: str) -> None:
    from realtime.api.app import create_app

    app = create_app(rt_service, mount_mcp=False, open_service=False, max_body_bytes=10_000)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://127.0.0.1") as client:
        body = {"idempotency_key": "big", "text": "x" * 20_000}
        r = await client.post(f"/v1/sessions/{live}/entries", json=body)
        assert _shaped(r, 413)["error"] == "request too large"

        async def chunks() -> Any:  # no Content-Length: counted as it streams
            for _ in range(20):
                yield b"x" * 1000

        r = await client.post(f"/v1/sessions/{live}/entries", content=chunks(),
                              headers={"content-type": "application/json"})
        _shaped(r, 413)


async def test_dns_rebinding_host_check(rt_service: Any) -> None:
    from realtime.api.app import create_app

    app = create_app(rt_service, mount_mcp=False, open_service=False,
                     allowed_hosts=["memory.lan"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        for host in ("evil.example", "evil.example:8080", "127.0.0.1.evil.example"):
            r = await client.get("/v1/tools", headers={"host": host})
            assert _shaped(r, 421)["error"] == "misdirected request"
        for host in ("127.0.0.1:8080", "localhost", "[::1]:80", "memory.lan:8080"):
            assert (await client.get("/v1/tools", headers={"host": host})).status_code == 200


def test_factory_applies_the_bind_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from realtime.api.app import app_from_env
    from realtime.auth import AuthConfigError

    monkeypatch.setenv("GLYPHOXA_HOME", str(tmp_path))
    monkeypatch.setenv("GLYPHOXA_DATABASE_URL", "postgresql://127.0.0.1:1/none")
    monkeypatch.delenv("GLYPHOXA_API_TOKEN", raising=False)
    monkeypatch.setenv("GLYPHOXA_BIND_HOST", "0.0.0.0")
    with pytest.raises(AuthConfigError):
        app_from_env()


async def test_unauthenticated_socket_beyond_loopback_is_refused(rt_service: Any) -> None:
    """`uvicorn --factory --host 0.0.0.0` without a token: the app cannot see the bind address,
    but each request shows the socket it came in on."""
    from realtime.api.app import create_app

    app = create_app(rt_service, mount_mcp=False, open_service=False,
                     allowed_hosts=["10.0.0.5"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://10.0.0.5") as client:
        assert _shaped(await client.get("/v1/tools"), 403)["error"] == "forbidden"


async def test_bearer_scheme_case_insensitive_and_health_redaction(rt_service: Any) -> None:
    from realtime.api.app import create_app

    app = create_app(rt_service, token="s3cret", mount_mcp=False, open_service=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://127.0.0.1") as client:
        for scheme in ("bearer", "BEARER", "Bearer"):
            r = await client.get("/v1/tools", headers={"Authorization": f"{scheme} s3cret"})
            assert r.status_code == 200, scheme
        _shaped(await client.get("/v1/tools", headers={"Authorization": "Basic s3cret"}), 401)
        guard = rt_service.guard
        guard.last_error = "PostgreSQL is unreachable: the secret password is swordfish"
        guard.degraded, was = True, guard.degraded
        try:
            open_ = (await client.get("/healthz")).json()
            authed = (await client.get("/healthz",
                                       headers={"Authorization": "bearer s3cret"})).json()
        finally:
            guard.degraded = was
        assert "swordfish" not in str(open_) and open_["last_error_kind"] == "database_unavailable"
        assert "swordfish" in authed["last_error"]


WORDLESS = ["?", "!", "(((", "<->", "🐉", "\ufeff", "'", "&|!", " ' ' "]


@pytest.mark.parametrize("query", WORDLESS)
async def test_wordless_search_text(rt_client: httpx.AsyncClient, live: str, query: str) -> None:
    cid = live.removesuffix("-s")
    for tool in ("memory.search_facts", "memory.search_graph", "memory.search_sessions"):
        r = await rt_client.post(f"/v1/tools/{tool}", json={
            "campaign_id": cid, "session_id": live, "arguments": {"query": query}})
        assert r.status_code in (200, 422), (tool, r.text)
        if r.status_code == 422:
            _shaped(r, 422)


def test_or_tsquery_is_always_valid() -> None:
    from glyphoxa_pipelines.memory.semantic_index import or_tsquery

    for text in WORDLESS:
        assert or_tsquery(text) is None
    assert or_tsquery("Where's the Sunblade?") == "'Wheres' | 'the' | 'Sunblade'"


def test_hot_context_budget_is_enforced_for_one_huge_piece() -> None:
    from realtime.hot_context import HotContext, estimate_tokens, fit_budget

    ctx = HotContext("c", "s", "n", {"name": "Borga", "type": "npc", "behavior_rules": ["x" * 200_000]},
                     [], {}, [{"speaker": "Ana", "text": "y" * 50_000, "spoken_at": None}], [])
    out = fit_budget(ctx, 100)
    assert estimate_tokens(out.prompt) <= 100 and out.token_estimate <= 100
    assert out.prompt.startswith("## Who you are") and out.trimmed["prompt_chars"] > 200_000


async def test_numbers_too_small_for_a_real_column_are_stored_as_zero(
    rt_client: httpx.AsyncClient, live: str,
) -> None:
    """5e-324 passes "between 0 and 1" but PostgreSQL's `real` refuses it (the API fuzz test
    found it as a 500): the boundary stores it as the zero it means."""
    tiny = 5e-324
    r = await rt_client.post(f"/v1/sessions/{live}/entries", **_raw({
        "idempotency_key": "tiny-1", "text": "a whisper", "duration_s": tiny,
        "word_confidences": [tiny, 0.5]}))
    assert r.status_code == 201, r.text
    r = await rt_client.get(f"/v1/sessions/{live}")
    assert r.status_code == 200, r.text
    cid = live.removesuffix("-s")
    for kind in ("npc", "item"):
        r = await rt_client.post(f"/v1/campaigns/{cid}/entities", json={
            "id": f"t-{kind}", "name": f"Tiny {kind}", "type": kind})
        assert r.status_code in (200, 201), r.text
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts", json={
        "source": "t-npc", "relation": "owns", "target": "t-item", "confidence": tiny})
    assert r.status_code in (200, 201), r.text
