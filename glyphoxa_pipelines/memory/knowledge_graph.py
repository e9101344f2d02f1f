"""L3 knowledge graph: entities, typed directed facts, traversal and what an NPC knows.

One store object over four modules, each one idea: `graph_entities` (entities, NPC profiles),
`graph_facts` (relationships and the fact filter), `graph_traversal` (neighbourhoods, paths)
and `npc_identity` (an NPC's identity snapshot). Who may see a fact is `visibility`'s rule,
enforced in SQL for every read that takes an `npc_id`.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.memory.graph_entities import EntityOperations
from glyphoxa_pipelines.memory.graph_facts import (
    REL_COLUMNS,
    Direction,
    FactOperations,
    relationship_params,
)
from glyphoxa_pipelines.memory.graph_traversal import TraversalOperations
from glyphoxa_pipelines.memory.npc_identity import IdentityOperations

__all__ = ["REL_COLUMNS", "Direction", "KnowledgeGraph", "relationship_params"]


class KnowledgeGraph(EntityOperations, FactOperations, TraversalOperations, IdentityOperations):
    """Entities and facts of one database; every call is scoped by campaign."""

    def __init__(self, db: Any) -> None:
        self.db = db
