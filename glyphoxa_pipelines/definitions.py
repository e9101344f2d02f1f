"""The Dagster code location (`workspace.yaml` loads it; `dagster dev -m` works too).

Resources are configured from environment variables with `EnvVar`, so the UI shows the source of
each value; unset variables fall back to the defaults of `Settings` (embedded database under
./.glyphoxa, bundled MiniLM, no LLM).
"""

from __future__ import annotations

import os

from dagster import Definitions, EnvVar

from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL, Settings
from glyphoxa_pipelines.defs.campaign_assets import build_campaign_assets
from glyphoxa_pipelines.defs.executors import backfill_executor
from glyphoxa_pipelines.defs.jobs import campaign_job, live_session_job, session_chain_job
from glyphoxa_pipelines.defs.resources import EmbedderResource, GlyphoxaDatabase, LLMResource
from glyphoxa_pipelines.defs.schedules import nightly_consolidation_schedule
from glyphoxa_pipelines.defs.sensors import live_session_sensor, session_ended_sensor
from glyphoxa_pipelines.defs.session_assets import build_session_assets


def _env(name: str) -> EnvVar | None:
    return EnvVar(name) if os.environ.get(name) else None


def build_resources() -> dict[str, object]:
    dimension = os.environ.get("GLYPHOXA_EMBEDDING_DIMENSION")
    return {
        "glyphoxa_db": GlyphoxaDatabase(
            home=_env("GLYPHOXA_HOME"), database_url=_env("GLYPHOXA_DATABASE_URL")
        ),
        "embedder": EmbedderResource(
            model=_env("GLYPHOXA_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL,
            dimension=EnvVar.int("GLYPHOXA_EMBEDDING_DIMENSION") if dimension else None,
            base_url=_env("GLYPHOXA_EMBEDDING_BASE_URL"),
            api_key=_env("GLYPHOXA_EMBEDDING_API_KEY"),
        ),
        "llm": LLMResource(
            model=_env("GLYPHOXA_LLM_MODEL"),
            base_url=_env("GLYPHOXA_LLM_BASE_URL"),
            api_key=_env("GLYPHOXA_LLM_API_KEY"),
        ),
    }


def build_definitions(settings: Settings | None = None) -> Definitions:
    settings = settings or Settings.from_env()
    return Definitions(
        assets=[*build_session_assets(settings), *build_campaign_assets(settings)],
        jobs=[session_chain_job, live_session_job, campaign_job],
        sensors=[session_ended_sensor, live_session_sensor],
        schedules=[nightly_consolidation_schedule],
        resources=build_resources(),
        executor=backfill_executor(),  # backfills; the sensor jobs run in process
    )


defs = build_definitions()
