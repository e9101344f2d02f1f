"""Sensors: run the chain when a session ends, and refresh live sessions every few minutes.

`session_ended_sensor` keeps a cursor (the newest `sessions.updated_at` it has seen) and uses a
run key per session *and content version* (entry count and highest entry id), so a session is
processed once per content; a re-import into an ended session runs it again. It adds the
session's and campaign's dynamic partitions before requesting runs.

`live_session_sensor` makes cold search cover the first hours of a four-hour session while it is
still being played: every few minutes, a live session with new entries gets its transcript
corrected, chunked and embedded (unchanged chunks keep their embeddings, so it is incremental).
"""

# No `from __future__ import annotations`: Dagster inspects these annotations at runtime.
import json
from datetime import datetime

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from glyphoxa_pipelines.defs.jobs import live_session_job, session_chain_job
from glyphoxa_pipelines.defs.partitions import (
    CAMPAIGNS,
    SESSIONS,
    campaigns_partitions,
    sessions_partitions,
)
from glyphoxa_pipelines.defs.resources import GlyphoxaDatabase
from glyphoxa_pipelines.memory.pipeline_rows import session_rows

LIVE_INTERVAL_S = 300
LIVE_MIN_NEW_ENTRIES = 10


def _partition_requests(
    context: SensorEvaluationContext, sessions: list[str], campaigns: list[str]
) -> list:
    known_sessions = set(context.instance.get_dynamic_partitions(SESSIONS))
    known_campaigns = set(context.instance.get_dynamic_partitions(CAMPAIGNS))
    requests = []
    new_sessions = [s for s in dict.fromkeys(sessions) if s not in known_sessions]
    new_campaigns = [c for c in dict.fromkeys(campaigns) if c not in known_campaigns]
    if new_sessions:
        requests.append(sessions_partitions.build_add_request(new_sessions))
    if new_campaigns:
        requests.append(campaigns_partitions.build_add_request(new_campaigns))
    return requests


@sensor(
    job=session_chain_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="A session ended (or was imported): add its partition and run the chain.",
)
def session_ended_sensor(
    context: SensorEvaluationContext, glyphoxa_db: GlyphoxaDatabase
) -> SensorResult | SkipReason:
    state = json.loads(context.cursor) if context.cursor else {}
    since = datetime.fromisoformat(state["since"]) if state.get("since") else None
    ended = glyphoxa_db.database().run(session_rows.ended_sessions_op(since))
    if not ended:
        return SkipReason("no session ended since the last tick")
    with_entries = [r for r in ended if r["entries"] > 0]
    run_requests = [
        RunRequest(
            partition_key=r["id"],
            run_key=f"{r['id']}@{r['entries']}-{r['max_entry_id']}",
            tags={"glyphoxa/campaign": r["campaign_id"], "glyphoxa/trigger": "session_ended"},
        )
        for r in with_entries
    ]
    cursor = json.dumps({"since": max(r["updated_at"] for r in ended).isoformat()})
    return SensorResult(
        run_requests=run_requests,
        dynamic_partitions_requests=_partition_requests(
            context, [r["id"] for r in with_entries], [r["campaign_id"] for r in with_entries]
        ),
        cursor=cursor,
    )


@sensor(
    job=live_session_job,
    minimum_interval_seconds=LIVE_INTERVAL_S,
    default_status=DefaultSensorStatus.RUNNING,
    description="Every few minutes: correct, chunk and embed what live sessions added.",
)
def live_session_sensor(
    context: SensorEvaluationContext, glyphoxa_db: GlyphoxaDatabase
) -> SensorResult | SkipReason:
    seen: dict[str, int] = json.loads(context.cursor) if context.cursor else {}
    live = glyphoxa_db.database().run(session_rows.live_sessions_op())
    requests: list[RunRequest] = []
    fresh: list[dict] = []
    for r in live:
        last = int(seen.get(r["id"], 0))
        new_entries = int(r["max_entry_id"]) > last
        if not new_entries:
            continue
        if last and r["entries"] and int(r["max_entry_id"]) - last < LIVE_MIN_NEW_ENTRIES:
            continue  # ids are global, so this over-counts; a cheap floor is enough
        fresh.append(r)
        requests.append(
            RunRequest(
                partition_key=r["id"],
                run_key=f"{r['id']}@live-{r['max_entry_id']}",
                tags={"glyphoxa/campaign": r["campaign_id"], "glyphoxa/trigger": "live"},
            )
        )
    cursor = {r["id"]: int(seen.get(r["id"], 0)) for r in live}  # ended sessions drop out
    cursor.update({r["id"]: int(r["max_entry_id"]) for r in fresh})
    if not requests:
        return SensorResult(
            skip_reason="no live session has new entries", cursor=json.dumps(cursor)
        )
    return SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=_partition_requests(
            context, [r["id"] for r in fresh], [r["campaign_id"] for r in fresh]
        ),
        cursor=json.dumps(cursor),
    )
