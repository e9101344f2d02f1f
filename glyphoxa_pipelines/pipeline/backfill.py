"""Launch a Dagster backfill over all of a campaign's sessions (e.g. after a model change).

The backfill is requested through Dagster's GraphQL API with the `launchPartitionBackfill`
mutation, the one the UI's "Launch backfill" dialog sends, so it is the UI's own kind of
backfill: stored in the instance, executed by the daemon (`glyphoxa dev`), visible and
controllable (cancel, re-execute failures) in the UI.

Why the `dagster-graphql` command in a child process: Dagster keeps both the backfill
constructor and the in-process GraphQL context under `dagster._core`, private to Dagster. The
command is the public way to run a GraphQL document against a workspace and an instance without
a webserver; it loads the same workspace.yaml as `glyphoxa dev`. Dagster is imported inside the
functions only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.memory.pipeline_rows import session_rows
from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_ASSETS
from glyphoxa_pipelines.pipeline.dagster_home import WORKSPACE_YAML
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS

# Loading the code location (a gRPC server for the workspace) takes seconds; a minute of
# margin on a busy machine, and a hung child still ends.
GRAPHQL_TIMEOUT_S = 300.0

# One field per backfill, aliased, in one document: one child process launches them all.
_LAUNCH_FIELD = """
  {alias}: launchPartitionBackfill(backfillParams: ${alias}) {{
    __typename
    ... on LaunchBackfillSuccess {{ backfillId }}
    ... on Error {{ message }}
  }}"""


class BackfillLaunchError(RuntimeError):
    """Dagster refused the backfill, or the `dagster-graphql` command failed."""


@dataclass(frozen=True, slots=True)
class BackfillLaunch:
    campaign_id: str
    session_ids: list[str]
    session_assets: list[str]
    campaign_assets: list[str]
    backfill_ids: list[str] = field(default_factory=list)


def split_assets(assets: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """(session assets, campaign assets) in chain order; unknown names are an error."""
    if not assets:
        return list(SESSION_ASSETS), list(CAMPAIGN_ASSETS)
    unknown = [a for a in assets if a not in SESSION_ASSETS and a not in CAMPAIGN_ASSETS]
    if unknown:
        known = ", ".join((*SESSION_ASSETS, *CAMPAIGN_ASSETS))
        raise ValueError(f"unknown assets {', '.join(unknown)}; choose from {known}")
    return (
        [a for a in SESSION_ASSETS if a in assets],
        [a for a in CAMPAIGN_ASSETS if a in assets],
    )


def launch_campaign_backfill(
    db: Any,
    campaign_id: str,
    assets: Sequence[str] | None = None,
    *,
    instance: Any = None,
    workspace: Path = WORKSPACE_YAML,
) -> BackfillLaunch:
    """Add the campaign's sessions as partitions (if missing) and request one backfill over
    them for the chosen session assets, plus one for the campaign partition when campaign
    assets are chosen. `instance` defaults to DagsterInstance.get() (DAGSTER_HOME); it must
    live on disk, since the `dagster-graphql` child opens it from its home folder."""
    from dagster import DagsterInstance

    from glyphoxa_pipelines.defs.partitions import CAMPAIGNS, SESSIONS

    session_assets, campaign_assets = split_assets(assets)
    db.run(session_rows.campaign_settings_op(campaign_id))  # unknown campaign -> NotFoundError
    session_ids = db.run(session_rows.campaign_session_ids_op(campaign_id))
    instance = instance or DagsterInstance.get()
    if instance.is_ephemeral:
        raise BackfillLaunchError("a backfill needs a Dagster instance on disk (DAGSTER_HOME)")

    known = set(instance.get_dynamic_partitions(SESSIONS))
    missing = [s for s in session_ids if s not in known]
    if missing:
        instance.add_dynamic_partitions(SESSIONS, missing)
    if not instance.has_dynamic_partition(CAMPAIGNS, campaign_id):
        instance.add_dynamic_partitions(CAMPAIGNS, [campaign_id])

    plans = [(session_assets, session_ids), (campaign_assets, [campaign_id])]
    params = [
        backfill_params(campaign_id, selected, partitions)
        for selected, partitions in plans
        if selected and partitions
    ]
    ids = launch_backfills(params, Path(instance.root_directory), workspace) if params else []
    return BackfillLaunch(campaign_id, list(session_ids), session_assets, campaign_assets, ids)


def backfill_params(
    campaign_id: str, selected: Sequence[str], partitions: Sequence[str]
) -> dict[str, Any]:
    """`LaunchBackfillParams` for one asset backfill: the chosen assets over the partitions,
    tagged with the campaign so runs and backfills can be found by it."""
    tags = {"glyphoxa/campaign": campaign_id, "glyphoxa/trigger": "backfill"}
    return {
        "assetSelection": [{"path": [name]} for name in selected],
        "partitionNames": list(partitions),
        "tags": [{"key": k, "value": v} for k, v in tags.items()],
        "title": f"{campaign_id} {'+'.join(selected)}"[:100],
        "description": f"glyphoxa backfill --campaign {campaign_id}",
    }


def launch_backfills(
    params: Sequence[dict[str, Any]], dagster_home: Path, workspace: Path = WORKSPACE_YAML
) -> list[str]:
    """Send one `launchPartitionBackfill` per params through `dagster-graphql`, in order;
    return the backfill ids."""
    aliases = [f"b{i}" for i in range(len(params))]
    document = (
        "mutation Launch("
        + ", ".join(f"${a}: LaunchBackfillParams!" for a in aliases)
        + ") {"
        + "".join(_LAUNCH_FIELD.format(alias=a) for a in aliases)
        + "\n}"
    )
    data = run_graphql(document, dict(zip(aliases, params, strict=True)), dagster_home, workspace)
    ids: list[str] = []
    for alias in aliases:
        result = data.get(alias) or {}
        if result.get("__typename") != "LaunchBackfillSuccess":
            reason = result.get("message") or result.get("__typename") or "no result"
            raise BackfillLaunchError(f"Dagster refused the backfill: {reason}")
        ids.append(str(result["backfillId"]))
    return ids


def run_graphql(
    document: str, variables: dict[str, Any], dagster_home: Path, workspace: Path
) -> dict[str, Any]:
    """Run a GraphQL document with `dagster-graphql` against the workspace and the instance in
    `dagster_home`; return its `data`. The answer goes through a file (`-o`): the child's
    stdout also carries the code location's log lines."""
    command = _dagster_graphql_command()
    with tempfile.TemporaryDirectory(prefix="glyphoxa-graphql-") as tmp:
        answer = Path(tmp) / "answer.json"
        args = [
            *command, "-w", str(workspace), "-t", document,
            "-v", json.dumps(variables), "-o", str(answer),
        ]  # fmt: skip
        env = {**os.environ, "DAGSTER_HOME": str(dagster_home)}
        try:
            proc = subprocess.run(
                args, env=env, capture_output=True, text=True, timeout=GRAPHQL_TIMEOUT_S
            )
        except subprocess.TimeoutExpired as exc:
            raise BackfillLaunchError(f"dagster-graphql took over {exc.timeout:.0f}s") from exc
        if proc.returncode != 0 or not answer.exists():
            raise BackfillLaunchError(
                f"dagster-graphql failed (exit {proc.returncode}): {proc.stderr[-2000:]}"
            )
        reply = json.loads(answer.read_text(encoding="utf-8"))
    if reply.get("errors"):
        messages = "; ".join(str(e.get("message")) for e in reply["errors"])
        raise BackfillLaunchError(f"Dagster GraphQL error: {messages}")
    return dict(reply.get("data") or {})


def _dagster_graphql_command() -> list[str]:
    """The `dagster-graphql` script of this interpreter's environment (a venv's bin folder is
    not always on PATH), else the one on PATH."""
    beside = Path(sys.executable).parent / "dagster-graphql"
    found = str(beside) if beside.exists() else shutil.which("dagster-graphql")
    if found is None:
        raise BackfillLaunchError("the dagster-graphql command is not installed")
    return [found]


def daemon_running(instance: Any, within_s: float = 120.0) -> bool:
    """Whether a backfill daemon has sent a heartbeat recently (else backfills wait)."""
    try:
        beats = instance.get_daemon_heartbeats()
    except Exception:  # noqa: BLE001 - storage without heartbeats: unknown means no
        return False
    now = time.time()
    return any(
        name == "BACKFILL" and now - beat.timestamp < within_s for name, beat in beats.items()
    )
