"""The memory store: L1 session log, L2 semantic index, L3 knowledge graph, GraphRAG, recaps.

Every store takes a `Database` (sync, pipeline) or `AsyncDatabase` (async, realtime service);
the methods are written once (see `glyphoxa_pipelines.db.operations`).
"""

from glyphoxa_pipelines.memory.campaigns import CampaignStore
from glyphoxa_pipelines.memory.errors import (
    EmbeddingDimensionError,
    InvalidInputError,
    NotFoundError,
)
from glyphoxa_pipelines.memory.graph_rag import GraphRAGQuerier, GraphScope
from glyphoxa_pipelines.memory.knowledge_graph import KnowledgeGraph
from glyphoxa_pipelines.memory.models import (
    Campaign,
    Chunk,
    ChunkHit,
    Entity,
    Entry,
    IdentitySnapshot,
    KnownFact,
    NewEntry,
    NpcProfile,
    Recap,
    Relationship,
    Session,
    SessionSummary,
    Subgraph,
    TurnText,
)
from glyphoxa_pipelines.memory.recaps import RecapStore, SummaryStore
from glyphoxa_pipelines.memory.semantic_index import SemanticIndex
from glyphoxa_pipelines.memory.session_log import SessionStore

__all__ = [
    "Campaign",
    "CampaignStore",
    "Chunk",
    "ChunkHit",
    "EmbeddingDimensionError",
    "Entity",
    "Entry",
    "GraphRAGQuerier",
    "GraphScope",
    "IdentitySnapshot",
    "InvalidInputError",
    "KnowledgeGraph",
    "KnownFact",
    "NewEntry",
    "NotFoundError",
    "NpcProfile",
    "Recap",
    "RecapStore",
    "Relationship",
    "SemanticIndex",
    "Session",
    "SessionStore",
    "SessionSummary",
    "Subgraph",
    "SummaryStore",
    "TurnText",
]
