"""The session chain materialized by Dagster against the real embedded database: rows, checks,
idempotency, and DM decisions surviving reprocessing."""

from __future__ import annotations

from typing import Any

from dagster import AssetKey, materialize

from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL
from glyphoxa_pipelines.defs.campaign_assets import build_campaign_assets
from glyphoxa_pipelines.defs.partitions import CAMPAIGNS, SESSIONS
from glyphoxa_pipelines.defs.session_assets import build_session_assets
from glyphoxa_pipelines.memory import (
    KnowledgeGraph,
    RecapStore,
    Relationship,
    SemanticIndex,
    SessionStore,
    SummaryStore,
)
from glyphoxa_pipelines.pipeline.session_steps import episode_entity_id
from tests.support.sample_sessions import SESSION_01

SESSION_ASSETS = build_session_assets()
CAMPAIGN_ASSETS = build_campaign_assets()


def _materialize(instance: Any, resources: dict[str, Any], session_id: str, selection=None):
    if not instance.has_dynamic_partition(SESSIONS, session_id):
        instance.add_dynamic_partitions(SESSIONS, [session_id])
    return materialize(
        SESSION_ASSETS,
        partition_key=session_id,
        instance=instance,
        resources=resources,
        selection=selection,
    )


def _snapshot(db: Any, campaign_id: str, session_id: str) -> dict[str, Any]:
    """Every row the session's pipeline made, without ids and timestamps."""
    entries = SessionStore(db).get_entries(session_id)
    chunks = SemanticIndex(db).get_chunks(session_id)
    rows = db.run(_facts_op(campaign_id))
    entities = KnowledgeGraph(db).find_entities(campaign_id)
    return {
        "entries": [(e.raw_text, e.text, e.corrector_version) for e in entries],
        "chunks": [(c.id, c.text, tuple(c.entity_ids), c.token_count) for c in chunks],
        "embedded": len(
            SemanticIndex(db).chunks_missing_embeddings(DEFAULT_EMBEDDING_MODEL, session_id=session_id)
        ),
        "entities": sorted(
            (e.id, e.type, e.name, tuple(e.aliases), e.provenance) for e in entities
        ),
        "facts": rows,
        "summary": SummaryStore(db).get(session_id).summary,
        "recap": RecapStore(db).get(session_id).text,
    }


def _facts_op(campaign_id: str):
    from glyphoxa_pipelines.db.operations import fetch_all

    rows = yield fetch_all(
        """SELECT source_id, rel_type, target_id, status, round(confidence::numeric, 3) AS conf,
                  provenance, dm_confirmed, invalidated_at IS NULL AS current
           FROM relationships WHERE campaign_id = %s
           ORDER BY source_id, rel_type, target_id, status""",
        (campaign_id,),
    )
    return [tuple(r.values()) for r in rows]


def test_session_chain_materializes_with_checks(
    db: Any, sample_session: tuple[str, str], dagster_instance: Any, dagster_resources: dict
) -> None:
    campaign_id, session_id = sample_session
    result = _materialize(dagster_instance, dagster_resources, session_id)
    assert result.success
    mats = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
    assert set(mats) == {a.key.to_user_string() for a in SESSION_ASSETS}
    raw = mats["raw_transcript"].step_materialization_data.materialization.metadata
    lines = [ln for ln in SESSION_01.read_text().splitlines() if ln.strip()]
    assert raw["entries"].value == len(lines) and raw["speakers"].value >= 3
    corrected = mats["corrected_transcript"].step_materialization_data.materialization.metadata
    assert corrected["corrections"].value >= 1  # "iron hold" -> Ironhold and friends
    evaluations = result.get_asset_check_evaluations()
    assert evaluations and all(e.passed for e in evaluations), [
        (e.check_name, e.description) for e in evaluations if not e.passed
    ]

    entries = SessionStore(db).get_entries(session_id)
    assert any("Ironhold" in e.text and "iron hold" in e.raw_text for e in entries)
    chunks = SemanticIndex(db).get_chunks(session_id)
    assert chunks and all(c.token_count <= 256 for c in chunks)
    assert not SemanticIndex(db).chunks_missing_embeddings(
        DEFAULT_EMBEDDING_MODEL, session_id=session_id
    )
    summary = SummaryStore(db).get(session_id)
    assert summary is not None and summary.summary
    episode = KnowledgeGraph(db).get_entity(campaign_id, episode_entity_id(session_id))
    assert episode is not None and episode.type == "episode"
    assert RecapStore(db).get(session_id).text.strip()
    # the chunk the semantic index returns for a question about the wizard is from this session
    from glyphoxa_pipelines.providers.embeddings import get_embedder

    query = get_embedder().embed(["Where does the old wizard live?"])[0]
    hits = SemanticIndex(db).search(campaign_id, query, 3)
    assert hits and hits[0].chunk.session_id == session_id


def test_materializing_twice_gives_the_same_rows(
    db: Any, facts_session: tuple[str, str], dagster_instance: Any, dagster_resources: dict
) -> None:
    campaign_id, session_id = facts_session
    assert _materialize(dagster_instance, dagster_resources, session_id).success
    first = _snapshot(db, campaign_id, session_id)
    assert any(f[1] == "lives_in" for f in first["facts"])
    assert _materialize(dagster_instance, dagster_resources, session_id).success
    assert _snapshot(db, campaign_id, session_id) == first


def test_dm_decisions_survive_reprocessing(
    db: Any, facts_session: tuple[str, str], dagster_instance: Any, dagster_resources: dict
) -> None:
    campaign_id, session_id = facts_session
    assert _materialize(dagster_instance, dagster_resources, session_id).success
    kg = KnowledgeGraph(db)
    extracted = [r for r in db.run(_session_facts(session_id)) if r.rel_type != "appears_in"]
    assert extracted, "the sample session should yield at least one extracted fact"
    confirmed = kg.set_fact_status(campaign_id, extracted[0].id, "canon", dm_confirmed=True)
    rejected = None
    if len(extracted) > 1:
        rejected = kg.set_fact_status(campaign_id, extracted[1].id, "rejected")
    dm_fact = kg.add_relationship(
        Relationship(campaign_id, "eldrinax", "tower-of-whispers", "lives_in", provenance="dm")
    )

    again = _materialize(
        dagster_instance,
        dagster_resources,
        session_id,
        selection=[AssetKey("extracted_knowledge"), AssetKey("session_summary")],
    )
    assert again.success
    after = kg.get_relationship(campaign_id, confirmed.id)
    assert after == confirmed  # same row, same values: the pipeline never touched it
    assert kg.get_relationship(campaign_id, dm_fact.id) == dm_fact
    if rejected is not None:
        same_triple = [
            r
            for r in db.run(_session_facts(session_id))
            if (r.source_id, r.rel_type, r.target_id)
            == (rejected.source_id, rejected.rel_type, rejected.target_id)
        ]
        assert [r.status for r in same_triple] == ["rejected"]  # not re-added as pending
    assert kg.get_entity(campaign_id, "eldrinax").provenance == "dm"


def _session_facts(session_id: str):
    from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import session_facts_op

    return session_facts_op(session_id)


def test_campaign_assets_consolidate(
    db: Any, sample_session: tuple[str, str], dagster_instance: Any, dagster_resources: dict
) -> None:
    from tests.support.sample_sessions import SESSION_02, import_sample

    campaign_id, first = sample_session
    second = import_sample(db, campaign_id, SESSION_02)
    for sid in (first, second):
        assert _materialize(dagster_instance, dagster_resources, sid).success
    dagster_instance.add_dynamic_partitions(CAMPAIGNS, [campaign_id])
    result = materialize(
        CAMPAIGN_ASSETS,
        partition_key=campaign_id,
        instance=dagster_instance,
        resources=dagster_resources,
    )
    assert result.success
    story = RecapStore(db).get_story(campaign_id)
    assert story and "Session 1" in story and "Session 2" in story
    settings = db.run(_campaign_settings(campaign_id))
    assert "Eldrinax" in settings["settings"]["stt_keywords"]


def _campaign_settings(campaign_id: str):
    from glyphoxa_pipelines.memory.pipeline_rows.session_rows import campaign_settings_op

    return campaign_settings_op(campaign_id)


def test_rematerializing_chunks_alone_keeps_checks_green(
    sample_session: tuple[str, str], dagster_instance: Any, dagster_resources: dict
) -> None:
    """Re-chunking keeps the embeddings of unchanged chunks: nothing to re-embed."""
    _, session_id = sample_session
    assert _materialize(dagster_instance, dagster_resources, session_id).success
    keys = [AssetKey("transcript_chunks"), AssetKey("chunk_embeddings")]
    result = _materialize(dagster_instance, dagster_resources, session_id, keys)
    assert result.success
    assert all(e.passed for e in result.get_asset_check_evaluations())
    mats = {m.asset_key: m for m in result.get_asset_materialization_events()}
    meta = mats[AssetKey("chunk_embeddings")].step_materialization_data.materialization.metadata
    assert meta["embedded"].value == 0
