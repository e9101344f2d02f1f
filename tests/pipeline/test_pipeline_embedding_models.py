"""Two embedding models side by side: a new model is backfilled beside the old one, queries keep
using the old one until every chunk has the new one, then the campaign switches atomically."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL
from glyphoxa_pipelines.memory import CampaignStore, SemanticIndex
from glyphoxa_pipelines.pipeline.runner import run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.pipeline.staleness import stale_sessions
from tests.support.hash_embedder import HashEmbedder


def test_second_model_is_backfilled_beside_the_first_then_switched(
    db: Any, facts_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    campaign_id, session_id = facts_session
    run_session_chain(
        pipeline_services,
        session_id,
        assets=["corrected_transcript", "transcript_chunks", "chunk_embeddings"],
    )
    index = SemanticIndex(db)
    chunks = index.get_chunks(session_id)
    hashed = PipelineServices(
        db,
        replace(pipeline_services.settings, embedding_model=HashEmbedder.model_id),
        embedder_factory=HashEmbedder,
    )
    stale = stale_sessions(hashed, campaign_id)
    assert [s.stale_assets for s in stale if s.session_id == session_id][0][:1] == [
        "chunk_embeddings"
    ]
    assert CampaignStore(db).require(campaign_id).active_embedding_model == DEFAULT_EMBEDDING_MODEL

    outcome = run_session_chain(hashed, session_id, assets=["chunk_embeddings"])["chunk_embeddings"]
    assert outcome.metadata["embedded"] == len(chunks)
    assert outcome.metadata["switched_active_model"] is True
    assert all(c.passed for c in outcome.checks)
    assert CampaignStore(db).require(campaign_id).active_embedding_model == HashEmbedder.model_id
    # both models' vectors are stored for every chunk
    for model in (DEFAULT_EMBEDDING_MODEL, HashEmbedder.model_id):
        assert not index.chunks_missing_embeddings(model, session_id=session_id)
    # queries now use the new model (16 dimensions) and the old one still answers when named
    query = HashEmbedder().embed(["Where does Eldrinax live?"])[0]
    assert index.search(campaign_id, query, 2)
    minilm = pipeline_services.embedder.embed(["Where does Eldrinax live?"])[0]
    assert index.search(campaign_id, minilm, 2, model=DEFAULT_EMBEDDING_MODEL)
    assert not [
        s for s in stale_sessions(hashed, campaign_id) if "chunk_embeddings" in s.stale_assets
    ]


def test_switching_to_int8_documents_marks_float_rows_stale_and_reembeds(
    db: Any, facts_session: tuple[str, str], pipeline_services: PipelineServices
) -> None:
    """The int8 encoder is a model bump: float rows are not reused under its id."""
    from glyphoxa_pipelines.providers.embeddings import DEFAULT_MODEL_ID, INT8_MODEL_ID

    campaign_id, session_id = facts_session
    floats = PipelineServices(
        db, replace(pipeline_services.settings, embedding_model=DEFAULT_MODEL_ID)
    )
    run_session_chain(
        floats, session_id, assets=["corrected_transcript", "transcript_chunks", "chunk_embeddings"]
    )
    int8 = PipelineServices(db, replace(pipeline_services.settings, embedding_model=INT8_MODEL_ID))
    assert int8.embedder.model_id == INT8_MODEL_ID
    stale = [s for s in stale_sessions(int8, campaign_id) if s.session_id == session_id][0]
    assert "chunk_embeddings" in stale.stale_assets
    assert not [s for s in stale_sessions(floats, campaign_id) if "chunk_embeddings" in s.stale_assets]

    outcome = run_session_chain(int8, session_id, assets=["chunk_embeddings"])["chunk_embeddings"]
    chunks = SemanticIndex(db).get_chunks(session_id)
    assert outcome.metadata["embedded"] == len(chunks) > 0
    assert outcome.metadata["turns_embedded"] > 0
    assert outcome.metadata["switched_active_model"] is True
    assert CampaignStore(db).require(campaign_id).active_embedding_model == INT8_MODEL_ID
    assert not [s for s in stale_sessions(int8, campaign_id) if "chunk_embeddings" in s.stale_assets]
    # the int8 rows answer an int8 query, and they are not the float rows
    query = int8.embedder.embed(["Where does Eldrinax live?"])[0]
    hits = SemanticIndex(db).search(campaign_id, query, 2, model=INT8_MODEL_ID)
    assert hits and hits[0].score < 0.8  # cosine distance


def test_late_turn_model_reads_turns_off_their_chunk_and_marks_plain_rows_stale(
    db: Any, campaign_id: str, pipeline_services: PipelineServices
) -> None:
    """The late-chunking id is a model bump for turn rows: plain rows go stale, chunks keep the
    model's own vectors, a turn whole in a chunk gets the chunk pass's mean over its line, a
    turn too long for any chunk is embedded alone, and a re-run gives the same vectors."""
    import numpy as np

    from glyphoxa_pipelines.db.operations import Op, execute, fetch_all
    from glyphoxa_pipelines.memory import NewEntry, SessionStore
    from glyphoxa_pipelines.processing.turn_spans import turn_spans
    from glyphoxa_pipelines.providers.embeddings import DEFAULT_MODEL_ID, LATE_MODEL_ID

    store = SessionStore(db)
    session_id = store.start_session(campaign_id).id
    long_turn = " ".join(["The keep's gate is carved with the names of the dead."] * 30)
    said = [("matt", "You reach the ruined keep."), ("sam", "Yeah."), ("matt", long_turn),
            ("laura", "I check the gate for traps."), ("sam", "Yeah."),
            ("matt", "The innkeeper's silver key fits the lock.")]
    for i, (speaker, text) in enumerate(said):
        store.write_entry(
            session_id, NewEntry(f"k{i}", text, speaker_id=speaker, speaker_name=speaker.upper())
        )
    plain = PipelineServices(
        db, replace(pipeline_services.settings, embedding_model=DEFAULT_MODEL_ID)
    )
    run_session_chain(plain, session_id, assets=["transcript_chunks", "chunk_embeddings"])
    late = PipelineServices(db, replace(pipeline_services.settings, embedding_model=LATE_MODEL_ID))
    assert late.embedder.model_id == LATE_MODEL_ID
    stale = [s for s in stale_sessions(late, campaign_id) if s.session_id == session_id][0]
    assert "chunk_embeddings" in stale.stale_assets

    outcome = run_session_chain(late, session_id, assets=["chunk_embeddings"])["chunk_embeddings"]
    index = SemanticIndex(db)
    chunks = index.get_chunks(session_id)
    entries = store.get_entries(session_id)
    spans = turn_spans(entries, chunks)
    long_id = next(e.id for e in entries if e.text == long_turn)
    assert long_id not in spans and len(spans) == len(said) - 1
    assert outcome.metadata["turns_from_chunks"] == len(spans)
    assert outcome.metadata["turns_embedded"] == len(said)
    assert outcome.metadata["embedded"] == len(chunks)
    assert all(c.passed for c in outcome.checks), outcome.checks
    assert not [s for s in stale_sessions(late, campaign_id) if "chunk_embeddings" in s.stale_assets]

    def rows(query: str, params: Any) -> list[dict[str, Any]]:
        def op() -> Op:
            return (yield fetch_all(query, params))

        return db.run(op(), transaction=False)

    def turn_vectors(model: str) -> dict[int, np.ndarray]:
        return {r["entry_id"]: r["embedding"].to_numpy() for r in rows(
            "SELECT entry_id, embedding FROM entry_embeddings WHERE session_id = %s AND model = %s",
            (session_id, model))}

    stored = turn_vectors(LATE_MODEL_ID)
    plain_vectors = turn_vectors(DEFAULT_MODEL_ID)
    by_chunk = {c.id: c for c in chunks}
    embedder = late.embedder
    for entry in entries:
        if entry.id == long_id:
            alone = embedder.embed([f"{entry.speaker_name}: {entry.text}"])[0]
            assert np.allclose(stored[entry.id], alone, atol=1e-5)
            continue
        span = spans[entry.id]
        _, span_vectors = embedder.embed_with_spans(
            [by_chunk[span.chunk_id].text], [[(span.start, span.end)]])
        assert np.allclose(stored[entry.id], span_vectors[0][0], atol=1e-5)
    # the two "SAM: Yeah." are read in their own places, so they differ, unlike plain rows
    yeahs = [e.id for e in entries if e.text == "Yeah."]
    assert float(stored[yeahs[0]] @ stored[yeahs[1]]) < 0.999
    assert np.allclose(plain_vectors[yeahs[0]], plain_vectors[yeahs[1]], atol=1e-6)
    chunk_rows = {r["chunk_id"]: r["embedding"].to_numpy() for r in rows(
        "SELECT chunk_id, embedding FROM chunk_embeddings WHERE session_id = %s AND model = %s",
        (session_id, LATE_MODEL_ID))}
    for chunk in chunks:  # chunks keep the model's own vectors
        assert np.allclose(chunk_rows[chunk.id], embedder.embed([chunk.text])[0], atol=1e-6)

    # a turn's vector lost (say, a crash between writes): the re-run reads it off its chunk
    # again, the same vector, without rewriting the chunk rows
    lost = yeahs[1]

    def drop() -> Op:
        yield execute("DELETE FROM entry_embeddings WHERE entry_id = %s AND model = %s",
                      (lost, LATE_MODEL_ID))

    db.run(drop())
    again = run_session_chain(late, session_id, assets=["chunk_embeddings"])["chunk_embeddings"]
    assert again.metadata["embedded"] == 0
    assert again.metadata["turns_from_chunks"] == again.metadata["turns_embedded"] == 1
    assert np.allclose(turn_vectors(LATE_MODEL_ID)[lost], stored[lost], atol=1e-6)
