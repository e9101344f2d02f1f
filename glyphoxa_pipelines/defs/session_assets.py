"""Per-session assets, partitioned by the dynamic `sessions` partition.

Each asset is a thin wrapper over the step of the same name in `pipeline.session_steps`: the step
writes PostgreSQL (no IO manager, nothing pickled) and returns metadata and check outcomes,
which become the asset's MaterializeResult. Steps that call an embedding or LLM endpoint retry
with exponential backoff and run in a concurrency pool, so a backfill cannot flood an endpoint.
"""

# No `from __future__ import annotations`: Dagster inspects these annotations at runtime.
from collections.abc import Sequence

from dagster import (
    AssetExecutionContext,
    AssetsDefinition,
    Backoff,
    Jitter,
    MaterializeResult,
    RetryPolicy,
    asset,
)

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.defs.checks import check_specs, materialize_result
from glyphoxa_pipelines.defs.partitions import sessions_partitions
from glyphoxa_pipelines.defs.resources import (
    EmbedderResource,
    GlyphoxaDatabase,
    LLMResource,
    pipeline_services,
)
from glyphoxa_pipelines.pipeline import versions
from glyphoxa_pipelines.pipeline.runner import run_step
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS, SESSION_STEPS

LLM_POOL = "glyphoxa_llm"
EMBEDDING_POOL = "glyphoxa_embeddings"
GROUP = "session_memory"

ENDPOINT_RETRY = RetryPolicy(
    max_retries=3, delay=5, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS
)

DESCRIPTIONS = {
    "raw_transcript": "The session's L1 entries as recorded (observed, never changed).",
    "corrected_transcript": "Every entry corrected against the campaign's names; raw kept.",
    "transcript_chunks": "Windows of turns within the embedding model's input limit.",
    "chunk_embeddings": (
        "Chunk and per-turn embeddings of the configured model, beside other models'."
    ),
    "extracted_knowledge": "Entities and facts into L3, with provenance and review queue.",
    "session_summary": "What happened, stored, plus an episode entity linked to participants.",
    "session_recap": "A dramatic 'Previously on...' for the next session.",
}
POOLS = {
    "corrected_transcript": LLM_POOL,
    "chunk_embeddings": EMBEDDING_POOL,
    "extracted_knowledge": LLM_POOL,
    "session_summary": LLM_POOL,
    "session_recap": LLM_POOL,
}


def _session_asset(name: str, upstream: str | None, code_version: str) -> AssetsDefinition:
    step = SESSION_STEPS[name]

    @asset(
        name=name,
        partitions_def=sessions_partitions,
        deps=[upstream] if upstream else None,
        group_name=GROUP,
        code_version=code_version,
        description=DESCRIPTIONS[name],
        check_specs=check_specs(name),
        pool=POOLS.get(name),
        retry_policy=ENDPOINT_RETRY if name in POOLS else None,
        kinds={"postgres", "python"},
    )
    def _materialize(
        context: AssetExecutionContext,
        glyphoxa_db: GlyphoxaDatabase,
        embedder: EmbedderResource,
        llm: LLMResource,
    ) -> MaterializeResult:
        services = pipeline_services(glyphoxa_db, embedder, llm)
        outcome = run_step(step, services, context.partition_key)
        for failed in outcome.failed_checks:
            context.log.warning(f"check {failed.name} failed: {failed.description}")
        version = outcome.metadata.get("content_version") if name == "raw_transcript" else None
        return materialize_result(outcome, data_version=version)

    return _materialize


def build_session_assets(settings: Settings | None = None) -> list[AssetsDefinition]:
    """The chain in order, each depending on the one before; code versions carry the
    configured models and logic versions."""
    codes = versions.code_versions(settings or Settings.from_env())
    out: list[AssetsDefinition] = []
    previous: str | None = None
    for name in SESSION_ASSETS:
        out.append(_session_asset(name, previous, codes[name]))
        previous = name
    return out


LIVE_ASSETS: Sequence[str] = (
    "raw_transcript",
    "corrected_transcript",
    "transcript_chunks",
    "chunk_embeddings",
)
