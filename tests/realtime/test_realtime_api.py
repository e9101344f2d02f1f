"""HTTP API end to end against the real database (httpx ASGI client)."""

from __future__ import annotations

import uuid

import httpx


async def test_campaign_and_session_lifecycle(rt_client: httpx.AsyncClient) -> None:
    cid = "rt-life-" + uuid.uuid4().hex[:6]
    r = await rt_client.put(f"/v1/campaigns/{cid}", json={"id": cid, "name": "Lifecycle"})
    assert r.status_code == 200, r.text
    r = await rt_client.post(f"/v1/campaigns/{cid}/sessions",
                             json={"session_id": f"{cid}-a", "title": "One"})
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "live"
    r = await rt_client.get(f"/v1/campaigns/{cid}/sessions")
    assert [s["id"] for s in r.json()["sessions"]] == [f"{cid}-a"]
    r = await rt_client.post(f"/v1/sessions/{cid}-a/end")
    assert r.status_code == 200 and r.json()["status"] == "ended"
    r = await rt_client.get(f"/v1/campaigns/{cid}/sessions", params={"status": "live"})
    assert r.json()["sessions"] == []


async def test_entries_corrected_idempotent(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    sid = rt_seed.live_session
    key = "api-" + uuid.uuid4().hex[:8]
    body = {"idempotency_key": key, "text": "I met thal drin at the guilded tankard",
            "speaker_name": "Ana", "role": "player"}
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["written"] == 1
    entry = out["entries"][0]
    assert entry["text"] == "I met Thaldrin at The Gilded Tankard"
    assert entry["raw_text"] == body["text"]
    assert {c["replacement"] for c in entry["corrections"]} == {"Thaldrin", "The Gilded Tankard"}
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=body)
    assert r.json()["written"] == 0 and r.json()["duplicates"] == 1
    batch = {"entries": [
        {"idempotency_key": key + "-b1", "text": "Where is the sun blade?", "speaker_name": "Ben"},
        {"idempotency_key": key + "-b2", "text": "Ask the smith.", "speaker_name": "Ana"},
    ]}
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=batch)
    assert r.status_code == 201 and r.json()["written"] == 2
    assert [e["text"] for e in r.json()["entries"]] == ["Where is the Sunblade?", "Ask the smith."]


async def test_json_errors(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post("/v1/sessions/no-such-session/entries",
                             json={"idempotency_key": "k", "text": "hello"})
    assert r.status_code == 404
    assert "unknown session" in r.json()["detail"]
    r = await rt_client.post(f"/v1/sessions/{rt_seed.live_session}/entries",
                             json={"text": "no key"})
    assert r.status_code == 422
    assert "idempotency_key" in r.json()["detail"]
    r = await rt_client.post(f"/v1/sessions/{rt_seed.live_session}/entries",
                             json={"idempotency_key": "k2", "text": "x",
                                   "word_confidences": [1.5]})
    assert r.status_code == 422
    r = await rt_client.get(f"/v1/sessions/{rt_seed.live_session}/npcs/nobody/context")
    assert r.status_code == 404 and "nobody" in r.json()["detail"]
    r = await rt_client.get("/openapi.json")
    assert r.status_code == 200 and "/v1/tools/{name}" in r.json()["paths"]


async def test_hot_context(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    sid = rt_seed.live_session
    await rt_client.post(f"/v1/sessions/{sid}/entries", json={
        "idempotency_key": "ctx-1", "text": "Good evening, smith.", "speaker_name": "Ana"})
    url = f"/v1/sessions/{sid}/npcs/thaldrin/context"
    r = await rt_client.get(url)
    assert r.status_code == 200, r.text
    ctx = r.json()
    assert ctx["identity"]["name"] == "Thaldrin Ashvale"
    assert ctx["identity"]["emotional_state"] == "wary"
    assert "Never discuss the temple" in ctx["prompt"]
    assert ctx["scene"]["location"]["name"] == "The Gilded Tankard"
    assert [p["name"] for p in ctx["scene"]["present"]] == ["Thaldrin Ashvale",
                                                           "Mirela Quickfingers"]
    assert [q["name"] for q in ctx["scene"]["quests"]] == ["Recover the Sunblade",
                                                          "Find the lost caravan"]
    assert any(e["text"] == "Good evening, smith." for e in ctx["recent"])
    assert ctx["token_estimate"] > 0 and ctx["token_estimate"] <= ctx["token_budget"]
    assert ctx["tools"]["tier"] in ("FAST", "STANDARD", "DEEP")
    # deterministic
    again = (await rt_client.get(url)).json()
    assert again["prompt"] == ctx["prompt"]
    # a small budget trims, identity survives
    small = (await rt_client.get(url, params={"budget": 60})).json()
    assert small["trimmed"] and "You are Thaldrin Ashvale" in small["prompt"]
    assert small["token_estimate"] < ctx["token_estimate"]


async def test_dm_edits_effective_next_context(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    cid, sid = rt_seed.campaign_id, rt_seed.live_session
    url = f"/v1/sessions/{sid}/npcs/borga/context"
    before = (await rt_client.get(url)).json()
    assert "owes" not in before["prompt"]
    r = await rt_client.post(f"/v1/campaigns/{cid}/entities",
                             json={"type": "npc", "name": "Old Harrow", "aliases": ["Harrow"]})
    assert r.status_code == 201 and r.json()["id"] == "old-harrow"
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts",
                             json={"source": "Borga", "relation": "owes_money_to",
                                   "target": "Old Harrow"})
    assert r.status_code == 201, r.text
    fact_id = r.json()["id"]
    after = (await rt_client.get(url)).json()
    assert "Borga owes money to Old Harrow" in after["prompt"]
    # retcon: replaced by another fact
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts/{fact_id}/retcon",
                             json={"replacement": {"source": "borga", "relation": "rivals",
                                                   "target": "old-harrow"}})
    assert r.status_code == 200, r.text
    after = (await rt_client.get(url)).json()
    assert "owes money" not in after["prompt"] and "Borga rivals Old Harrow" in after["prompt"]
    # mark secret, known to nobody else: Thaldrin no longer sees it (he never did: not his fact)
    new_id = r.json()["replacement"]["id"]
    r = await rt_client.put(f"/v1/campaigns/{cid}/facts/{new_id}/visibility",
                            json={"visibility": "secret", "known_by": ["thaldrin"]})
    assert r.status_code == 200
    th = (await rt_client.get(f"/v1/sessions/{sid}/npcs/thaldrin/context")).json()
    assert "Borga rivals Old Harrow (SECRET" in th["prompt"]
    # reject: gone from everyone's context
    await rt_client.post(f"/v1/campaigns/{cid}/facts/{new_id}/reject")
    after = (await rt_client.get(url)).json()
    assert "rivals" not in after["prompt"]
    # profile edit
    r = await rt_client.put(f"/v1/campaigns/{cid}/npcs/borga/profile",
                            json={"emotional_state": "greedy", "behavior_rules": ["Haggle"]})
    assert r.status_code == 200
    after = (await rt_client.get(url)).json()
    assert "Current mood: greedy" in after["prompt"]
    # entity rename feeds the correction index immediately
    r = await rt_client.patch(f"/v1/campaigns/{cid}/entities/old-harrow",
                              json={"aliases": ["Harrow", "Grandpa Harrow"]})
    assert r.status_code == 200
    r = await rt_client.delete(f"/v1/campaigns/{cid}/entities/old-harrow")
    assert r.status_code == 204
    r = await rt_client.delete(f"/v1/campaigns/{cid}/entities/old-harrow")
    assert r.status_code == 404
