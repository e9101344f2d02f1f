"""The code location loads, with the assets, checks, jobs, sensors and schedule it promises;
and the realtime path never imports Dagster."""

from __future__ import annotations

import contextvars
import subprocess
import sys

from dagster import AssetKey, Definitions

from glyphoxa_pipelines.pipeline import CAMPAIGN_ASSETS, SESSION_ASSETS


def test_definitions_load() -> None:
    from glyphoxa_pipelines.definitions import defs

    # A code location loads in a fresh process. Dagster keeps the current instance's state
    # storage in a context variable, and earlier tests' instances can leave it set after their
    # folders are gone, so the load runs in an empty context, as it would in that fresh process.
    contextvars.Context().run(Definitions.validate_loadable, defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == set(SESSION_ASSETS) | set(CAMPAIGN_ASSETS)
    # the chain is linear, in order
    for up, down in zip(SESSION_ASSETS, SESSION_ASSETS[1:], strict=False):
        assert AssetKey(up) in graph.get(AssetKey(down)).parent_keys
    checks = {c.name for c in graph.asset_check_keys}
    assert {
        "every_entry_corrected",
        "chunks_cover_every_entry",
        "every_chunk_embedded_for_active_model",
        "no_chunk_over_model_limit",
        "facts_reference_existing_entities",
    } <= checks
    assert {j.name for j in defs.resolve_all_job_defs()} >= {
        "session_chain",
        "live_session_refresh",
        "campaign_consolidation_job",
    }
    assert defs.resolve_sensor_def("session_ended_sensor")
    assert defs.resolve_sensor_def("live_session_sensor")
    assert defs.resolve_schedule_def("nightly_consolidation_schedule").cron_schedule == "0 4 * * *"
    emb = graph.get(AssetKey("chunk_embeddings"))
    assert "all-MiniLM-L6-v2" in (emb.code_version or "")
    assert graph.get(AssetKey("extracted_knowledge")).pools == {"glyphoxa_llm"}


def test_realtime_path_never_imports_dagster() -> None:
    code = (
        "import sys, glyphoxa_pipelines.cli, glyphoxa_pipelines.pipeline, "
        "glyphoxa_pipelines.memory.pipeline_rows.chunk_rows, "
        "glyphoxa_pipelines.memory.pipeline_rows.consolidation_rows, "
        "glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows, "
        "glyphoxa_pipelines.memory.pipeline_rows.session_rows, "
        "glyphoxa_pipelines.memory.pipeline_rows.summary_rows; "
        "print('dagster' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_repo_dagster_yaml_is_a_valid_postgres_instance_config(tmp_path, monkeypatch) -> None:
    """The static dagster.yaml parses and names dagster-postgres storage from the env var."""
    import yaml
    from dagster._core.instance.config import dagster_instance_config

    from glyphoxa_pipelines.pipeline.dagster_home import DAGSTER_YAML, PG_URL_ENV

    (tmp_path / "dagster.yaml").write_text(DAGSTER_YAML.read_text())
    monkeypatch.setenv(PG_URL_ENV, "postgresql://postgres:@/dagster?host=/tmp/x")
    config, _ = dagster_instance_config(str(tmp_path))
    assert config["storage"]["postgres"]["postgres_url"] == {"env": PG_URL_ENV}
    assert yaml.safe_load(DAGSTER_YAML.read_text())["concurrency"]["pools"]["default_limit"] >= 1


def test_dagster_storage_url_pins_psycopg2_and_keeps_the_socket() -> None:
    from glyphoxa_pipelines.pipeline.dagster_home import sqlalchemy_url

    socket = "postgresql://postgres:@/dagster?host=/tmp/g/pgdata"
    assert sqlalchemy_url(socket) == "postgresql+psycopg2://postgres:@/dagster?host=/tmp/g/pgdata"
    assert sqlalchemy_url("postgres://u:p@db:5432/dagster").startswith(
        "postgresql+psycopg2://u:p@db"
    )
    dsn = sqlalchemy_url("host=/tmp/s dbname=dagster user=postgres")
    assert dsn.startswith("postgresql+psycopg2://postgres:@/dagster?") and "host=%2Ftmp%2Fs" in dsn
