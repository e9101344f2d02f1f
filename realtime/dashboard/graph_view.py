"""The knowledge graph as cytoscape elements: a pure transform over entities and the facts a
viewer may see (the read already applied visibility), tested without a database.

A node is kept when its type is chosen, or, with no type chosen, when any visible fact touches
it or it is one of the few entities the campaign has (an empty picture would hide that the
filters, not the campaign, are empty). An edge is kept only when both its ends are: a fact
never dangles into an entity the filter removed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from glyphoxa_pipelines.memory.models import Entity, KnownFact


def graph_elements(
    entities: Iterable[Entity],
    facts: Iterable[KnownFact],
    *,
    types: Collection[str] = (),
    only_connected: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """`{"nodes": [...], "edges": [...]}` in cytoscape's element JSON. `types` keeps only
    entities of those types; `only_connected` drops entities no kept fact touches (the
    NPC-view and session filters want the facts' picture, not every entity)."""
    by_id = {e.id: e for e in entities if not types or e.type in types}
    facts = list(facts)
    edges = [
        f for f in facts
        if f.relationship.source_id in by_id and f.relationship.target_id in by_id
    ]
    touched = {x for f in edges for x in (f.relationship.source_id, f.relationship.target_id)}
    nodes = [e for e in by_id.values() if not only_connected or e.id in touched]
    return {
        "nodes": [
            {"data": {"id": e.id, "label": e.name, "type": e.type}}
            for e in sorted(nodes, key=lambda e: (e.type, e.name, e.id))
        ],
        "edges": [
            {
                "data": {
                    "id": f"f{f.relationship.id}",
                    "source": f.relationship.source_id,
                    "target": f.relationship.target_id,
                    "label": f.relationship.rel_type.replace("_", " "),
                    "visibility": f.relationship.visibility,
                    "session": f.relationship.session_id or "",
                }
            }
            for f in edges
        ],
    }
