"""Nightly consolidation for every campaign that changed since its last consolidation."""

# No `from __future__ import annotations`: Dagster inspects these annotations at runtime.
from dagster import (
    DefaultScheduleStatus,
    RunRequest,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from glyphoxa_pipelines.defs.jobs import campaign_job
from glyphoxa_pipelines.defs.partitions import CAMPAIGNS
from glyphoxa_pipelines.defs.resources import GlyphoxaDatabase
from glyphoxa_pipelines.memory.pipeline_rows import session_rows

NIGHTLY_CRON = "0 4 * * *"


@schedule(
    job=campaign_job,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.RUNNING,
    description="04:00 UTC: consolidate each campaign whose sessions, entities or facts changed.",
)
def nightly_consolidation_schedule(
    context: ScheduleEvaluationContext, glyphoxa_db: GlyphoxaDatabase
) -> list[RunRequest] | SkipReason:
    changed = glyphoxa_db.database().run(session_rows.campaigns_to_consolidate_op())
    known = set(context.instance.get_dynamic_partitions(CAMPAIGNS))
    day = context.scheduled_execution_time.strftime("%Y-%m-%d")
    requests = [
        RunRequest(
            partition_key=cid,
            run_key=f"{cid}@{day}",
            tags={"glyphoxa/campaign": cid, "glyphoxa/trigger": "nightly"},
        )
        for cid in changed
        if cid in known  # partitions are added by the session sensor and the CLI
    ]
    if not requests:
        return SkipReason("no campaign changed since its last consolidation")
    return requests
