"""Asset checks guarding the chain, declared on the assets that compute them.

The step functions evaluate the checks against PostgreSQL right after writing (they know the
model and versions in play); here they become `AssetCheckSpec`s and `AssetCheckResult`s.
Blocking checks stop downstream assets of the same run when they fail with ERROR severity:
nothing is summarised from a session whose chunks miss entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    MaterializeResult,
    MetadataValue,
)

from glyphoxa_pipelines.pipeline.outcomes import StepOutcome

# asset -> [(check name, description, blocking)]
CHECKS: dict[str, list[tuple[str, str, bool]]] = {
    "raw_transcript": [
        ("raw_transcript_not_empty", "An ended session has at least one entry.", True),
    ],
    "corrected_transcript": [
        ("every_entry_corrected", "Every entry went through the current corrector.", False),
    ],
    "transcript_chunks": [
        ("chunks_cover_every_entry", "Every non-empty entry lies in some chunk.", True),
        (
            "no_chunk_over_model_limit",
            "No chunk exceeds the embedding model's input limit (nothing silently cut).",
            True,
        ),
    ],
    "chunk_embeddings": [
        ("every_chunk_embedded", "Every chunk has an embedding of the configured model.", True),
        (
            "every_turn_embedded",
            "Every turn (session entry) has an embedding of the configured model.",
            False,
        ),
        (
            "every_chunk_embedded_for_active_model",
            "Every chunk has an embedding of the model the campaign's queries use.",
            False,
        ),
    ],
    "extracted_knowledge": [
        (
            "facts_reference_existing_entities",
            "Every fact of the session points at entities that exist.",
            False,
        ),
    ],
    "session_summary": [("summary_not_empty", "The session has a non-empty summary.", False)],
    "session_recap": [("recap_not_empty", "The recap has text.", False)],
    "campaign_name_list": [],
    "campaign_consolidation": [
        (
            "campaign_facts_reference_existing_entities",
            "After merges, no fact points at a missing entity.",
            False,
        ),
    ],
}


def check_specs(asset_name: str) -> list[AssetCheckSpec]:
    return [
        AssetCheckSpec(name, asset=asset_name, description=description, blocking=blocking)
        for name, description, blocking in CHECKS[asset_name]
    ]


def _metadata_value(value: Any) -> Any:
    if isinstance(value, dict | list | tuple):
        return MetadataValue.json(value if not isinstance(value, tuple) else list(value))
    if isinstance(value, str) and len(value) > 120:
        return MetadataValue.md(value)
    return value


def metadata(values: dict[str, Any]) -> dict[str, Any]:
    """Step metadata as Dagster metadata (None dropped, structures as JSON)."""
    return {k: _metadata_value(v) for k, v in values.items() if v is not None}


def materialize_result(
    outcome: StepOutcome, *, data_version: str | None = None, extra: dict[str, Any] | None = None
) -> MaterializeResult:
    """A step's outcome as the asset's MaterializeResult with one result per declared check."""
    from dagster import DataVersion

    declared = {name for name, _, _ in CHECKS[outcome.asset]}
    results: list[AssetCheckResult] = []
    for check in outcome.checks:
        if check.name not in declared:
            continue
        results.append(
            AssetCheckResult(
                check_name=check.name,
                passed=check.passed,
                severity=(
                    AssetCheckSeverity.ERROR
                    if check.severity == "error"
                    else AssetCheckSeverity.WARN
                ),
                description=check.description,
                metadata=metadata(check.metadata),
            )
        )
    missing = declared - {r.check_name for r in results}
    for name in sorted(missing):  # a step that could not evaluate a check says so
        results.append(
            AssetCheckResult(check_name=name, passed=False, description="not evaluated by the step")
        )
    values = {**outcome.metadata, "seconds": round(outcome.seconds, 3), **(extra or {})}
    return MaterializeResult(
        metadata=metadata(values),
        check_results=results,
        data_version=DataVersion(data_version) if data_version else None,
    )


def check_names(assets: Sequence[str]) -> list[str]:
    return [name for a in assets for name, _, _ in CHECKS[a]]
