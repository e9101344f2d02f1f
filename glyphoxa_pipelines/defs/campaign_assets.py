"""Per-campaign assets, partitioned by the dynamic `campaigns` partition: the name list the
corrector and STT keyword boosting use, and nightly consolidation."""

# No `from __future__ import annotations`: Dagster inspects these annotations at runtime.
from dagster import AssetExecutionContext, AssetsDefinition, MaterializeResult, asset

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.defs.checks import check_specs, materialize_result
from glyphoxa_pipelines.defs.partitions import campaigns_partitions
from glyphoxa_pipelines.defs.resources import (
    EmbedderResource,
    GlyphoxaDatabase,
    LLMResource,
    pipeline_services,
)
from glyphoxa_pipelines.pipeline import versions
from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_STEPS
from glyphoxa_pipelines.pipeline.runner import run_step

GROUP = "campaign_memory"


def build_campaign_assets(settings: Settings | None = None) -> list[AssetsDefinition]:
    codes = versions.code_versions(settings or Settings.from_env())

    @asset(
        name="campaign_name_list",
        partitions_def=campaigns_partitions,
        group_name=GROUP,
        code_version=codes["campaign_name_list"],
        description="Entity names and aliases for the phonetic corrector and STT boosting.",
        kinds={"postgres", "python"},
    )
    def campaign_name_list(
        context: AssetExecutionContext,
        glyphoxa_db: GlyphoxaDatabase,
        embedder: EmbedderResource,
        llm: LLMResource,
    ) -> MaterializeResult:
        return _run("campaign_name_list", context, glyphoxa_db, embedder, llm)

    @asset(
        name="campaign_consolidation",
        partitions_def=campaigns_partitions,
        deps=["campaign_name_list"],
        group_name=GROUP,
        code_version=codes["campaign_consolidation"],
        description=(
            "Nightly: merge duplicate entities, resolve contradictions, recompute confidence "
            "and the review queue from all sessions, write the story so far."
        ),
        check_specs=check_specs("campaign_consolidation"),
        kinds={"postgres", "python"},
    )
    def campaign_consolidation(
        context: AssetExecutionContext,
        glyphoxa_db: GlyphoxaDatabase,
        embedder: EmbedderResource,
        llm: LLMResource,
    ) -> MaterializeResult:
        return _run("campaign_consolidation", context, glyphoxa_db, embedder, llm)

    return [campaign_name_list, campaign_consolidation]


def _run(
    name: str,
    context: AssetExecutionContext,
    glyphoxa_db: GlyphoxaDatabase,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> MaterializeResult:
    services = pipeline_services(glyphoxa_db, embedder, llm)
    return materialize_result(run_step(CAMPAIGN_STEPS[name], services, context.partition_key))
