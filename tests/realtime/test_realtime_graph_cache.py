"""The hot context's identity cache: served between turns, dropped when any process changes the
campaign's graph (LISTEN/NOTIFY), off while the listener is disconnected."""

from __future__ import annotations

import asyncio
import time

import psycopg

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import KnowledgeGraph, NpcProfile, Relationship
from realtime.graph_cache import GraphCache, parse_payload


def test_put_after_invalidation_is_refused() -> None:
    cache = GraphCache()
    cache.reset(enabled=True)
    gen = cache.generation
    cache.invalidate("c1")  # a change lands while the value was being read
    assert cache.put("c1", "npc", "stale", gen) is False
    assert cache.get("c1", "npc") is None
    gen = cache.generation
    assert cache.put("c1", "npc", "fresh", gen) is True
    assert cache.put("c2", "npc", "other", gen) is True
    assert cache.get("c1", "npc") == "fresh"
    cache.invalidate("c1")
    assert cache.get("c1", "npc") is None
    assert cache.get("c2", "npc") == "other"  # campaigns are independent


def test_disabled_cache_serves_and_keeps_nothing() -> None:
    cache = GraphCache()
    assert cache.put("c", "k", 1, cache.generation) is False  # off until the listener is up
    cache.reset(enabled=True)
    assert cache.put("c", "k", 1, cache.generation) is True
    cache.reset(enabled=False)  # listener lost
    assert cache.get("c", "k") is None
    cache.reset(enabled=True)
    assert cache.get("c", "k") is None  # emptied, not just hidden


def test_bounded_size() -> None:
    cache = GraphCache(max_entries=3)
    cache.reset(enabled=True)
    for i in range(5):
        cache.put("c", i, i, cache.generation)
    assert [cache.get("c", i) for i in range(5)] == [None, None, 2, 3, 4]


def test_payload_parsing() -> None:
    assert parse_payload("relationships:camp:1") == ("relationships", "camp:1")
    assert parse_payload("nonsense") is None
    assert parse_payload(":c") is None


async def _until(predicate, timeout_s: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def test_second_turn_served_from_cache(rt_service, rt_seed) -> None:  # type: ignore[no-untyped-def]
    await _until(lambda: rt_service.graph_cache.enabled)
    sid = rt_seed.live_session
    await rt_service.hot_context(sid, "thaldrin")
    hits = rt_service.graph_cache.hits
    ctx = await rt_service.hot_context(sid, "thaldrin")
    assert rt_service.graph_cache.hits == hits + 1
    assert ctx.identity["personality"]  # the cached identity is the real one
    assert any(f["secret"] for f in ctx.facts)


async def test_change_by_another_process_reaches_next_context(
    rt_service, rt_seed, rt_db_url: str  # type: ignore[no-untyped-def]
) -> None:
    await _until(lambda: rt_service.graph_cache.enabled)
    cid, sid = rt_seed.campaign_id, rt_seed.live_session
    before = await rt_service.hot_context(sid, "borga")
    assert "guards" not in before.prompt
    # The pipeline or the CLI writing through its own connection, not through the service.
    with Database(rt_db_url, max_size=1).open() as db:
        kg = KnowledgeGraph(db)
        fact = kg.add_relationship(Relationship(cid, "borga", "kraghammer", "guards"))
        kg.upsert_npc_profile(NpcProfile(cid, "borga", emotional_state="suspicious"))
    try:
        async def sees_it() -> bool:
            ctx = await rt_service.hot_context(sid, "borga")
            return "Borga guards Kraghammer" in ctx.prompt and "suspicious" in ctx.prompt

        deadline = time.monotonic() + 5
        while not await sees_it():
            assert time.monotonic() < deadline, "the change never reached the hot context"
            await asyncio.sleep(0.05)
    finally:
        with Database(rt_db_url, max_size=1).open() as db:
            KnowledgeGraph(db).delete_relationship(cid, fact.id)


async def test_listener_loss_disables_cache_until_reconnected(
    rt_service, rt_seed, rt_db_url: str  # type: ignore[no-untyped-def]
) -> None:
    await _until(lambda: rt_service.graph_cache.enabled)
    sid = rt_seed.live_session
    await rt_service.hot_context(sid, "thaldrin")
    with psycopg.connect(rt_db_url, autocommit=True) as conn:
        killed = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE query = 'LISTEN glyphoxa_graph' AND pid <> pg_backend_pid()"
        ).fetchall()
    assert killed, "no listener connection found"
    await _until(lambda: not rt_service.graph_cache.enabled)
    assert rt_service.graph_cache.stats()["entries"] == 0
    # Without notifications nothing is cached; with the listener back, caching resumes.
    await _until(lambda: rt_service.graph_cache.enabled)
    await rt_service.hot_context(sid, "thaldrin")
    assert rt_service.graph_cache.stats()["entries"] >= 1
