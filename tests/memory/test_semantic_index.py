"""L2: chunks and per-model embeddings, k-NN with filters, dimension checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    CampaignStore,
    Chunk,
    EmbeddingDimensionError,
    NotFoundError,
    SemanticIndex,
    SessionStore,
)

MODEL = "all-MiniLM-L6-v2"
T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _setup(db: Database, campaign_id: str, n: int = 30, seed: int = 7):
    rng = np.random.default_rng(seed)
    sessions = [SessionStore(db).start_session(campaign_id).id for _ in range(2)]
    chunks, vecs = [], []
    for i in range(n):
        sid = sessions[i % 2]
        chunks.append(
            Chunk(
                id=f"{sid}#{i:05d}",
                campaign_id=campaign_id,
                session_id=sid,
                seq=i,
                text=f"chunk {i} about {'dragons' if i % 3 == 0 else 'taverns'}",
                speakers=["Matt" if i % 2 else "Sam"],
                entity_ids=["eldrinax"] if i % 5 == 0 else [],
                start_at=T0 + timedelta(minutes=i),
                end_at=T0 + timedelta(minutes=i + 1),
            )
        )
        vecs.append(_unit(rng.normal(size=384)))
    SemanticIndex(db).index_chunks(chunks, np.stack(vecs), model=MODEL)
    return sessions, chunks, np.stack(vecs)


def test_search_orders_by_cosine_distance(db: Database, campaign_id: str) -> None:
    _, chunks, vecs = _setup(db, campaign_id)
    index = SemanticIndex(db)
    query = vecs[4] + 0.05 * vecs[9]
    hits = index.search(campaign_id, query, top_k=5)
    assert hits[0].chunk.id == chunks[4].id
    distances = [h.score for h in hits]
    assert distances == sorted(distances)
    exact = sorted(
        range(len(vecs)), key=lambda i: 1 - float(vecs[i] @ query / np.linalg.norm(query))
    )[:5]
    assert [h.chunk.id for h in hits] == [chunks[i].id for i in exact]


def test_search_filters(db: Database, campaign_id: str) -> None:
    sessions, chunks, vecs = _setup(db, campaign_id)
    index = SemanticIndex(db)
    q = vecs[0]
    assert {
        h.chunk.session_id for h in index.search(campaign_id, q, 30, session_id=sessions[1])
    } == {sessions[1]}
    assert all("Matt" in h.chunk.speakers for h in index.search(campaign_id, q, 30, speaker="Matt"))
    ents = index.search(campaign_id, q, 30, entity_id="eldrinax")
    assert {h.chunk.seq for h in ents} == {0, 5, 10, 15, 20, 25}
    late = index.search(campaign_id, q, 30, after=T0 + timedelta(minutes=25))
    assert {h.chunk.seq for h in late} == {24, 25, 26, 27, 28, 29}
    early = index.search(campaign_id, q, 30, before=T0 + timedelta(minutes=2))
    assert {h.chunk.seq for h in early} == {0, 1}
    assert index.search(campaign_id, q, 0) == []
    assert index.search(campaign_id, q, 5, entity_id="nobody") == []


def test_filtered_search_is_exact_top_k(db: Database, campaign_id: str) -> None:
    """The exact (session / entity filtered) path returns the true top k in distance order,
    also when chunk-level filters are combined with the session filter."""
    sessions, chunks, vecs = _setup(db, campaign_id, n=60)
    index = SemanticIndex(db)
    q = _unit(vecs[3] + vecs[8])

    def exact(keep: list[int], k: int) -> list[str]:
        order = sorted(keep, key=lambda i: (1 - float(vecs[i] @ q), chunks[i].id))
        return [chunks[i].id for i in order[:k]]

    in_s1 = [i for i, c in enumerate(chunks) if c.session_id == sessions[1]]
    hits = index.search(campaign_id, q, 7, session_id=sessions[1])
    assert [h.chunk.id for h in hits] == exact(in_s1, 7)
    assert [h.score for h in hits] == sorted(h.score for h in hits)
    after = T0 + timedelta(minutes=20)
    late_s1 = [i for i in in_s1 if chunks[i].end_at >= after]
    got = index.search(campaign_id, q, 5, session_id=sessions[1], after=after)
    assert [h.chunk.id for h in got] == exact(late_s1, 5)
    matt_ent = [i for i, c in enumerate(chunks) if "eldrinax" in c.entity_ids and i % 2]
    got = index.search(campaign_id, q, 4, entity_id="eldrinax", speaker="Matt")
    assert [h.chunk.id for h in got] == exact(matt_ent, 4)


def test_wrong_dimension_names_expected_and_given(db: Database, campaign_id: str) -> None:
    _, chunks, _ = _setup(db, campaign_id, n=2)
    index = SemanticIndex(db)
    with pytest.raises(EmbeddingDimensionError, match="must have 384 dimensions, got 100"):
        index.search(campaign_id, np.ones(100), 3)
    with pytest.raises(EmbeddingDimensionError, match="384 dimensions, got 512"):
        index.add_embeddings(MODEL, [(chunks[0].id, np.ones(512))])
    with pytest.raises(NotFoundError, match="unknown embedding model"):
        index.search(campaign_id, np.ones(384), 3, model="no-such-model")


def test_index_chunks_upserts(db: Database, campaign_id: str) -> None:
    sessions, chunks, vecs = _setup(db, campaign_id, n=4)
    index = SemanticIndex(db)
    changed = Chunk(
        id=chunks[0].id,
        campaign_id=campaign_id,
        session_id=chunks[0].session_id,
        seq=0,
        text="rewritten chunk",
    )
    index.index_chunks([changed], vecs[:1], model=MODEL)
    stored = index.get_chunks(chunks[0].session_id)
    assert [c.text for c in stored if c.seq == 0] == ["rewritten chunk"]
    assert len(stored) == 2  # seq 0 and 2 of this session, no duplicate


def test_index_chunks_keeps_the_last_of_a_repeated_id_and_writes_past_one_statement(
    db: Database, campaign_id: str
) -> None:
    """Chunks go in as multi-row statements: a batch naming one id twice must not fail, and
    more rows than one statement takes must all arrive."""
    sid = SessionStore(db).start_session(campaign_id).id
    index = SemanticIndex(db)
    many = [
        Chunk(id=f"{sid}#{i:05d}", campaign_id=campaign_id, session_id=sid, seq=i, text=f"t{i}")
        for i in range(1_203)
    ]
    again = Chunk(id=many[5].id, campaign_id=campaign_id, session_id=sid, seq=5, text="last")
    index.index_chunks([*many, again])
    stored = index.get_chunks(sid)
    assert len(stored) == 1_203
    assert [c.text for c in stored if c.seq == 5] == ["last"]
    assert [c.text for c in stored if c.seq == 1_202] == ["t1202"]


def test_replace_session_chunks_keeps_unchanged_embeddings(db: Database, campaign_id: str) -> None:
    sessions, chunks, _ = _setup(db, campaign_id, n=6)
    index = SemanticIndex(db)
    sid = sessions[0]
    mine = index.get_chunks(sid)
    keep, change = mine[0], mine[1]
    new_set = [keep, Chunk(change.id, campaign_id, sid, change.seq, "new text")]
    index.replace_session_chunks(sid, new_set)
    assert [c.id for c in index.get_chunks(sid)] == [keep.id, change.id]
    missing = index.chunks_missing_embeddings(MODEL, session_id=sid)
    assert [c.id for c in missing] == [change.id]
    assert len(index.get_chunks(sessions[1])) == 3  # the other session untouched


def test_two_models_side_by_side_and_atomic_switch(db: Database, campaign_id: str) -> None:
    _, chunks, vecs = _setup(db, campaign_id, n=6)
    index = SemanticIndex(db)
    index.register_model("tiny-8d", 8)
    rng = np.random.default_rng(1)
    small = [_unit(rng.normal(size=8)) for _ in chunks]
    index.add_embeddings("tiny-8d", [(c.id, v) for c, v in zip(chunks[:3], small[:3], strict=True)])
    campaigns = CampaignStore(db)
    with pytest.raises(ValueError, match="3 chunks have no 'tiny-8d' embedding"):
        campaigns.set_active_embedding_model(campaign_id, "tiny-8d")
    assert index.search(campaign_id, vecs[0], 1)[0].chunk.id == chunks[0].id  # old model serves
    index.add_embeddings("tiny-8d", [(c.id, v) for c, v in zip(chunks[3:], small[3:], strict=True)])
    campaigns.set_active_embedding_model(campaign_id, "tiny-8d")
    assert index.search(campaign_id, small[4], 1)[0].chunk.id == chunks[4].id
    assert index.search(campaign_id, vecs[2], 1, model=MODEL)[0].chunk.id == chunks[2].id
    with pytest.raises(EmbeddingDimensionError):
        index.search(campaign_id, vecs[0], 1)  # 384-d query against the 8-d active model


def test_fulltext_over_chunks(db: Database, campaign_id: str) -> None:
    _setup(db, campaign_id, n=9)
    index = SemanticIndex(db)
    hits = index.fulltext_search(campaign_id, "Where are the dragons?", 10)
    assert {h.chunk.seq for h in hits} == {0, 3, 6}
    assert (
        index.fulltext_search(campaign_id, "dragons", 10, entity_ids=["eldrinax"])[0].chunk.seq == 0
    )
    assert index.fulltext_search("someone-else", "dragons", 10) == []
    by_frequency = index.fulltext_search(campaign_id, "Where are the dragons?", 10,
                                         rank="frequency")
    assert {h.chunk.seq for h in by_frequency} == {0, 3, 6}  # same matches, other ranking
    assert [h.score for h in by_frequency] != [h.score for h in hits]


def test_campaigns_never_mix(db: Database, campaign_id: str) -> None:
    _, _, vecs = _setup(db, campaign_id, n=4)
    other = campaign_id + "-b"
    from glyphoxa_pipelines.memory import Campaign

    CampaignStore(db).upsert(Campaign(other, "B"))
    _setup(db, other, n=4, seed=99)
    hits = SemanticIndex(db).search(campaign_id, vecs[1], 10)
    assert {h.chunk.campaign_id for h in hits} == {campaign_id}


@pytest.mark.parametrize(("exact", "chunk_filter", "ef_search"), [
    (False, False, True), (False, False, False), (True, False, False), (True, True, False)])
def test_the_knn_statement_is_rendered_once_as_the_connection_renders_it(
    db: Database, exact: bool, chunk_filter: bool, ef_search: bool
) -> None:
    from glyphoxa_pipelines.memory.semantic_index import knn_query, knn_statement

    form = {"exact": exact, "chunk_filter": chunk_filter, "ef_search": ef_search}
    text = knn_statement(MODEL, 384, **form)
    with db.connection() as conn:
        assert text == knn_query(MODEL, 384, **form).as_string(conn)
    assert knn_statement(MODEL, 384, **form) is text  # cached: composed once per form
    assert f"'{MODEL}'" in text and "vector(384)" in text
