"""Per-turn embeddings (entry_embeddings): written by the chunk_embeddings step, dropped when an
entry's text changes, cascaded with the session, and read with similarities by chunk_turns_op.

These run the plain model, whose turn vector is the turn embedded alone; turns read off their
chunk's pass (the late ids, the default) are tested in
test_pipeline_embedding_models.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory import (
    CampaignStore,
    EmbeddingDimensionError,
    NewEntry,
    NotFoundError,
    SemanticIndex,
    SessionStore,
)
from glyphoxa_pipelines.pipeline.runner import run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.pipeline.staleness import stale_sessions
from glyphoxa_pipelines.providers.embeddings import DEFAULT_MODEL_ID
from realtime.fact_search import chunk_turns_op

pytestmark = pytest.mark.slow  # embeds turns with the bundled model

MODEL = DEFAULT_MODEL_ID


@pytest.fixture
def pipeline_services(db: Any) -> PipelineServices:
    """The plain model's pipeline, whatever the configured default."""
    return PipelineServices(db, replace(Settings.from_env(), embedding_model=MODEL))


def _rows(db: Any, query: str, params: Any = None) -> list[dict[str, Any]]:
    def op() -> Op:
        return (yield fetch_all(query, params))

    return db.run(op(), transaction=False)


def _vectors(db: Any, session_id: str) -> dict[int, np.ndarray]:
    rows = _rows(
        db,
        "SELECT entry_id, embedding FROM entry_embeddings WHERE session_id = %s AND model = %s",
        (session_id, MODEL),
    )
    return {r["entry_id"]: r["embedding"].to_numpy() for r in rows}


def _embed_session(services: PipelineServices, session_id: str) -> Any:
    return run_session_chain(
        services,
        session_id,
        assets=["corrected_transcript", "transcript_chunks", "chunk_embeddings"],
    )["chunk_embeddings"]


def test_step_embeds_every_turn_once_as_speaker_and_text(
    db: Any, sample_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    _, session_id = sample_session
    outcome = _embed_session(pipeline_services, session_id)
    entries = SessionStore(db).get_entries(session_id)
    vectors = _vectors(db, session_id)
    assert outcome.metadata["turns_embedded"] == len(entries) == len(vectors) > 0
    assert outcome.metadata["turns_per_second"] > 0
    assert all(c.passed for c in outcome.checks), outcome.checks
    assert "every_turn_embedded" in {c.name for c in outcome.checks}
    # exactly '<speaker name>: <text>' is what was embedded
    entry = entries[3]
    speaker = entry.speaker_name or entry.speaker_id
    expected = pipeline_services.embedder.embed([f"{speaker}: {entry.text}"])[0]
    assert np.allclose(vectors[entry.id], expected, atol=1e-5)

    again = run_session_chain(pipeline_services, session_id, assets=["chunk_embeddings"])
    assert again["chunk_embeddings"].metadata["turns_embedded"] == 0
    assert again["chunk_embeddings"].metadata["embedded"] == 0
    assert len(_vectors(db, session_id)) == len(entries)


def test_sessions_with_embedded_chunks_are_stale_until_their_turns_are_embedded(
    db: Any, sample_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    campaign_id, session_id = sample_session
    _embed_session(pipeline_services, session_id)
    # the state before this feature: chunks embedded, turns not
    _rows(db, "DELETE FROM entry_embeddings WHERE session_id = %s RETURNING 1", (session_id,))
    stale = {s.session_id: s for s in stale_sessions(pipeline_services, campaign_id)}
    assert "chunk_embeddings" in stale[session_id].stale_assets
    assert any("turns without" in r for r in stale[session_id].reasons)

    outcome = run_session_chain(pipeline_services, session_id, assets=["chunk_embeddings"])
    meta = outcome["chunk_embeddings"].metadata
    assert meta["embedded"] == 0
    assert meta["turns_embedded"] == SessionStore(db).entry_count(session_id)
    stale = {s.session_id: s for s in stale_sessions(pipeline_services, campaign_id)}
    assert "chunk_embeddings" not in stale[session_id].stale_assets


def test_wrong_dimension_or_unknown_model_writes_nothing(
    db: Any, sample_session: tuple[str, str]
) -> None:
    _, session_id = sample_session
    index = SemanticIndex(db)
    index.register_model(MODEL, 384)
    ids = [e.id for e in SessionStore(db).get_entries(session_id)][:2]
    good = np.ones(384, dtype=np.float32)
    with pytest.raises(EmbeddingDimensionError, match="must have 384 dimensions, got 16"):
        index.add_entry_embeddings(MODEL, [(ids[0], good), (ids[1], np.ones(16))])
    with pytest.raises(ValueError, match="NaN"):
        index.add_entry_embeddings(MODEL, [(ids[0], np.full(384, np.nan))])
    with pytest.raises(NotFoundError, match="unknown embedding model 'no-such-model'"):
        index.add_entry_embeddings("no-such-model", [(ids[0], good)])
    with pytest.raises(NotFoundError, match="unknown embedding model"):
        index.entries_missing_embeddings("no-such-model", session_id=session_id)
    assert _vectors(db, session_id) == {}
    # an entry that no longer exists is skipped, not an error
    assert index.add_entry_embeddings(MODEL, [(-1, good)]) == 0


def test_text_change_drops_the_turns_embedding_and_the_step_re_embeds_it(
    db: Any, sample_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    _, session_id = sample_session
    _embed_session(pipeline_services, session_id)
    store = SessionStore(db)
    entries = store.get_entries(session_id)
    changed, same = entries[2], entries[4]
    store.update_corrections(
        [
            (changed.id, changed.text + " (corrected)", [], "test"),
            (same.id, same.text, [], "test"),  # text unchanged: its vector stays
        ]
    )
    vectors = _vectors(db, session_id)
    assert changed.id not in vectors
    assert same.id in vectors and len(vectors) == len(entries) - 1
    # a vector made from the old text is refused once the text has changed
    index = SemanticIndex(db)
    old = pipeline_services.embedder.embed([changed.text])[0]
    assert index.add_entry_embeddings(MODEL, [(changed.id, old)], texts=[changed.text]) == 0
    assert changed.id not in _vectors(db, session_id)

    outcome = run_session_chain(pipeline_services, session_id, assets=["chunk_embeddings"])
    assert outcome["chunk_embeddings"].metadata["turns_embedded"] == 1
    speaker = changed.speaker_name or changed.speaker_id
    expected = pipeline_services.embedder.embed([f"{speaker}: {changed.text} (corrected)"])[0]
    assert np.allclose(_vectors(db, session_id)[changed.id], expected, atol=1e-5)


def test_deleting_a_session_or_campaign_deletes_its_turn_embeddings(
    db: Any, sample_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    campaign_id, session_id = sample_session
    _embed_session(pipeline_services, session_id)
    other = SessionStore(db).start_session(campaign_id).id
    entry = SessionStore(db).get_entries(session_id)[0]
    index = SemanticIndex(db)
    assert _vectors(db, session_id)
    SessionStore(db).delete_session(session_id)
    assert _vectors(db, session_id) == {}

    # a campaign's deletion cascades through sessions and entries too
    new = SessionStore(db).write_entry(other, NewEntry("k1", "Hello there", speaker_id="sam"))
    assert index.add_entry_embeddings(MODEL, [(new.id, np.ones(384))]) == 1
    assert entry.id not in _vectors(db, other) and len(_vectors(db, other)) == 1
    CampaignStore(db).delete(campaign_id)
    assert _rows(db, "SELECT 1 FROM entry_embeddings WHERE campaign_id = %s", (campaign_id,)) == []


def test_chunk_turns_op_scores_each_turn_against_the_query(
    db: Any, sample_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    _, session_id = sample_session
    _embed_session(pipeline_services, session_id)
    chunk_ids = [c.id for c in SemanticIndex(db).get_chunks(session_id)]
    plain = db.run(chunk_turns_op(chunk_ids), transaction=False)
    turns = [t for ts in plain.values() for t in ts]
    assert turns and all(t["similarity"] is None for t in turns)

    target = turns[len(turns) // 2]
    speaker = target["speaker_name"] or target["speaker_id"]
    query = pipeline_services.embedder.embed([f"{speaker}: {target['text']}"])[0]
    scored = db.run(chunk_turns_op(chunk_ids, query_vector=query, model=MODEL), transaction=False)
    assert {k: [t["id"] for t in v] for k, v in scored.items()} == {
        k: [t["id"] for t in v] for k, v in plain.items()
    }
    flat = [t for ts in scored.values() for t in ts]
    assert all(isinstance(t["similarity"], float) for t in flat)
    best = max(flat, key=lambda t: t["similarity"])
    assert best["id"] == target["id"] and best["similarity"] == pytest.approx(1.0, abs=1e-4)
    # a list works as well as an array; only one of vector / model given: no similarities
    as_list = db.run(
        chunk_turns_op(chunk_ids, query_vector=query.tolist(), model=MODEL), transaction=False
    )
    assert [t["similarity"] for ts in as_list.values() for t in ts] == pytest.approx(
        [t["similarity"] for t in flat]
    )
    only_vector = db.run(chunk_turns_op(chunk_ids, query_vector=query), transaction=False)
    assert all(t["similarity"] is None for ts in only_vector.values() for t in ts)

    # a turn without an embedding (text corrected since) reads None, the others still score
    SessionStore(db).update_corrections([(target["id"], target["text"] + " again", [], "test")])
    after = db.run(chunk_turns_op(chunk_ids, query_vector=query, model=MODEL), transaction=False)
    by_id = {t["id"]: t["similarity"] for ts in after.values() for t in ts}
    assert by_id[target["id"]] is None
    assert sum(s is not None for s in by_id.values()) == len(by_id) - 1
