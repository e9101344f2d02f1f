"""Sensors (build_sensor_context), the nightly schedule and the campaign backfill launcher,
against the real database and a real Dagster instance."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from dagster import (
    AssetKey,
    DagsterInstance,
    RunRequest,
    SensorResult,
    build_schedule_context,
    build_sensor_context,
)

from glyphoxa_pipelines.defs.partitions import CAMPAIGNS, SESSIONS
from glyphoxa_pipelines.defs.schedules import nightly_consolidation_schedule
from glyphoxa_pipelines.defs.sensors import live_session_sensor, session_ended_sensor
from glyphoxa_pipelines.memory import NewEntry, SessionStore
from tests.support.sample_sessions import FACTS_SESSION, add_dm_world, import_sample


def _evaluate(sensor: Any, instance: DagsterInstance, resources: dict, cursor: str | None):
    ctx = build_sensor_context(instance=instance, resources=resources, cursor=cursor)
    result = sensor(ctx)
    if isinstance(result, SensorResult):
        for request in result.dynamic_partitions_requests or []:  # as the daemon would
            instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
        return result, result.cursor or cursor
    return result, cursor


def _requests(result: Any) -> list[RunRequest]:
    return list(result.run_requests or []) if isinstance(result, SensorResult) else []


def _drain(sensor: Any, instance: DagsterInstance, resources: dict) -> str | None:
    """Advance the cursor past sessions other tests left in the shared database."""
    cursor = None
    for _ in range(100):
        result, new = _evaluate(sensor, instance, resources, cursor)
        if not _requests(result) and new == cursor:
            return cursor
        cursor = new
    return cursor


def test_ended_session_sensor_adds_partitions_and_runs_once(
    db: Any, campaign_id: str, dagster_instance: DagsterInstance, dagster_resources: dict
) -> None:
    cursor = _drain(session_ended_sensor, dagster_instance, dagster_resources)
    add_dm_world(db, campaign_id)
    session_id = import_sample(db, campaign_id, FACTS_SESSION)

    result, cursor = _evaluate(session_ended_sensor, dagster_instance, dagster_resources, cursor)
    ours = [r for r in _requests(result) if r.partition_key == session_id]
    assert len(ours) == 1
    assert ours[0].run_key == f"{session_id}@12-{max_entry_id(db, session_id)}"
    assert ours[0].tags["glyphoxa/campaign"] == campaign_id
    assert dagster_instance.has_dynamic_partition(SESSIONS, session_id)
    assert dagster_instance.has_dynamic_partition(CAMPAIGNS, campaign_id)

    again, _ = _evaluate(session_ended_sensor, dagster_instance, dagster_resources, cursor)
    assert not [r for r in _requests(again) if r.partition_key == session_id]


def max_entry_id(db: Any, session_id: str) -> int:
    return max(e.id for e in SessionStore(db).get_entries(session_id))


def test_live_session_sensor_refreshes_only_when_entries_arrive(
    db: Any, campaign_id: str, dagster_instance: DagsterInstance, dagster_resources: dict
) -> None:
    store = SessionStore(db)
    session_id = store.start_session(campaign_id, f"{campaign_id}-live").id

    def say(n: int, start: int) -> None:
        store.write_entries(
            session_id,
            [
                NewEntry(f"k{i}", f"Line {i} of the live game.", speaker_name="DM")
                for i in range(start, start + n)
            ],
        )

    say(3, 0)
    seen = _drain(live_session_sensor, dagster_instance, dagster_resources)
    # the drain evaluated our session too: start from a cursor that has not seen it
    import json

    cursor = json.dumps({k: v for k, v in json.loads(seen or "{}").items() if k != session_id})
    result, cursor = _evaluate(live_session_sensor, dagster_instance, dagster_resources, cursor)
    assert [r.partition_key for r in _requests(result)] == [session_id]
    assert dagster_instance.has_dynamic_partition(SESSIONS, session_id)

    result, cursor = _evaluate(live_session_sensor, dagster_instance, dagster_resources, cursor)
    assert not [r for r in _requests(result) if r.partition_key == session_id]

    say(12, 3)
    result, cursor = _evaluate(live_session_sensor, dagster_instance, dagster_resources, cursor)
    assert [r.partition_key for r in _requests(result) if r.partition_key == session_id] == [
        session_id
    ]
    store.end_session(session_id)
    result, cursor = _evaluate(live_session_sensor, dagster_instance, dagster_resources, cursor)
    assert session_id not in (cursor or "")


def test_nightly_schedule_requests_changed_campaigns_only(
    db: Any,
    facts_session: tuple[str, str],
    dagster_instance: DagsterInstance,
    dagster_resources: dict,
    pipeline_services: Any,
) -> None:
    from glyphoxa_pipelines.pipeline.runner import run_campaign_chain

    campaign_id, _ = facts_session
    dagster_instance.add_dynamic_partitions(CAMPAIGNS, [campaign_id])
    when = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)

    def evaluate() -> list[str]:
        ctx = build_schedule_context(
            instance=dagster_instance, resources=dagster_resources, scheduled_execution_time=when
        )
        out = nightly_consolidation_schedule(ctx)
        return [r.partition_key for r in out] if isinstance(out, list) else []

    assert campaign_id in evaluate()
    run_campaign_chain(
        pipeline_services, campaign_id, assets=["campaign_name_list", "campaign_consolidation"]
    )
    assert campaign_id not in evaluate()


def test_backfill_covers_every_session_of_the_campaign(
    db: Any, campaign_id: str, dagster_instance: DagsterInstance
) -> None:
    from glyphoxa_pipelines.pipeline.backfill import launch_campaign_backfill
    from tests.support.sample_sessions import SESSION_01, SESSION_02

    sessions = [import_sample(db, campaign_id, p) for p in (SESSION_01, SESSION_02)]
    launch = launch_campaign_backfill(
        db, campaign_id, ["chunk_embeddings", "campaign_consolidation"], instance=dagster_instance
    )
    assert launch.session_ids == sessions
    backfills = {b.backfill_id: b for b in dagster_instance.get_backfills()}
    assert set(launch.backfill_ids) == set(backfills) and len(backfills) == 2
    session_fill = backfills[launch.backfill_ids[0]]
    assert session_fill.asset_selection == [AssetKey("chunk_embeddings")]
    assert session_fill.tags["glyphoxa/campaign"] == campaign_id
    subset = session_fill.asset_backfill_data.target_subset
    keys = subset.get_partitions_subset(AssetKey("chunk_embeddings")).get_partition_keys()
    assert sorted(keys) == sorted(sessions)
    assert session_fill.title == f"{campaign_id} chunk_embeddings"
    campaign_fill = backfills[launch.backfill_ids[1]]
    assert campaign_fill.asset_selection == [AssetKey("campaign_consolidation")]
    keys = campaign_fill.asset_backfill_data.target_subset.get_partitions_subset(
        AssetKey("campaign_consolidation")).get_partition_keys()
    assert list(keys) == [campaign_id]
    assert set(sessions) <= set(dagster_instance.get_dynamic_partitions(SESSIONS))


@pytest.mark.slow  # a dagster-graphql child process
def test_a_backfill_dagster_refuses_is_an_error(dagster_instance: DagsterInstance) -> None:
    from glyphoxa_pipelines.pipeline.backfill import (
        BackfillLaunchError,
        backfill_params,
        launch_backfills,
    )

    params = backfill_params("c1", ["no_such_asset"], ["s1"])
    with pytest.raises(BackfillLaunchError, match="no_such_asset"):
        launch_backfills([params], Path(dagster_instance.root_directory))
    assert dagster_instance.get_backfills() == []
