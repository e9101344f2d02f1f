"""The DM's edits to the knowledge graph: entities, NPC profiles, facts (add, confirm, reject,
retcon, visibility), the review queue and the spellings the pipeline offers as aliases.

Each edit drops this process's caches of the campaign at once: the change notification would,
a moment later, but the DM's next turn must not wait for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, TypeVar

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import (
    Entity,
    InvalidInputError,
    KnowledgeGraph,
    NotFoundError,
    NpcProfile,
    Relationship,
)
from glyphoxa_pipelines.memory.graph_facts import record_replacement_op, upsert_relationship_op
from glyphoxa_pipelines.memory.spelling_suggestions import (
    accept_spelling_op,
    dismiss_spelling_op,
    open_spellings_op,
)
from realtime.graph_cache import GraphCache
from realtime.guarded_db import GuardedDatabase
from realtime.name_cache import NameCache
from realtime.tools.results import fact_result

T = TypeVar("T")


def check_known_by(known_by: Sequence[str]) -> None:
    """A `known_by` entry names an NPC: an empty one is the public viewer's id and would make
    the secret public (migration 019 refuses it in the database too; this says so before the
    transaction, in the DM's words)."""
    if any(not isinstance(n, str) or not n.strip() for n in known_by):
        raise InvalidInputError("known_by: every entry must name an NPC (no empty ids)")


class DmEdits:
    def __init__(
        self, db: GuardedDatabase, graph: KnowledgeGraph, graph_cache: GraphCache,
        names: NameCache,
    ) -> None:
        self._db = db
        self._graph = graph
        self._graph_cache = graph_cache
        self._names = names

    async def edit(self, campaign_id: str, op: Op[T], *, names: bool = False) -> T:
        """Run a DM edit (any composition of store operations) in one transaction, then drop
        this process's caches of the campaign at once: the change notification would do it a
        moment later, and the next NPC turn must not wait for it. `names` when entity names
        may have changed (the correction index is rebuilt)."""
        try:
            return await self._db.run(op)
        finally:
            self._graph_cache.invalidate(campaign_id)
            if names:
                self._names.invalidate(campaign_id)

    async def add_entity(self, entity: Entity) -> Entity:
        return await self.edit(
            entity.campaign_id, KnowledgeGraph.add_entity.op(self._graph, entity), names=True
        )

    async def update_entity(self, campaign_id: str, entity_id: str, **changes: Any) -> Entity:
        return await self.edit(
            campaign_id,
            KnowledgeGraph.update_entity.op(self._graph, campaign_id, entity_id, **changes),
            names=True,
        )

    async def delete_entity(self, campaign_id: str, entity_id: str) -> bool:
        return bool(await self.edit(
            campaign_id, KnowledgeGraph.delete_entity.op(self._graph, campaign_id, entity_id),
            names=True,
        ))

    async def upsert_profile(self, profile: NpcProfile) -> NpcProfile:
        return await self.edit(
            profile.campaign_id, KnowledgeGraph.upsert_npc_profile.op(self._graph, profile)
        )

    async def resolve_id(self, campaign_id: str, name_or_id: str) -> str:
        ent = await self._db.run(KnowledgeGraph.resolve.op(self._graph, campaign_id, name_or_id))
        if ent is None:
            raise NotFoundError(f"unknown entity {name_or_id!r} in campaign {campaign_id!r}")
        return ent.id

    async def add_fact(self, rel: Relationship) -> Relationship:
        check_known_by(rel.known_by)
        return await self.edit(
            rel.campaign_id, KnowledgeGraph.add_relationship.op(self._graph, rel)
        )

    async def set_fact_status(
        self, campaign_id: str, fact_id: int, status: str, dm_confirmed: bool | None
    ) -> Relationship:
        return await self.edit(
            campaign_id,
            KnowledgeGraph.set_fact_status.op(
                self._graph, campaign_id, fact_id, status, dm_confirmed=dm_confirmed
            )
        )

    async def retcon(
        self, campaign_id: str, fact_id: int, replacement: Relationship | None
    ) -> dict[str, Any]:
        """Invalidate a fact (history kept), optionally replaced by another that records
        which fact it replaced."""
        graph = self._graph
        if replacement is not None:
            check_known_by(replacement.known_by)

        def op() -> Op:
            old = yield from KnowledgeGraph.get_relationship.op(graph, campaign_id, fact_id)
            if old is None:
                raise NotFoundError(f"unknown fact {fact_id} in campaign {campaign_id!r}")
            new = None
            if replacement is not None:
                # Invalidate first: the replacement may reuse the same (source, type, target).
                yield from KnowledgeGraph.invalidate_relationship.op(graph, campaign_id, fact_id)
                new = yield from upsert_relationship_op(replacement, protect_confirmed=False)
                yield from record_replacement_op(campaign_id, fact_id, new.id)
            else:
                yield from KnowledgeGraph.invalidate_relationship.op(graph, campaign_id, fact_id)
            return {"invalidated": fact_id, "replacement": asdict(new) if new else None}

        return await self.edit(campaign_id, op())

    async def reveal(
        self, campaign_id: str, fact_id: int, to: list[str] | None
    ) -> Relationship:
        """Tell chosen NPCs a secret or hidden fact, or (`to` None) make it public."""
        return await self.edit(
            campaign_id, KnowledgeGraph.reveal.op(self._graph, campaign_id, fact_id, to)
        )

    async def set_visibility(
        self, campaign_id: str, fact_id: int, visibility: str, known_by: list[str]
    ) -> Relationship:
        check_known_by(known_by)
        return await self.edit(
            campaign_id,
            KnowledgeGraph.set_visibility.op(self._graph, campaign_id, fact_id, visibility,
                                             known_by),
        )

    async def review_queue(self, campaign_id: str) -> list[dict[str, Any]]:
        facts = await self._db.run(KnowledgeGraph.review_queue.op(self._graph, campaign_id))
        return [fact_result(f, None) for f in facts]

    async def open_spellings(self, campaign_id: str) -> list[dict[str, Any]]:
        return await self._db.run(open_spellings_op(campaign_id))

    async def accept_spelling(self, campaign_id: str, entity_id: str, spelling: str) -> Entity:
        """An offered spelling becomes an alias: the correction index is rebuilt with it."""
        return await self.edit(
            campaign_id, accept_spelling_op(self._graph, campaign_id, entity_id, spelling),
            names=True,
        )

    async def dismiss_spelling(self, campaign_id: str, entity_id: str, spelling: str) -> str:
        return await self.edit(campaign_id, dismiss_spelling_op(campaign_id, entity_id, spelling))
