"""The code location run by `dagster-webserver` and `dagster-daemon` as separate processes,
meeting only in the PostgreSQL instance storage: a run submitted to the webserver is queued,
dequeued by the daemon, launched in its own process, and its success read by a third process
(this test) from the same storage."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.worker_processes import REPO, free_port, stop_processes

pytestmark = pytest.mark.slow  # three Dagster processes and a run

_LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId status } }
    ... on PythonError { message }
    ... on Error { message }
  }
}"""


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def test_webserver_and_daemon_share_the_postgres_instance(db: Any, campaign_id: str,
                                                          tmp_path: Path, monkeypatch: Any
                                                          ) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.defs.partitions import CAMPAIGNS
    from glyphoxa_pipelines.pipeline.dagster_home import prepare_dagster_home

    dagster_env = prepare_dagster_home(Settings.from_env(), home=tmp_path / "dagster")
    for key, value in dagster_env.items():
        monkeypatch.setenv(key, value)
    env = {**os.environ, **dagster_env, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    port = free_port()
    with DagsterInstance.from_config(dagster_env["DAGSTER_HOME"]) as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        instance.add_dynamic_partitions(CAMPAIGNS, [campaign_id])
    procs = [
        subprocess.Popen([_bin("dagster-daemon"), "run", "-w", "workspace.yaml"], cwd=REPO,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([_bin("dagster-webserver"), "-w", "workspace.yaml", "-h", "127.0.0.1",
                          "-p", str(port)], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
    ]
    try:
        url = f"http://127.0.0.1:{port}/graphql"
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.post(url, json={"query": "{ version }"}, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "dagster-webserver did not start"
            assert all(p.poll() is None for p in procs), "a Dagster process exited"
            time.sleep(1)
        params = {
            "selector": {"repositoryLocationName": "glyphoxa",
                         "repositoryName": "__repository__",
                         "jobName": "campaign_consolidation_job"},
            "executionMetadata": {"tags": [{"key": "dagster/partition",
                                            "value": campaign_id}]},
            "runConfigData": {},
        }
        launched = httpx.post(url, json={"query": _LAUNCH, "variables": {"params": params}},
                              timeout=240).json()["data"]["launchRun"]
        assert launched["__typename"] == "LaunchRunSuccess", launched
        assert launched["run"]["status"] == "QUEUED"  # the queue, not a direct launch
        run_id = launched["run"]["runId"]
        with DagsterInstance.from_config(dagster_env["DAGSTER_HOME"]) as instance:
            while True:
                run = instance.get_run_by_id(run_id)
                assert run is not None
                if run.is_finished:
                    break
                assert time.monotonic() < deadline + 300, f"run still {run.status}"
                time.sleep(1)
            assert run.status == DagsterRunStatus.SUCCESS
    finally:
        stop_processes(procs, timeout_s=30)
