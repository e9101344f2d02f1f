"""L3 traversal: neighbourhoods and paths, one indexed query per BFS level in one transaction.

Every edge followed passes `FACT_FILTER`, so a walk as an NPC only crosses facts that NPC may
see (`visibility`): a secret cannot be inferred from the shape of the graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from glyphoxa_pipelines.db.operations import Op, fetch_all, operation
from glyphoxa_pipelines.memory.graph_facts import (
    FACT_FILTER,
    FACTS_WITH_NAMES,
    REL_COLUMNS,
    fact_params,
    known_fact,
)
from glyphoxa_pipelines.memory.models import Entity, Relationship, Subgraph
from glyphoxa_pipelines.memory.rows import from_row


def expand_op(frontier: Sequence[str], params: dict[str, Any]) -> Op[list[dict[str, Any]]]:
    """Edges touching any frontier node (both directions), one indexed query."""
    p = dict(params, f=list(frontier))
    rows = yield fetch_all(
        f"""SELECT {REL_COLUMNS}, r.target_id AS via_other, r.source_id AS via_from
            FROM relationships r WHERE r.source_id = ANY(%(f)s) AND {FACT_FILTER}
            UNION ALL
            SELECT {REL_COLUMNS}, r.source_id AS via_other, r.target_id AS via_from
            FROM relationships r WHERE r.target_id = ANY(%(f)s) AND {FACT_FILTER}""",
        p,
    )
    return rows


def neighbors_op(
    campaign_id: str,
    entity_id: str,
    depth: int,
    rel_types: Sequence[str] | None,
    node_types: Sequence[str] | None,
    max_nodes: int,
    npc_id: str | None,
    at: datetime | None,
    include_facts: bool = True,
) -> Op[Subgraph]:
    """Level-by-level BFS in SQL: each level returns only the new nodes (not every
    edge), as whole entity rows so no further query fetches them; then, on request, one
    query fetches the facts among them."""
    if depth < 1 or max_nodes < 1:
        return Subgraph([], [])
    params = fact_params(campaign_id, npc_id=npc_id, rel_types=rel_types, at=at)
    wanted = set(node_types) if node_types else None
    visited = [entity_id]
    found: list[Entity] = []
    frontier = [entity_id]
    for _ in range(depth):
        if not frontier or len(found) >= max_nodes:
            break
        # Without a type filter every level can stop at the nodes still wanted: a level
        # that fills the result ends the walk, so its cut-off nodes would never expand.
        rows = yield fetch_all(
            f"""SELECT en.* FROM entities en
                WHERE en.campaign_id = %(c)s AND NOT (en.id = ANY(%(visited)s))
                  AND en.id IN (
                    SELECT r.target_id FROM relationships r
                    WHERE r.source_id = ANY(%(f)s) AND {FACT_FILTER}
                    UNION
                    SELECT r.source_id FROM relationships r
                    WHERE r.target_id = ANY(%(f)s) AND {FACT_FILTER})
                ORDER BY lower(en.name), en.id
                LIMIT %(limit)s""",
            dict(
                params,
                f=frontier,
                visited=visited,
                limit=max_nodes - len(found) if wanted is None else None,
            ),
        )
        frontier = [r["id"] for r in rows]
        visited.extend(frontier)
        found.extend(from_row(Entity, r) for r in rows if wanted is None or r["type"] in wanted)
    found = found[:max_nodes]
    if not found:
        return Subgraph([], [])
    if not include_facts:
        return Subgraph(found, [])
    ids = [entity_id, *(e.id for e in found)]
    facts = yield fetch_all(
        f"""{FACTS_WITH_NAMES}
            WHERE r.source_id = ANY(%(ids)s) AND r.target_id = ANY(%(ids)s)
              AND {FACT_FILTER}
            ORDER BY r.rel_type, r.source_id, r.target_id, r.id""",
        dict(params, ids=ids),
    )
    return Subgraph(found, [known_fact(f) for f in facts])


def join_path(parents: tuple[dict[str, Any], dict[str, Any]], meet: str) -> list[Relationship]:
    """The chain of facts from the source side's root to the target side's, through `meet`."""
    left: list[Relationship] = []
    node = meet
    while parents[0][node] is not None:
        r = parents[0][node]
        left.append(from_row(Relationship, r))
        node = r["via_from"]
    left.reverse()
    node = meet
    while parents[1][node] is not None:
        r = parents[1][node]
        left.append(from_row(Relationship, r))
        node = r["via_from"]
    return left


class TraversalOperations:
    """The traversal part of `KnowledgeGraph` (which binds `db`)."""

    db: Any

    @operation
    def neighbors(
        self,
        campaign_id: str,
        entity_id: str,
        *,
        depth: int = 1,
        rel_types: Sequence[str] | None = None,
        node_types: Sequence[str] | None = None,
        max_nodes: int = 100,
        npc_id: str | None = None,
        at: datetime | None = None,
        include_facts: bool = False,
    ) -> Op:
        """Entities within `depth` hops (edges in either direction), nearest first; with
        `include_facts`, also the facts among them. `rel_types` limits the edges followed;
        `node_types` filters the entities returned (traversal still passes through other
        types)."""
        return (
            yield from neighbors_op(
                campaign_id,
                entity_id,
                depth,
                rel_types,
                node_types,
                max_nodes,
                npc_id,
                at,
                include_facts,
            )
        )

    @operation
    def find_path(
        self,
        campaign_id: str,
        source_id: str,
        target_id: str,
        *,
        max_depth: int = 4,
        rel_types: Sequence[str] | None = None,
        npc_id: str | None = None,
    ) -> Op:
        """A shortest chain of facts linking two entities (edges either way), [] if none
        within `max_depth`. Bidirectional BFS: expand the smaller frontier each step."""
        if source_id == target_id:
            return []
        params = fact_params(campaign_id, npc_id=npc_id, rel_types=rel_types)
        parents: tuple[dict[str, Any], dict[str, Any]] = ({source_id: None}, {target_id: None})
        frontiers: tuple[list[str], list[str]] = ([source_id], [target_id])
        depth = 0
        while depth < max_depth and frontiers[0] and frontiers[1]:
            side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
            rows = yield from expand_op(frontiers[side], params)
            nxt: list[str] = []
            meet: str | None = None
            for r in sorted(rows, key=lambda r: r["id"]):
                other = r["via_other"]
                if other in parents[side]:
                    continue
                parents[side][other] = r
                nxt.append(other)
                if other in parents[1 - side] and meet is None:
                    meet = other
            depth += 1
            if meet is not None:
                return join_path(parents, meet)
            frontiers = (nxt, frontiers[1]) if side == 0 else (frontiers[0], nxt)
        return []

    @operation
    def visible_subgraph(
        self, campaign_id: str, npc_id: str, *, depth: int = 2, max_nodes: int = 200
    ) -> Op:
        """What `npc_id` knows around itself: only facts visible to it are followed."""
        return (
            yield from neighbors_op(campaign_id, npc_id, depth, None, None, max_nodes, npc_id, None)
        )
