"""Run the session chain in-process: the same step code the Dagster assets run, no daemon.

Used by `glyphoxa process`, the demo, the bench and tests. A failed check does not stop the
chain (Dagster would record it and go on as well); an exception does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory.pipeline_rows import session_rows
from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_ASSETS, CAMPAIGN_STEPS
from glyphoxa_pipelines.pipeline.outcomes import StepOutcome
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS, SESSION_STEPS

# progress(asset, phase, outcome) with phase "start" (outcome None) or "done".
Progress = Callable[[str, str, StepOutcome | None], None]


def _services(db_or_services: Database | PipelineServices, settings: Settings | None) -> Any:
    if isinstance(db_or_services, PipelineServices):
        return db_or_services
    return PipelineServices(db_or_services, settings or Settings.from_env())


def _selected(assets: Iterable[str] | None, known: Sequence[str]) -> list[str]:
    if assets is None:
        return list(known)
    wanted = list(dict.fromkeys(assets))
    unknown = [a for a in wanted if a not in known]
    if unknown:
        raise ValueError(f"unknown assets {unknown}; choose from {', '.join(known)}")
    return [a for a in known if a in wanted]  # always in chain order


def run_step(
    step: Callable[..., StepOutcome], services: PipelineServices, key: str
) -> StepOutcome:
    """One step, timed: what the Dagster assets and the in-process runner both call."""
    started = time.perf_counter()
    outcome = step(services, key)
    outcome.seconds = time.perf_counter() - started
    return outcome


def run_steps(
    steps: dict[str, Callable[..., StepOutcome]],
    order: Sequence[str],
    services: PipelineServices,
    key: str,
    progress: Progress | None,
) -> dict[str, StepOutcome]:
    results: dict[str, StepOutcome] = {}
    for name in order:
        if progress:
            progress(name, "start", None)
        outcome = results[name] = run_step(steps[name], services, key)
        if progress:
            progress(name, "done", outcome)
    return results


def run_session_chain(
    db: Database | PipelineServices,
    session_id: str,
    *,
    settings: Settings | None = None,
    assets: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> dict[str, StepOutcome]:
    """Run the session assets (all, or the chosen ones in chain order) for one session.

    `db` is an open `Database` (providers come from `settings`, default from the
    environment) or a ready `PipelineServices`. Returns {asset: StepOutcome}; use
    `outcome.as_dict()` for plain metadata.
    """
    services = _services(db, settings)
    return run_steps(
        SESSION_STEPS, _selected(assets, SESSION_ASSETS), services, session_id, progress
    )


def run_campaign_chain(
    db: Database | PipelineServices,
    campaign_id: str,
    *,
    settings: Settings | None = None,
    session_ids: Sequence[str] | None = None,
    assets: Iterable[str] | None = None,
    consolidate: bool = True,
    progress: Progress | None = None,
) -> dict[str, dict[str, StepOutcome]]:
    """Every (or the given) session of a campaign through the chain, oldest first, then the
    campaign assets. Returns {session id or "campaign": {asset: outcome}}."""
    services = _services(db, settings)
    sessions = list(
        session_ids or services.db.run(session_rows.campaign_session_ids_op(campaign_id))
    )
    chosen = list(assets) if assets is not None else None
    session_assets = [a for a in (chosen or SESSION_ASSETS) if a in SESSION_ASSETS]
    results: dict[str, dict[str, StepOutcome]] = {}
    for sid in sessions:
        if session_assets:
            results[sid] = run_session_chain(
                services, sid, assets=session_assets, progress=progress
            )
    campaign_assets = [a for a in (chosen or CAMPAIGN_ASSETS) if a in CAMPAIGN_ASSETS]
    if consolidate and campaign_assets:
        results["campaign"] = run_steps(
            CAMPAIGN_STEPS, campaign_assets, services, campaign_id, progress
        )
    return results
