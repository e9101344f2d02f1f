"""The async face runs the same operations; GraphRAG scoping; summaries and recaps."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from glyphoxa_pipelines.db import AsyncDatabase, Database, DatabaseUnavailableError
from glyphoxa_pipelines.memory import (
    Chunk,
    Entity,
    GraphRAGQuerier,
    GraphScope,
    KnowledgeGraph,
    NewEntry,
    NotFoundError,
    Recap,
    RecapStore,
    Relationship,
    SemanticIndex,
    SessionStore,
    SessionSummary,
    SummaryStore,
)


async def test_async_face_shares_the_implementation(database_url: str, campaign_id: str) -> None:
    async with AsyncDatabase(database_url) as adb:
        store = SessionStore(adb)
        session = await store.start_session(campaign_id)
        results = await asyncio.gather(
            *(store.write_entry(session.id, NewEntry(f"k{i % 5}", f"line {i}")) for i in range(20))
        )
        assert len({e.id for e in results}) == 5  # idempotent under concurrent async writers
        assert await store.entry_count(session.id) == 5
        graph = KnowledgeGraph(adb)
        await graph.add_entity(Entity(campaign_id, "", "npc", "Eldrinax"))
        assert (await graph.resolve(campaign_id, "eldrinax")).name == "Eldrinax"
        with pytest.raises(NotFoundError):
            await graph.identity_snapshot(campaign_id, "nobody")


def test_unreachable_database_is_a_clear_error() -> None:
    db = Database("postgresql://postgres@/glyphoxa?host=/nonexistent-socket-dir", min_size=0)
    with pytest.raises(DatabaseUnavailableError, match="unreachable"):
        db.open(timeout=1.0)


def _rag_fixture(db: Database, cid: str) -> tuple[list[Chunk], np.ndarray]:
    g = KnowledgeGraph(db)
    for eid, typ in [
        ("eldrinax", "npc"),
        ("tower", "location"),
        ("grimjaw", "npc"),
        ("crown", "item"),
    ]:
        g.add_entity(Entity(cid, eid, typ, eid.title()))
    g.add_relationship(Relationship(cid, "eldrinax", "tower", "lives_in"))
    g.add_relationship(Relationship(cid, "eldrinax", "crown", "hides", visibility="secret"))
    sid = SessionStore(db).start_session(cid).id
    texts = [
        ("The wizard speaks of the tower's vault", ["eldrinax", "tower"]),
        ("Grimjaw hammers at the forge all night", ["grimjaw"]),
        ("A shard of the crown glows in the vault", ["crown"]),
        ("The vault door in the tower is sealed", ["tower"]),
    ]
    chunks = [
        Chunk(f"{sid}#{i:05d}", cid, sid, i, t, entity_ids=ents)
        for i, (t, ents) in enumerate(texts)
    ]
    rng = np.random.default_rng(5)
    vecs = rng.normal(size=(len(chunks), 384)).astype(np.float32)
    SemanticIndex(db).index_chunks(chunks, vecs, model="all-MiniLM-L6-v2")
    return chunks, vecs


def test_graph_rag_scopes_to_the_neighbourhood(db: Database, campaign_id: str) -> None:
    chunks, vecs = _rag_fixture(db, campaign_id)
    rag = GraphRAGQuerier(db)
    scope = GraphScope(campaign_id, entity_id="eldrinax", depth=1)
    hits = rag.query_with_context("vault", scope)
    assert {h.chunk.seq for h in hits} == {0, 2, 3}  # the wizard, his tower and the crown
    # an NPC that does not know the secret edge to the crown does not reach its chunks
    blind = GraphScope(campaign_id, entity_id="eldrinax", depth=1, npc_id="grimjaw")
    assert {h.chunk.seq for h in rag.query_with_context("vault", blind)} == {0, 3}
    near = rag.query_with_embedding(vecs[1], 2, GraphScope(campaign_id, entity_id="grimjaw"))
    assert [h.chunk.seq for h in near] == [1]
    explicit = GraphScope(campaign_id, entity_ids=("crown",))
    assert [h.chunk.seq for h in rag.query_with_embedding(vecs[0], 5, explicit)] == [2]
    assert rag.query_with_context("dragons", scope) == []


def test_summaries_and_recaps_upsert(db: Database, campaign_id: str) -> None:
    log = SessionStore(db)
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    s1 = log.start_session(campaign_id, started_at=t0).id
    s2 = log.start_session(campaign_id, started_at=t0 + timedelta(days=7)).id
    summaries, recaps = SummaryStore(db), RecapStore(db)
    assert summaries.get(s1) is None and summaries.latest(campaign_id) is None
    summaries.save(SessionSummary(s1, campaign_id, "first", ["a"], "extractive"))
    summaries.save(SessionSummary(s2, campaign_id, "second draft"))
    summaries.save(SessionSummary(s2, campaign_id, "second", ["b", "c"], "llm"))
    assert summaries.get(s2).summary == "second" and summaries.get(s2).key_points == ["b", "c"]
    assert summaries.latest(campaign_id).session_id == s2
    assert summaries.latest(campaign_id, before_session=s2).session_id == s1
    recaps.save(Recap(s1, campaign_id, "Previously on..."))
    recaps.save(Recap(s1, campaign_id, "Previously, again", audio_path="/tmp/a.wav"))
    got = recaps.get(s1)
    assert got.text == "Previously, again" and got.audio_path == "/tmp/a.wav"
    assert recaps.get(s2) is None
    assert recaps.delete(s1) is True and recaps.delete(s1) is False
    with pytest.raises(NotFoundError, match="unknown session"):
        recaps.save(Recap("nope", campaign_id, "x"))
    recaps.save_story(campaign_id, "So far...", {"sessions": 2})
    assert recaps.get_story(campaign_id) == "So far..."


async def test_async_run_without_transaction_gives_each_statement_its_own_snapshot(
    database_url: str,
) -> None:
    from glyphoxa_pipelines.db.operations import fetch_one

    def two_clock_reads():  # type: ignore[no-untyped-def]
        first = yield fetch_one("SELECT now() AS t, pg_sleep(0.01)", ())
        second = yield fetch_one("SELECT now() AS t", ())
        return first["t"], second["t"]

    async with AsyncDatabase(database_url) as adb:
        a, b = await adb.run(two_clock_reads())
        assert a == b  # one transaction: now() is its start
        a, b = await adb.run(two_clock_reads(), transaction=False)
        assert b > a  # autocommit: every statement is its own transaction


def test_read_operations_run_without_a_transaction_writes_with_one(db: Database) -> None:
    from glyphoxa_pipelines.db.operations import fetch_one, operation, read_operation

    class Clock:
        def __init__(self, database: Database) -> None:
            self.db = database

        def _two_reads(self):  # type: ignore[no-untyped-def]
            first = yield fetch_one("SELECT now() AS t, pg_sleep(0.01)", ())
            second = yield fetch_one("SELECT now() AS t", ())
            return first["t"], second["t"]

        read = read_operation(_two_reads)
        write = operation(_two_reads)

    clock = Clock(db)
    a, b = clock.read()
    assert b > a
    a, b = clock.write()
    assert a == b
