"""Which sessions of a campaign hold rows made by an older model or logic version.

Why: after a model or extractor change, the DM (or `glyphoxa status`) needs to see what a
backfill would redo, and which assets it needs; the answer comes from the version columns the
pipeline writes on every derived row, not from Dagster's records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory.pipeline_rows import session_rows
from glyphoxa_pipelines.pipeline import versions
from glyphoxa_pipelines.pipeline.services import PipelineServices

_FIGURES = ("chunks", "unembedded", "unembedded_turns", "old_chunks", "uncorrected")


@dataclass(frozen=True, slots=True)
class SessionStaleness:
    session_id: str
    status: str
    entries: int
    stale_assets: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        return bool(self.stale_assets)


def stale_sessions(
    db: Database | PipelineServices, campaign_id: str, *, embedding_model: str | None = None
) -> list[SessionStaleness]:
    """Every session of the campaign with the assets it needs re-run and why (oldest first).

    `embedding_model` defaults to the configured one (a new model to backfill) when `db` is a
    PipelineServices, else to the campaign's active model.
    """
    services = db if isinstance(db, PipelineServices) else None
    database = services.db if services else db
    llm = bool(services and services.settings.llm_model)
    if embedding_model is None:
        if services is not None:
            embedding_model = services.settings.embedding_model
        else:
            embedding_model = database.run(session_rows.campaign_settings_op(campaign_id))[
                "active_embedding_model"
            ]
    corrector = versions.corrector_version(llm)
    records = database.run(
        session_rows.session_staleness_op(
            campaign_id,
            corrector_version=corrector,
            chunker_version=versions.CHUNKER_VERSION,
            embedding_model=embedding_model,
            extractor_versions=versions.extractor_versions(),
        )
    )
    out: list[SessionStaleness] = []
    for r in records:
        stale: list[str] = []
        reasons: list[str] = []
        if r["entries"] and r["uncorrected"]:
            stale.append("corrected_transcript")
            reasons.append(f"{r['uncorrected']} entries not corrected by {corrector}")
        if r["entries"] and (not r["chunks"] or r["old_chunks"]):
            stale.append("transcript_chunks")
            reasons.append(
                "no chunks" if not r["chunks"] else f"{r['old_chunks']} chunks by an old chunker"
            )
        if r["chunks"] and (r["unembedded"] or r["unembedded_turns"]):
            stale.append("chunk_embeddings")
            if r["unembedded"]:
                reasons.append(f"{r['unembedded']} chunks without a {embedding_model} embedding")
            if r["unembedded_turns"]:
                reasons.append(
                    f"{r['unembedded_turns']} turns without a {embedding_model} embedding"
                )
        if r["old_facts"] or r["old_entities"]:
            stale.append("extracted_knowledge")
            reasons.append(
                f"{r['old_facts']} facts / {r['old_entities']} entities by an old extractor"
            )
        if r["entries"] and not r["has_summary"]:
            stale.append("session_summary")
            reasons.append("no summary")
        if r["entries"] and not r["has_recap"]:
            stale.append("session_recap")
            reasons.append("no recap")
        out.append(
            SessionStaleness(
                session_id=r["session_id"],
                status=r["status"],
                entries=int(r["entries"]),
                stale_assets=stale,
                reasons=reasons,
                figures={k: r[k] for k in _FIGURES},
            )
        )
    return out
