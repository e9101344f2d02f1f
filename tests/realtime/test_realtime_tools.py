"""Memory tools over HTTP: schemas, validation errors, each tool's results and provenance,
"last session", time filters, campaign isolation."""

from __future__ import annotations

import json
import uuid

import httpx

from realtime import tools as tl


def _call(seed, npc: str | None = "thaldrin", session: bool = True) -> dict:  # type: ignore[no-untyped-def]
    return {"campaign_id": seed.campaign_id,
            "session_id": seed.live_session if session else None, "npc_id": npc}


async def test_list_tools_with_schemas(rt_client: httpx.AsyncClient) -> None:
    r = await rt_client.get("/v1/tools", params={"tier": "DEEP"})
    assert r.status_code == 200
    tools = {t["name"]: t for t in r.json()["tools"]}
    assert set(tools) == set(tl.TOOLS)
    schema = tools["memory.search_sessions"]["input_schema"]
    assert schema["type"] == "object" and schema["required"] == ["query"]
    assert schema["properties"]["top_k"]["maximum"] == 30
    assert schema["properties"]["max_tokens"]["default"] == 1500
    assert schema["additionalProperties"] is False
    r = await rt_client.get("/v1/tools", params={"tier": "BOGUS"})
    assert r.status_code == 422


async def test_validation_errors(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/tools/memory.search_sessions",
                             json={**_call(rt_seed), "arguments": {"top_k": 99}})
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid tool arguments"
    assert any(p.startswith("query:") for p in body["problems"])
    assert any(p.startswith("top_k:") for p in body["problems"])
    r = await rt_client.post("/v1/tools/memory.query_entities",
                             json={**_call(rt_seed), "arguments": {"colour": "red"}})
    assert r.status_code == 422 and "colour" in r.json()["detail"]
    r = await rt_client.post("/v1/tools/memory.nope", json={**_call(rt_seed), "arguments": {}})
    assert r.status_code == 404 and "known tools" in r.json()["detail"]
    r = await rt_client.post("/v1/tools/memory.get_session_summary", json={"arguments": {}})
    assert r.status_code == 422 and "campaign" in r.json()["detail"]


async def test_search_sessions(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/tools/memory.search_sessions", json={
        **_call(rt_seed), "arguments": {"query": "who sold us the tunnel map?", "top_k": 3}})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "ok" and out["count"] >= 1
    top = out["results"][0]
    assert "tunnel map" in top["text"]
    assert top["source"]["session_id"] == rt_seed.past_sessions[1]
    assert top["source"]["when"] and top["source"]["entry_ids"]
    # filters: only session 1
    r = await rt_client.post("/v1/tools/memory.search_sessions", json={
        **_call(rt_seed), "arguments": {"query": "tunnel map", "session_id":
                                        rt_seed.past_sessions[0]}})
    assert r.json()["status"] == "ok", r.text
    assert {x["source"]["session_id"] for x in r.json()["results"]} <= {rt_seed.past_sessions[0]}
    r = await rt_client.post("/v1/tools/memory.search_sessions", json={
        **_call(rt_seed), "arguments": {"query": "wolves", "before": "2026-03-05T00:00:00Z"}})
    assert {x["source"]["session_id"] for x in r.json()["results"]} == {rt_seed.past_sessions[0]}


async def test_search_sessions_answer_as_sent_fits_its_budget(  # type: ignore[no-untyped-def]
        rt_client: httpx.AsyncClient, rt_seed) -> None:
    # `max_tokens` is the whole answer the model reads (`json.dumps`, ~4 characters a token):
    # the envelope (tool, status, count, time) is paid before the results are packed.
    r = await rt_client.post("/v1/tools/memory.search_sessions", json={
        **_call(rt_seed), "arguments": {"query": "the tunnel map, the wolves and the road",
                                        "top_k": 30, "max_tokens": 100}})
    out = r.json()
    assert out["status"] == "ok" and out["count"] >= 1, out
    sent = len(json.dumps(out, ensure_ascii=False))
    assert 400 - 4 * 40 < sent <= 400  # filled (the budget binds), never past it


async def test_query_entities(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/tools/memory.query_entities", json={
        **_call(rt_seed), "arguments": {"name": "Borga", "related_to": "Kraghammer"}})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert res[0]["name"] == "Borga"
    assert "Borga member of Iron Circle" in [f["text"] for f in res[0]["facts"]]
    assert res[0]["path_to"]["facts"] == ["Borga member of Iron Circle",
                                          "Iron Circle controls mines of Kraghammer"]
    fact = res[0]["facts"][0]
    assert fact["source"]["session_id"] == rt_seed.past_sessions[1]
    r = await rt_client.post("/v1/tools/memory.query_entities", json={
        **_call(rt_seed), "arguments": {"type": "location"}})
    assert {e["name"] for e in r.json()["results"]} >= {"Kraghammer", "The Gilded Tankard"}
    r = await rt_client.post("/v1/tools/memory.query_entities", json={
        **_call(rt_seed), "arguments": {"name": "Borga", "depth": 2}})
    texts = [f["text"] for f in r.json()["results"][0]["facts"]]
    assert "Iron Circle controls mines of Kraghammer" in texts


async def test_session_summary_last_and_by_id(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/tools/memory.get_session_summary",
                             json={**_call(rt_seed), "arguments": {"session": "last"}})
    res = r.json()["results"]
    assert len(res) == 1 and "Kraghammer" in res[0]["text"]
    assert res[0]["source"]["session_id"] == rt_seed.past_sessions[1]
    r = await rt_client.post("/v1/tools/memory.get_session_summary", json={
        **_call(rt_seed), "arguments": {"session": rt_seed.past_sessions[0]}})
    assert "Gilded Tankard" in r.json()["results"][0]["text"]
    r = await rt_client.post("/v1/tools/memory.get_session_summary",
                             json={**_call(rt_seed), "arguments": {"session": "current"}})
    assert r.json()["status"] == "ok" and r.json()["results"] == [], r.text  # not summarised yet


async def test_search_facts_time_filters(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/tools/memory.search_facts", json={
        **_call(rt_seed), "arguments": {"query": "Iron Circle"}})
    texts = [f["text"] for f in r.json()["results"]]
    assert "Borga member of Iron Circle" in texts
    r = await rt_client.post("/v1/tools/memory.search_facts", json={
        **_call(rt_seed), "arguments": {"after": "2026-03-05T00:00:00Z"}})
    texts = [f["text"] for f in r.json()["results"]]
    assert "Borga member of Iron Circle" in texts
    assert "Thaldrin Ashvale drinks at The Gilded Tankard" not in texts
    r = await rt_client.post("/v1/tools/memory.search_facts", json={
        **_call(rt_seed), "arguments": {"before": "2026-03-05T00:00:00Z", "entity": "Thaldrin"}})
    res = r.json()["results"]
    assert [f["text"] for f in res][0] == "Thaldrin Ashvale drinks at The Gilded Tankard"
    assert res[0]["source"]["when"].startswith("2026-03-01")
    r = await rt_client.post("/v1/tools/memory.search_facts", json={
        **_call(rt_seed), "arguments": {"query": "wolves hunted"}})
    assert any(x.get("type") == "event" for x in r.json()["results"])


async def test_search_facts_matches_names_relation_and_evidence(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    async def texts(query: str) -> list[str]:
        r = await rt_client.post("/v1/tools/memory.search_facts", json={
            **_call(rt_seed), "arguments": {"query": query}})
        assert r.status_code == 200, r.text
        return [f["text"] for f in r.json()["results"]]

    fact = "Thaldrin Ashvale drinks at The Gilded Tankard"
    assert fact in await texts("Ashvale")  # the source's name only
    assert fact in await texts("tankard")  # the target's name only
    assert fact in await texts("who drinks")  # the relation only
    assert fact in await texts("by the fire")  # the evidence only ("Thaldrin sits by the fire")
    assert fact not in await texts("dragons and mountains")


async def test_search_graph(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    for mode in ("semantic", "fulltext"):
        r = await rt_client.post("/v1/tools/memory.search_graph", json={
            **_call(rt_seed), "arguments": {"query": "tunnel map", "entity": "Iron Circle",
                                            "mode": mode}})
        assert r.status_code == 200, r.text
        res = r.json()["results"]
        assert res, mode
        assert all(x["source"]["session_id"] == rt_seed.past_sessions[1] for x in res)


async def test_campaign_isolation(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    other = "rt-iso-" + uuid.uuid4().hex[:6]
    await rt_client.put(f"/v1/campaigns/{other}", json={"id": other, "name": "Other"})
    await rt_client.post(f"/v1/campaigns/{other}/sessions", json={"session_id": f"{other}-1"})
    for name, args in (
        ("memory.search_sessions", {"query": "tunnel map Borga"}),
        ("memory.query_entities", {"name": "Borga"}),
        ("memory.get_session_summary", {"session": "last"}),
        ("memory.get_session_summary", {"session": rt_seed.past_sessions[1]}),
        ("memory.search_facts", {"query": "Iron Circle"}),
        ("memory.search_graph", {"query": "map", "entity": "Iron Circle"}),
    ):
        # the same call in the seeded campaign finds something, so the empty answer below is
        # isolation, not a query that matches nothing
        r = await rt_client.post(f"/v1/tools/{name}", json={**_call(rt_seed), "arguments": args})
        assert r.status_code == 200 and r.json()["status"] == "ok", (name, r.text)
        assert r.json()["results"], name
        r = await rt_client.post(f"/v1/tools/{name}", json={
            "campaign_id": other, "session_id": f"{other}-1", "arguments": args})
        assert r.status_code == 200, (name, r.text)
        assert r.json()["status"] == "ok", (name, r.text)
        assert r.json()["results"] == [], name
    r = await rt_client.get(f"/v1/sessions/{other}-1/npcs/thaldrin/context")
    assert r.status_code == 404


async def test_search_facts_history_and_as_of(rt_client: httpx.AsyncClient) -> None:
    cid = "rt-hist-" + uuid.uuid4().hex[:6]
    await rt_client.put(f"/v1/campaigns/{cid}", json={"id": cid, "name": "History"})
    for name in ("Ada", "Ben", "Cy"):
        await rt_client.post(f"/v1/campaigns/{cid}/entities", json={"type": "npc", "name": name})
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts",
                             json={"source": "Ada", "relation": "married_to", "target": "Ben"})
    old = r.json()["id"]
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts/{old}/retcon", json={
        "replacement": {"source": "Ada", "relation": "married_to", "target": "Cy"}})
    assert r.status_code == 200, r.text
    scope = {"campaign_id": cid}
    r = await rt_client.post("/v1/tools/memory.search_facts",
                             json={**scope, "arguments": {"entity": "Ada"}})
    assert [f["text"] for f in r.json()["results"]] == ["Ada married to Cy"]
    r = await rt_client.post("/v1/tools/memory.search_facts",
                             json={**scope, "arguments": {"entity": "Ada",
                                                          "include_history": True}})
    got = {f["text"]: f["current"] for f in r.json()["results"]}
    assert got == {"Ada married to Cy": True, "Ada married to Ben": False}
