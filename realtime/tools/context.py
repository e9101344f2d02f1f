"""What a tool runs against: the guarded database, the stores it reads, the query embedder
and session search's recipe and counters. Built once by the service; satisfies
`session_search.SearchHost`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import (
    GraphRAGQuerier,
    KnowledgeGraph,
    RecapStore,
    SemanticIndex,
    SessionStore,
    SummaryStore,
)
from realtime.campaign_models import CampaignModels
from realtime.guarded_db import GuardedDatabase
from realtime.query_embedding import QueryEmbedder
from realtime.session_search import SearchConfig, SearchCounters


@dataclass(frozen=True, slots=True)
class ToolContext:
    db: GuardedDatabase
    index: SemanticIndex
    graph: KnowledgeGraph
    graph_rag: GraphRAGQuerier
    summaries: SummaryStore
    sessions: SessionStore
    embedder: QueryEmbedder
    search: SearchConfig
    search_counters: SearchCounters
    recaps: RecapStore
    # Each campaign's query embedder, by its active model (session search's vector leg).
    campaign_models: CampaignModels

    async def run(self, op: Op, *, transaction: bool = True) -> Any:
        return await self.db.run(op, transaction=transaction)
