"""Asset jobs the sensors and the schedule launch.

They run in-process: the chain is linear, and one process keeps the embedding model and the
database pool loaded across the steps (the multiprocess executor would reload torch per step).
"""

from __future__ import annotations

from dagster import AssetSelection, define_asset_job, in_process_executor

from glyphoxa_pipelines.defs.partitions import campaigns_partitions, sessions_partitions
from glyphoxa_pipelines.defs.session_assets import LIVE_ASSETS
from glyphoxa_pipelines.pipeline.campaign_steps import CAMPAIGN_ASSETS
from glyphoxa_pipelines.pipeline.session_steps import SESSION_ASSETS

session_chain_job = define_asset_job(
    "session_chain",
    selection=AssetSelection.assets(*SESSION_ASSETS),
    partitions_def=sessions_partitions,
    executor_def=in_process_executor,
    description="A whole session through the chain, raw transcript to recap.",
)

live_session_job = define_asset_job(
    "live_session_refresh",
    selection=AssetSelection.assets(*LIVE_ASSETS),
    partitions_def=sessions_partitions,
    executor_def=in_process_executor,
    description="A live session's new entries corrected, chunked and embedded (cold search).",
)

campaign_job = define_asset_job(
    "campaign_consolidation_job",
    selection=AssetSelection.assets(*CAMPAIGN_ASSETS),
    partitions_def=campaigns_partitions,
    executor_def=in_process_executor,
    description="Name list and consolidation for one campaign.",
)
