"""GraphRAG: retrieval over chunks scoped to an entity's neighbourhood in the graph.

The neighbourhood is walked as the scope's NPC sees the graph (`graph_traversal`, hence the
`visibility` rule), so a scope never reaches an entity only a secret fact leads to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glyphoxa_pipelines.db.operations import Op, read_operation
from glyphoxa_pipelines.memory.graph_traversal import neighbors_op
from glyphoxa_pipelines.memory.knowledge_graph import KnowledgeGraph
from glyphoxa_pipelines.memory.semantic_index import SemanticIndex


@dataclass(frozen=True, slots=True)
class GraphScope:
    """Chunks mentioning `entity_id` or anything within `depth` hops of it (as `npc_id` sees
    the graph, when given). Explicit `entity_ids` skip the traversal. `listener`: only the
    chunks that NPC may recall (`visibility.chunk_visible`); None, all of them."""

    campaign_id: str
    entity_id: str | None = None
    depth: int = 1
    npc_id: str | None = None
    entity_ids: tuple[str, ...] | None = None
    max_nodes: int = 50
    listener: str | None = None


class GraphRAGQuerier:
    def __init__(self, db: Any) -> None:
        self.db = db
        self.graph = KnowledgeGraph(db)
        self.index = SemanticIndex(db)

    def _scope_ids_op(self, scope: GraphScope) -> Op:
        if scope.entity_ids is not None:
            return list(scope.entity_ids)
        if scope.entity_id is None:
            return None
        sub = yield from neighbors_op(
            scope.campaign_id,
            scope.entity_id,
            scope.depth,
            None,
            None,
            scope.max_nodes,
            scope.npc_id,
            None,
            include_facts=False,
        )
        return [scope.entity_id, *(e.id for e in sub.entities)]

    @read_operation
    def query_with_context(self, text: str, scope: GraphScope, *, limit: int = 10) -> Op:
        """Full-text over chunks that mention the scope's entities."""
        ids = yield from self._scope_ids_op(scope)
        return (
            yield from SemanticIndex.fulltext_search.op(
                self.index, scope.campaign_id, text, limit, entity_ids=ids,
                listener=scope.listener,
            )
        )

    @read_operation
    def query_with_embedding(
        self, embedding: Sequence[float] | np.ndarray, top_k: int, scope: GraphScope
    ) -> Op:
        """Nearest chunks (cosine) among those that mention the scope's entities."""
        ids = yield from self._scope_ids_op(scope)
        return (
            yield from self.index._search_op(
                scope.campaign_id,
                embedding,
                top_k,
                model=None,
                session_id=None,
                speaker=None,
                entity_ids=ids,
                after=None,
                before=None,
                listener=scope.listener,
            )
        )
