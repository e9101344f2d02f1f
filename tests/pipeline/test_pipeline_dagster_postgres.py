"""Dagster's own storage in PostgreSQL: the repo's dagster.yaml, a `dagster` database on the
same (embedded) server, runs and backfills recorded there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dagster import AssetKey, DagsterInstance, materialize

from tests.support.sample_sessions import FACTS_SESSION, import_sample

pytestmark = pytest.mark.slow  # Dagster runs and a backfill


def test_instance_on_the_embedded_server_records_runs_and_backfills(
    db: Any, campaign_id: str, tmp_path: Path, monkeypatch: Any, dagster_resources: dict
) -> None:
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.defs.partitions import SESSIONS
    from glyphoxa_pipelines.defs.session_assets import build_session_assets
    from glyphoxa_pipelines.pipeline.backfill import launch_campaign_backfill
    from glyphoxa_pipelines.pipeline.dagster_home import PG_URL_ENV, prepare_dagster_home

    env = prepare_dagster_home(Settings.from_env(), home=tmp_path / "dagster")
    assert "dagster?" in env[PG_URL_ENV] and env[PG_URL_ENV].startswith("postgresql+psycopg2://")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    session_id = import_sample(db, campaign_id, FACTS_SESSION)
    with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        instance.add_dynamic_partitions(SESSIONS, [session_id])
        result = materialize(
            build_session_assets()[:1],
            partition_key=session_id,
            instance=instance,
            resources=dagster_resources,
        )
        assert result.success
        record = instance.get_latest_materialization_event(AssetKey("raw_transcript"))
        assert record is not None and record.dagster_event.partition == session_id
        launch = launch_campaign_backfill(db, campaign_id, ["chunk_embeddings"], instance=instance)
        stored = [b.backfill_id for b in instance.get_backfills()]
        assert launch.backfill_ids[0] in stored
