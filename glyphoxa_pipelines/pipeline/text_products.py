"""Glue between the stored session and the pure text transforms (summaries, recaps, mentions).

Why here: the transforms in `processing/` take chunks, vectors and names; this module fetches
those from PostgreSQL for one session and picks the LLM or the offline method, so the step
functions stay short and the transforms stay free of SQL.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from glyphoxa_pipelines.memory import CampaignStore, SemanticIndex, SummaryStore
from glyphoxa_pipelines.memory.models import Chunk, Recap, SessionSummary
from glyphoxa_pipelines.memory.pipeline_rows import (
    chunk_rows,
    knowledge_rows,
    ownership,
    session_rows,
    summary_rows,
)
from glyphoxa_pipelines.pipeline.services import PipelineServices

MIN_PARTICIPANT_CHUNKS = 2
MAX_PARTICIPANTS = 40


def _array(value: Any) -> Any:
    """pgvector returns `Vector` objects for the untyped column."""
    return value.to_numpy() if hasattr(value, "to_numpy") else value


def _chunks_and_vectors(
    services: PipelineServices, campaign_id: str, session_id: str
) -> tuple[list[Chunk], np.ndarray | None]:
    chunks = SemanticIndex(services.db).get_chunks(session_id)
    model = CampaignStore(services.db).require(campaign_id).active_embedding_model
    vectors = services.db.run(chunk_rows.chunk_vectors_op(session_id, model))
    if chunks and all(c.id in vectors for c in chunks):
        return chunks, np.vstack(
            [np.asarray(_array(vectors[c.id]), dtype=np.float32) for c in chunks]
        )
    return chunks, None


def dm_names(services: PipelineServices, session_id: str) -> list[str]:
    speakers = services.db.run(session_rows.session_speakers_op(session_id))
    return [s["speaker_name"] for s in speakers if s["speaker_role"] == "dm"]


def summarize_session(
    services: PipelineServices, campaign_id: str, session_id: str
) -> tuple[SessionSummary, dict[str, Any]]:
    """LLM summary when configured (falling back when its answer is unusable), else the
    extractive one over the chunk embeddings already stored."""
    from glyphoxa_pipelines.processing import summaries

    chunks, vectors = _chunks_and_vectors(services, campaign_id, session_id)
    if not chunks:
        return SessionSummary(session_id, campaign_id, "", [], method="empty"), {"chunks": 0}
    details: dict[str, Any] = {"chunks": len(chunks), "used_stored_embeddings": vectors is not None}
    llm = services.llm
    if llm is not None:
        summary = summaries.summarize_session_llm(
            chunks, llm, campaign_id=campaign_id, session_id=session_id,
            dm_names=dm_names(services, session_id),
            characters=campaign_characters(services, campaign_id),
        )
        if summary is not None and summary.summary.strip():
            return summary, details
        details["llm_fallback"] = True
    summary = summaries.summarize_session(
        chunks,
        vectors,
        campaign_id=campaign_id,
        session_id=session_id,
        dm_names=dm_names(services, session_id),
        world_names=world_names(services, campaign_id),
        characters=campaign_characters(services, campaign_id),
    )
    return summary, details


def campaign_characters(services: PipelineServices, campaign_id: str) -> dict[str, str]:
    """Who plays whom as the campaign's graph knows it (player characters' `played_by`, from
    earlier sessions' extraction or the DM): a table says it once, the summary needs it in
    every session to tell the DM's "you" about a character."""
    return {
        str(e.attributes["played_by"]): e.name
        for e in services.db.run(knowledge_rows.campaign_entities_op(campaign_id))
        if e.type == "player" and e.attributes.get("played_by")
    }


def world_names(services: PipelineServices, campaign_id: str) -> list[str]:
    """The campaign's in-game names (entities and aliases): an NPC the DM voices under its
    own speaker label is the world's, not a person at the table."""
    names: list[str] = []
    for e in services.db.run(knowledge_rows.campaign_entities_op(campaign_id)):
        if e.type != ownership.EPISODE_TYPE:
            names += [e.name, *e.aliases]
    return names


def participants(services: PipelineServices, session_id: str) -> list[tuple[str, int]]:
    """Entities (not episodes) mentioned in at least two of the session's chunks, by the
    current graph's names: (entity id, chunks mentioning it), most mentioned first."""
    from glyphoxa_pipelines.processing.mentions import MentionFinder

    info = services.db.run(session_rows.session_info_op(session_id))
    entities = [
        e
        for e in services.db.run(knowledge_rows.campaign_entities_op(info["campaign_id"]))
        if e.type != ownership.EPISODE_TYPE
    ]
    finder = MentionFinder.from_entities(entities)
    counts: Counter[str] = Counter()
    for chunk in SemanticIndex(services.db).get_chunks(session_id):
        counts.update(finder.entity_ids(chunk.text))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(eid, n) for eid, n in ranked if n >= MIN_PARTICIPANT_CHUNKS][:MAX_PARTICIPANTS]


def refresh_chunk_entities(services: PipelineServices, campaign_id: str, session_id: str) -> int:
    """Re-tag the session's chunks with the entities the graph now knows (extraction may have
    added names the chunker did not know yet). Returns chunks changed."""
    from glyphoxa_pipelines.processing.mentions import MentionFinder

    entities = [
        e
        for e in services.db.run(knowledge_rows.campaign_entities_op(campaign_id))
        if e.type != ownership.EPISODE_TYPE
    ]
    finder = MentionFinder.from_entities(entities)
    updates = [
        (c.id, finder.entity_ids(c.text)) for c in SemanticIndex(services.db).get_chunks(session_id)
    ]
    return services.db.run(chunk_rows.set_chunk_entities_op(updates))


def recap_session(
    services: PipelineServices, campaign_id: str, session_id: str
) -> tuple[Recap, dict[str, Any]]:
    """ "Previously on..." from this session's summary and its strongest facts."""
    from glyphoxa_pipelines.processing import recaps

    summary = SummaryStore(services.db).get(session_id)
    if summary is None:
        raise ValueError(f"session {session_id!r} has no summary yet: run session_summary first")
    facts = services.db.run(summary_rows.session_fact_sentences_op(session_id))
    campaign = CampaignStore(services.db).require(campaign_id)
    characters = session_characters(services, session_id)
    details: dict[str, Any] = {"facts_used": len(facts), "characters": len(characters)}
    llm = services.llm
    if llm is not None:
        recap = recaps.recap_llm(
            summary, llm, facts=facts, campaign_name=campaign.name, characters=characters
        )
        if recap is not None:
            return recap, details
        details["llm_fallback"] = True
    recap = recaps.recap_from_summary(
        summary, facts=facts, campaign_name=campaign.name, characters=characters
    )
    return recap, details


def session_characters(services: PipelineServices, session_id: str) -> list[str]:
    """The player characters this session's table makes clear (self-introductions, the DM
    calling on a player by the character's name), for a recap that names the party."""
    from glyphoxa_pipelines.processing.cast import infer_characters
    from glyphoxa_pipelines.processing.scenes import lines_from_chunks

    chunks = SemanticIndex(services.db).get_chunks(session_id)
    lines = lines_from_chunks(chunks, dm_names(services, session_id))
    return sorted(set(infer_characters(lines).values()))
