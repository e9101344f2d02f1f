"""Launch a Dagster backfill over all of a campaign's sessions (e.g. after a model change).

The backfill is written to the Dagster instance (PostgreSQL) exactly as the UI's "Launch
backfill" does; the daemon (`glyphoxa dev`) executes it, and it is visible and controllable
(cancel, re-execute failures) in the UI. Dagster is imported inside the function only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.memory.pipeline_rows import session_rows
from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_ASSETS
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS


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
    definitions: Any = None,
) -> BackfillLaunch:
    """Add the campaign's sessions as partitions (if missing) and request one backfill over
    them for the chosen session assets, plus one for the campaign partition when campaign
    assets are chosen. `instance` defaults to DagsterInstance.get() (DAGSTER_HOME)."""
    from dagster import AssetKey, DagsterInstance
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    from glyphoxa_pipelines.defs.partitions import CAMPAIGNS, SESSIONS

    session_assets, campaign_assets = split_assets(assets)
    db.run(session_rows.campaign_settings_op(campaign_id))  # unknown campaign -> NotFoundError
    session_ids = db.run(session_rows.campaign_session_ids_op(campaign_id))
    instance = instance or DagsterInstance.get()
    if definitions is None:
        from glyphoxa_pipelines.definitions import defs as definitions
    asset_graph = definitions.resolve_asset_graph()

    known = set(instance.get_dynamic_partitions(SESSIONS))
    missing = [s for s in session_ids if s not in known]
    if missing:
        instance.add_dynamic_partitions(SESSIONS, missing)
    if not instance.has_dynamic_partition(CAMPAIGNS, campaign_id):
        instance.add_dynamic_partitions(CAMPAIGNS, [campaign_id])

    ids: list[str] = []
    plans = [(session_assets, session_ids), (campaign_assets, [campaign_id])]
    for selected, partitions in plans:
        if not selected or not partitions:
            continue
        backfill_id = make_new_backfill_id()
        backfill = PartitionBackfill.from_asset_partitions(
            backfill_id=backfill_id,
            asset_graph=asset_graph,
            partition_names=list(partitions),
            asset_selection=[AssetKey(a) for a in selected],
            backfill_timestamp=time.time(),
            tags={"glyphoxa/campaign": campaign_id, "glyphoxa/trigger": "backfill"},
            dynamic_partitions_store=instance,
            all_partitions=False,
            title=f"{campaign_id} {'+'.join(selected)}"[:100],
            description=f"glyphoxa backfill --campaign {campaign_id}",
            run_config=None,
        )
        instance.add_backfill(backfill)
        ids.append(backfill_id)
    return BackfillLaunch(campaign_id, list(session_ids), session_assets, campaign_assets, ids)


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
