"""The pipeline without Dagster: step functions, in-process runner, staleness, backfill launch.

`glyphoxa_pipelines.defs` wraps the same steps as Dagster assets. Nothing here imports Dagster at
module level, so the CLI and the demo can run the chain in-process.
"""

from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_ASSETS
from glyphoxa_pipelines.pipeline.outcomes import CheckOutcome, StepOutcome
from glyphoxa_pipelines.pipeline.runner import run_campaign_chain, run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS
from glyphoxa_pipelines.pipeline.staleness import SessionStaleness, stale_sessions

__all__ = [
    "CAMPAIGN_ASSETS",
    "SESSION_ASSETS",
    "CheckOutcome",
    "PipelineServices",
    "SessionStaleness",
    "StepOutcome",
    "run_campaign_chain",
    "run_session_chain",
    "stale_sessions",
]
