"""Two embedding models side by side: a new model is backfilled beside the old one, queries keep
using the old one until every chunk has the new one, then the campaign switches atomically."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

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
    assert CampaignStore(db).require(campaign_id).active_embedding_model == "all-MiniLM-L6-v2"

    outcome = run_session_chain(hashed, session_id, assets=["chunk_embeddings"])["chunk_embeddings"]
    assert outcome.metadata["embedded"] == len(chunks)
    assert outcome.metadata["switched_active_model"] is True
    assert all(c.passed for c in outcome.checks)
    assert CampaignStore(db).require(campaign_id).active_embedding_model == HashEmbedder.model_id
    # both models' vectors are stored for every chunk
    for model in ("all-MiniLM-L6-v2", HashEmbedder.model_id):
        assert not index.chunks_missing_embeddings(model, session_id=session_id)
    # queries now use the new model (16 dimensions) and the old one still answers when named
    query = HashEmbedder().embed(["Where does Eldrinax live?"])[0]
    assert index.search(campaign_id, query, 2)
    minilm = pipeline_services.embedder.embed(["Where does Eldrinax live?"])[0]
    assert index.search(campaign_id, minilm, 2, model="all-MiniLM-L6-v2")
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
