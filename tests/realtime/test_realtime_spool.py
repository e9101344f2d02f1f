"""No data lost: stop the embedded PostgreSQL mid-session, keep talking, start it again, and
every utterance lands exactly once, in order."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import httpx
import pytest

from glyphoxa_pipelines.memory import SessionStore
from realtime.spool import PermanentSpoolError, Spool


async def test_spool_replays_in_order_and_resumes(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    for i in range(4):
        spool.append("s", [{"k": i}])
    assert spool.depth == 4
    seen: list[int] = []
    fail_at = {2}

    async def write(session_id: str, entries: list[dict]) -> None:
        k = entries[0]["k"]
        if k in fail_at:
            fail_at.clear()
            raise ConnectionError("down again")
        if k == 3:
            raise PermanentSpoolError("session gone")
        seen.append(k)

    with pytest.raises(ConnectionError):
        await spool.replay(write)
    assert seen == [0, 1] and spool.depth == 2
    # a second process would not get this file while we hold it
    other = Spool(tmp_path)
    assert other.path != spool.path
    other.close()
    assert await spool.replay(write) == 1  # 2 written, 3 dead-lettered
    assert seen == [0, 1, 2] and spool.dead_count == 1
    assert spool.depth == 0 and not spool.path.exists()
    dead = [json.loads(x) for x in spool.dead_path.read_text().splitlines()]
    assert dead[0]["entries"] == [{"k": 3}] and "session gone" in dead[0]["error"]
    spool.close()


def test_orphaned_spool_is_adopted(tmp_path: Path) -> None:
    first = Spool(tmp_path)
    second = Spool(tmp_path)  # another worker: gets its own file
    second.append("s", [{"k": "from-worker-2"}])
    second.close()  # that worker dies with a record pending
    first.close()
    restarted = Spool(tmp_path)
    assert restarted.depth == 1
    assert not second.path.exists()
    restarted.close()


async def _wait(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.1)


async def test_database_stopped_mid_session(rt_client: httpx.AsyncClient, rt_service, rt_settings, rt_db_url: str) -> None:  # type: ignore[no-untyped-def]
    from pgserver.postgres_server import PostgresServer

    from glyphoxa_pipelines.db import embedded

    cid = "rt-spool-" + uuid.uuid4().hex[:6]
    sid = f"{cid}-live"
    await rt_client.put(f"/v1/campaigns/{cid}", json={"id": cid, "name": "Spool"})
    await rt_client.post(f"/v1/campaigns/{cid}/sessions", json={"session_id": sid})
    await rt_client.post(f"/v1/campaigns/{cid}/entities",
                         json={"type": "npc", "name": "Keeper Olm", "id": "olm"})

    def entry(i: int) -> dict:
        return {"idempotency_key": f"e{i:02d}", "text": f"utterance number {i}",
                "speaker_name": "Ana"}

    for i in range(5):
        r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=entry(i))
        assert r.status_code == 201
    ctx_url = f"/v1/sessions/{sid}/npcs/olm/context"
    assert (await rt_client.get(ctx_url)).status_code == 200  # cached for degraded mode

    await asyncio.to_thread(embedded.stop, rt_settings.pgdata)
    try:
        for i in range(5, 15):
            r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=entry(i))
            assert r.status_code == 202, r.text
            assert r.json()["spooled"] is True
        r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=entry(7))  # a retry
        assert r.status_code == 202
        assert rt_service.spool.depth == 11
        r = await rt_client.get(ctx_url)
        assert r.status_code == 200, r.text
        ctx = r.json()
        assert ctx["degraded"] is True
        assert ctx["recent"][-1]["text"] == "utterance number 14"
        assert "You are Keeper Olm" in ctx["prompt"]
        r = await rt_client.post("/v1/tools/memory.search_facts",
                                 json={"campaign_id": cid, "arguments": {"query": "x"}})
        assert r.status_code == 200 and r.json()["status"] == "degraded"
        assert "memory degraded" in r.json()["error"]
        health = (await rt_client.get("/healthz")).json()
        assert health["degraded"] is True and health["spool_depth"] == 11
        r = await rt_client.get(f"/v1/sessions/{sid}/npcs/nobody-cached/context")
        assert r.status_code == 503 and r.json()["degraded"] is True
    finally:
        PostgresServer._instances.pop(rt_settings.pgdata.resolve(), None)
        url = await asyncio.to_thread(embedded.start, rt_settings.pgdata)
    assert embedded.with_database(url, "glyphoxa") == rt_db_url
    await _wait(lambda: not rt_service.degraded and rt_service.spool.depth == 0)
    store = SessionStore(rt_service.db)
    entries = await store.get_entries(sid)
    assert [e.idempotency_key for e in entries] == [f"e{i:02d}" for i in range(15)]
    assert [e.text for e in entries] == [f"utterance number {i}" for i in range(15)]
    health = (await rt_client.get("/healthz")).json()
    assert health["status"] == "ok" and health["spool_replayed"] >= 11
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json=entry(15))
    assert r.status_code == 201
