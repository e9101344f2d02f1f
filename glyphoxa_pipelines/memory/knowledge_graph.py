"""L3 knowledge graph: entities, typed directed facts, traversal and per-NPC visibility.

Visibility is enforced here, in SQL, not by callers: a fact is visible to an NPC when it is
public, when the NPC is its source or target, or when the NPC is listed in `known_by`. Secret
facts an NPC does know come back flagged so the prompt can tell the LLM to guard them.
Traversals (neighbors, find_path) run one indexed query per BFS level inside one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from psycopg import errors as pg_errors

from glyphoxa_pipelines.db.operations import (
    Op,
    execute,
    fetch_all,
    fetch_one,
    operation,
    read_operation,
)
from glyphoxa_pipelines.memory.errors import InvalidInputError, NotFoundError
from glyphoxa_pipelines.memory.ids import slugify
from glyphoxa_pipelines.memory.models import (
    Entity,
    IdentitySnapshot,
    KnownFact,
    NpcProfile,
    Relationship,
    Subgraph,
)
from glyphoxa_pipelines.memory.rows import from_row

Direction = Literal["out", "in", "both"]

REL_COLUMNS = (
    "r.id, r.campaign_id, r.source_id, r.target_id, r.rel_type, r.attributes, r.confidence, "
    "r.assertion, r.provenance, r.dm_confirmed, r.status, r.visibility, r.known_by, "
    "r.session_id, r.observed_at, r.evidence, r.valid_from, r.invalidated_at, "
    "r.invalidated_by, r.extractor_version"
)

# Shared WHERE fragment: current (or valid at %(at)s), canon, and visible to %(npc)s.
_FACT_FILTER = """
    r.campaign_id = %(c)s
    AND (%(pending)s OR r.status = 'canon')
    AND r.status <> 'rejected'
    AND (CASE WHEN %(at)s::timestamptz IS NULL THEN r.invalidated_at IS NULL
              ELSE r.valid_from <= %(at)s
                   AND (r.invalidated_at IS NULL OR r.invalidated_at > %(at)s) END)
    AND (%(npc)s::text IS NULL OR r.visibility = 'public' OR r.source_id = %(npc)s
         OR r.target_id = %(npc)s OR %(npc)s = ANY(r.known_by))
    AND (%(types)s::text[] IS NULL OR r.rel_type = ANY(%(types)s))
"""


def _fact_params(
    campaign_id: str,
    *,
    npc_id: str | None = None,
    rel_types: Sequence[str] | None = None,
    at: datetime | None = None,
    include_pending: bool = False,
) -> dict[str, Any]:
    return {
        "c": campaign_id,
        "npc": npc_id,
        "types": list(rel_types) if rel_types else None,
        "at": at,
        "pending": include_pending,
    }


def _known_fact(row: dict[str, Any], npc_id: str | None) -> KnownFact:
    rel = from_row(Relationship, row)
    return KnownFact(
        relationship=rel,
        source_name=row["source_name"],
        target_name=row["target_name"],
        secret=rel.visibility == "secret",
    )


def relationship_params(rel: Relationship) -> dict[str, Any]:
    """Named statement parameters for a relationship row (JSON and arrays adapted)."""
    return {
        "campaign_id": rel.campaign_id,
        "source_id": rel.source_id,
        "target_id": rel.target_id,
        "rel_type": rel.rel_type,
        "attributes": json.dumps(rel.attributes),
        "confidence": rel.confidence,
        "assertion": rel.assertion,
        "provenance": rel.provenance,
        "dm_confirmed": rel.dm_confirmed,
        "status": rel.status,
        "visibility": rel.visibility,
        "known_by": list(rel.known_by),
        "session_id": rel.session_id,
        "observed_at": rel.observed_at,
        "evidence": rel.evidence,
        "valid_from": rel.valid_from,
        "invalidated_at": rel.invalidated_at,
        "invalidated_by": rel.invalidated_by,
        "extractor_version": rel.extractor_version,
    }


_FACTS_WITH_NAMES = f"""
    SELECT {REL_COLUMNS}, s.name AS source_name, t.name AS target_name
    FROM relationships r
    JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
    JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
"""


# identity_snapshot's facts. One arm per way a fact concerns the NPC (it is the source, the
# target, or listed in known_by; the arms are disjoint), each current and canon, best first in
# the order of the ranked partial indexes and cut to %(limit)s rows there; the arms read the
# whole rows, so only the `limit` rows returned get their names looked up (by primary key:
# a join would be planned as a hash over every entity, the arms' sizes being guesses).
_IDENTITY_ARM = f"""(SELECT {REL_COLUMNS} FROM relationships r
                    WHERE r.campaign_id = %(c)s AND {{cond}}
                      AND r.invalidated_at IS NULL AND r.status = 'canon'
                    ORDER BY r.confidence DESC, r.rel_type, r.id LIMIT %(limit)s)"""
_KNOWN_ONLY = (
    "r.known_by @> ARRAY[%(npc)s]::text[] AND r.source_id <> %(npc)s AND r.target_id <> %(npc)s"
)
_IDENTITY_FACTS = f"""
    SELECT r.*,
        (SELECT name FROM entities WHERE campaign_id = %(c)s AND id = r.source_id) AS source_name,
        (SELECT name FROM entities WHERE campaign_id = %(c)s AND id = r.target_id) AS target_name
    FROM ({_IDENTITY_ARM.format(cond="r.source_id = %(npc)s")}
          UNION ALL
          {_IDENTITY_ARM.format(cond="r.target_id = %(npc)s AND r.source_id <> %(npc)s")}
          UNION ALL
          {_IDENTITY_ARM.format(cond=_KNOWN_ONLY)}) r
    ORDER BY (r.source_id = %(npc)s) DESC, r.confidence DESC, r.rel_type, r.id
    LIMIT %(limit)s"""


# Id first, then exact name, then alias (lowest id on ties); each arm reads one index
# (migration 015) instead of scanning the campaign's entities.
_RESOLVE = """
SELECT * FROM (
    (SELECT e.*, 0 AS match_rank FROM entities e WHERE e.campaign_id = %(c)s AND e.id = %(n)s)
    UNION ALL
    (SELECT e.*, 1 FROM entities e
     WHERE e.campaign_id = %(c)s AND lower(e.name) = lower(%(n)s) ORDER BY e.id LIMIT 1)
    UNION ALL
    (SELECT e.*, 2 FROM entities e
     WHERE e.campaign_id = %(c)s AND glyphoxa_lower_aliases(e.aliases) @> ARRAY[lower(%(n)s)]
     ORDER BY e.id LIMIT 1)
) x ORDER BY match_rank LIMIT 1
"""


class KnowledgeGraph:
    """Entities and facts of one database; every call is scoped by campaign."""

    def __init__(self, db: Any) -> None:
        self.db = db

    # -- entities -------------------------------------------------------------------------
    def _upsert_entity_op(self, entity: Entity) -> Op:
        eid = entity.id or slugify(entity.name)
        if not entity.name.strip():
            raise InvalidInputError("entity name is empty")
        row = yield fetch_one(
            """INSERT INTO entities (campaign_id, id, type, name, aliases, attributes,
                   provenance, session_id, extractor_version)
               VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s)
               ON CONFLICT (campaign_id, id) DO UPDATE SET
                   type = EXCLUDED.type, name = EXCLUDED.name, aliases = EXCLUDED.aliases,
                   attributes = EXCLUDED.attributes, provenance = EXCLUDED.provenance,
                   session_id = EXCLUDED.session_id,
                   extractor_version = EXCLUDED.extractor_version, updated_at = now()
               WHERE (entities.type, entities.name, entities.aliases, entities.attributes,
                      entities.provenance, entities.session_id, entities.extractor_version)
                     IS DISTINCT FROM
                     (EXCLUDED.type, EXCLUDED.name, EXCLUDED.aliases, EXCLUDED.attributes,
                      EXCLUDED.provenance, EXCLUDED.session_id, EXCLUDED.extractor_version)
               RETURNING *""",
            (
                entity.campaign_id,
                eid,
                entity.type,
                entity.name.strip(),
                list(entity.aliases),
                json.dumps(entity.attributes),
                entity.provenance,
                entity.session_id,
                entity.extractor_version,
            ),
        )
        if row is None:  # unchanged: keep updated_at as it was
            row = yield fetch_one(
                "SELECT * FROM entities WHERE campaign_id = %s AND id = %s",
                (entity.campaign_id, eid),
            )
        return from_row(Entity, row)

    @operation
    def add_entity(self, entity: Entity) -> Op:
        """Insert or replace an entity (id defaults to the slug of its name)."""
        try:
            return (yield from self._upsert_entity_op(entity))
        except pg_errors.ForeignKeyViolation as exc:
            raise NotFoundError(f"unknown campaign {entity.campaign_id!r}") from exc
        except pg_errors.CheckViolation as exc:
            raise InvalidInputError(f"entity {entity.name!r}: {exc.diag.message_primary}") from exc

    @read_operation
    def get_entity(self, campaign_id: str, entity_id: str) -> Op:
        row = yield fetch_one(
            "SELECT * FROM entities WHERE campaign_id = %s AND id = %s", (campaign_id, entity_id)
        )
        return from_row(Entity, row) if row else None

    @read_operation
    def resolve(self, campaign_id: str, name_or_id: str) -> Op:
        """An entity by id, name or alias (case-insensitive); None when unknown."""
        row = yield fetch_one(_RESOLVE, {"c": campaign_id, "n": name_or_id})
        return from_row(Entity, row) if row else None

    @operation
    def update_entity(
        self,
        campaign_id: str,
        entity_id: str,
        *,
        name: str | None = None,
        type: str | None = None,  # noqa: A002 - mirrors the column
        aliases: Sequence[str] | None = None,
        attributes: dict[str, Any] | None = None,
        remove_attributes: Sequence[str] = (),
    ) -> Op:
        """A DM edit: change fields, merging `attributes` into the existing ones. An extracted
        entity becomes DM-owned, so the pipeline never overwrites the edit."""
        row = yield fetch_one(
            """UPDATE entities SET
                   name = coalesce(%(name)s, name), type = coalesce(%(type)s, type),
                   aliases = coalesce(%(aliases)s, aliases),
                   attributes = (attributes || coalesce(%(attrs)s::jsonb, '{}'::jsonb))
                                - %(drop)s::text[],
                   -- an edited extracted entity becomes the DM's: reprocessing keeps the edit
                   provenance = CASE WHEN provenance = 'extracted' THEN 'dm' ELSE provenance END,
                   updated_at = now()
               WHERE campaign_id = %(c)s AND id = %(id)s RETURNING *""",
            {
                "c": campaign_id,
                "id": entity_id,
                "name": name,
                "type": type,
                "aliases": list(aliases) if aliases is not None else None,
                "attrs": json.dumps(attributes) if attributes is not None else None,
                "drop": list(remove_attributes),
            },
        )
        if row is None:
            raise NotFoundError(f"unknown entity {entity_id!r} in campaign {campaign_id!r}")
        return from_row(Entity, row)

    @operation
    def delete_entity(self, campaign_id: str, entity_id: str) -> Op:
        """Delete an entity and its facts; deleting what is absent returns False."""
        n = yield execute(
            "DELETE FROM entities WHERE campaign_id = %s AND id = %s", (campaign_id, entity_id)
        )
        return n > 0

    @read_operation
    def find_entities(
        self,
        campaign_id: str,
        *,
        type: str | None = None,  # noqa: A002
        name: str | None = None,
        attributes: dict[str, Any] | None = None,
        limit: int = 1000,
    ) -> Op:
        """Entities by type, name/alias substring (case-insensitive) and attribute containment."""
        like = None
        if name:
            like = (
                "%"
                + name.lower().replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")
                + "%"
            )
        rows = yield fetch_all(
            """SELECT * FROM entities WHERE campaign_id = %(c)s
                   AND (%(t)s::text IS NULL OR type = %(t)s)
                   AND (%(like)s::text IS NULL OR lower(name) LIKE %(like)s
                        OR EXISTS (SELECT 1 FROM unnest(aliases) a WHERE lower(a) LIKE %(like)s))
                   AND (%(attrs)s::jsonb IS NULL OR attributes @> %(attrs)s::jsonb)
               ORDER BY type, name, id LIMIT %(limit)s""",
            {
                "c": campaign_id,
                "t": type,
                "like": like,
                "attrs": json.dumps(attributes) if attributes else None,
                "limit": limit,
            },
        )
        return [from_row(Entity, r) for r in rows]

    # -- NPC profiles ---------------------------------------------------------------------
    @operation
    def upsert_npc_profile(self, profile: NpcProfile) -> Op:
        try:
            row = yield fetch_one(
                """INSERT INTO npc_profiles (campaign_id, entity_id, personality, speaking_style,
                       emotional_state, behavior_rules, secret_knowledge, voice)
                   VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb)
                   ON CONFLICT (campaign_id, entity_id) DO UPDATE SET
                       personality = EXCLUDED.personality,
                       speaking_style = EXCLUDED.speaking_style,
                       emotional_state = EXCLUDED.emotional_state,
                       behavior_rules = EXCLUDED.behavior_rules,
                       secret_knowledge = EXCLUDED.secret_knowledge, voice = EXCLUDED.voice,
                       updated_at = now()
                   RETURNING *""",
                (
                    profile.campaign_id,
                    profile.entity_id,
                    profile.personality,
                    profile.speaking_style,
                    profile.emotional_state,
                    json.dumps(profile.behavior_rules),
                    json.dumps(profile.secret_knowledge),
                    json.dumps(profile.voice),
                ),
            )
        except pg_errors.ForeignKeyViolation as exc:
            raise NotFoundError(
                f"unknown NPC entity {profile.entity_id!r} in campaign {profile.campaign_id!r}"
            ) from exc
        return from_row(NpcProfile, row)

    @read_operation
    def get_npc_profile(self, campaign_id: str, entity_id: str) -> Op:
        row = yield fetch_one(
            "SELECT * FROM npc_profiles WHERE campaign_id = %s AND entity_id = %s",
            (campaign_id, entity_id),
        )
        return from_row(NpcProfile, row) if row else None

    # -- relationships --------------------------------------------------------------------
    def _upsert_relationship_op(self, rel: Relationship, *, protect_confirmed: bool) -> Op:
        missing = yield fetch_all(
            """SELECT x.id FROM unnest(%s::text[]) AS x(id)
               WHERE NOT EXISTS (SELECT 1 FROM entities e
                                 WHERE e.campaign_id = %s AND e.id = x.id)""",
            ([rel.source_id, rel.target_id], rel.campaign_id),
        )
        if missing:
            names = ", ".join(repr(m["id"]) for m in missing)
            raise NotFoundError(
                f"relationship {rel.source_id}-{rel.rel_type}->{rel.target_id}: unknown "
                f"entity {names} in campaign {rel.campaign_id!r}"
            )
        guard = (
            "WHERE NOT relationships.dm_confirmed AND relationships.provenance = 'extracted'"
            if protect_confirmed
            else ""
        )
        row = yield fetch_one(
            f"""INSERT INTO relationships AS relationships (campaign_id, source_id, target_id,
                   rel_type, attributes, confidence, assertion, provenance, dm_confirmed, status,
                   visibility, known_by, session_id, observed_at, evidence, valid_from,
                   extractor_version)
               VALUES (%(campaign_id)s, %(source_id)s, %(target_id)s, %(rel_type)s,
                   %(attributes)s::jsonb, %(confidence)s, %(assertion)s, %(provenance)s,
                   %(dm_confirmed)s, %(status)s, %(visibility)s, %(known_by)s, %(session_id)s,
                   %(observed_at)s, %(evidence)s, coalesce(%(valid_from)s, now()),
                   %(extractor_version)s)
               ON CONFLICT (campaign_id, source_id, rel_type, target_id)
                   WHERE invalidated_at IS NULL
               DO UPDATE SET attributes = EXCLUDED.attributes, confidence = EXCLUDED.confidence,
                   assertion = EXCLUDED.assertion, provenance = EXCLUDED.provenance,
                   dm_confirmed = EXCLUDED.dm_confirmed, status = EXCLUDED.status,
                   visibility = EXCLUDED.visibility, known_by = EXCLUDED.known_by,
                   session_id = EXCLUDED.session_id, observed_at = EXCLUDED.observed_at,
                   evidence = EXCLUDED.evidence,
                   extractor_version = EXCLUDED.extractor_version, updated_at = now()
               {guard}
               RETURNING *""",
            relationship_params(rel),
        )
        if row is None:  # protected: the confirmed fact stands unchanged
            row = yield fetch_one(
                """SELECT * FROM relationships WHERE campaign_id = %s AND source_id = %s
                       AND rel_type = %s AND target_id = %s AND invalidated_at IS NULL""",
                (rel.campaign_id, rel.source_id, rel.rel_type, rel.target_id),
            )
        return from_row(Relationship, row)

    @operation
    def add_relationship(self, rel: Relationship, *, protect_confirmed: bool = False) -> Op:
        """Insert or replace the current fact (source, type, target). With
        `protect_confirmed`, DM-made or DM-confirmed facts are left as they are."""
        try:
            return (
                yield from self._upsert_relationship_op(rel, protect_confirmed=protect_confirmed)
            )
        except pg_errors.CheckViolation as exc:
            raise InvalidInputError(
                f"relationship {rel.source_id}-{rel.rel_type}->{rel.target_id}: "
                f"{exc.diag.message_primary}"
            ) from exc

    @read_operation
    def get_relationship(self, campaign_id: str, rel_id: int) -> Op:
        row = yield fetch_one(
            f"SELECT {REL_COLUMNS} FROM relationships r WHERE r.campaign_id = %s AND r.id = %s",
            (campaign_id, rel_id),
        )
        return from_row(Relationship, row) if row else None

    @read_operation
    def get_relationships(
        self,
        campaign_id: str,
        entity_id: str,
        *,
        direction: Direction = "out",
        rel_types: Sequence[str] | None = None,
        limit: int | None = None,
        npc_id: str | None = None,
        at: datetime | None = None,
        include_pending: bool = False,
    ) -> Op:
        """Facts leaving (`out`), entering (`in`) or touching (`both`) an entity."""
        params = _fact_params(
            campaign_id, npc_id=npc_id, rel_types=rel_types, at=at, include_pending=include_pending
        )
        params.update(e=entity_id, limit=limit)
        ends = {
            "out": "r.source_id = %(e)s",
            "in": "r.target_id = %(e)s",
            "both": "(r.source_id = %(e)s OR r.target_id = %(e)s)",
        }[direction]
        rows = yield fetch_all(
            f"""SELECT {REL_COLUMNS} FROM relationships r WHERE {ends} AND {_FACT_FILTER}
                ORDER BY r.rel_type, r.source_id, r.target_id, r.id LIMIT %(limit)s""",
            params,
        )
        return [from_row(Relationship, r) for r in rows]

    @operation
    def delete_relationship(self, campaign_id: str, rel_id: int) -> Op:
        n = yield execute(
            "DELETE FROM relationships WHERE campaign_id = %s AND id = %s", (campaign_id, rel_id)
        )
        return n > 0

    @operation
    def invalidate_relationship(
        self,
        campaign_id: str,
        rel_id: int,
        *,
        by: int | None = None,
        at: datetime | None = None,
    ) -> Op:
        """Mark a fact no longer true (history kept); returns False when already invalid."""
        n = yield execute(
            """UPDATE relationships SET invalidated_at = coalesce(%s, now()),
                   invalidated_by = %s, updated_at = now()
               WHERE campaign_id = %s AND id = %s AND invalidated_at IS NULL""",
            (at, by, campaign_id, rel_id),
        )
        return n > 0

    @operation
    def set_fact_status(
        self,
        campaign_id: str,
        rel_id: int,
        status: Literal["canon", "pending", "rejected"],
        *,
        dm_confirmed: bool | None = None,
    ) -> Op:
        """DM review: confirm (canon + dm_confirmed) or reject a fact."""
        row = yield fetch_one(
            f"""UPDATE relationships r SET status = %s,
                   dm_confirmed = coalesce(%s, dm_confirmed), updated_at = now()
               WHERE r.campaign_id = %s AND r.id = %s RETURNING {REL_COLUMNS}""",
            (status, dm_confirmed, campaign_id, rel_id),
        )
        if row is None:
            raise NotFoundError(f"unknown fact {rel_id} in campaign {campaign_id!r}")
        return from_row(Relationship, row)

    @operation
    def set_visibility(
        self,
        campaign_id: str,
        rel_id: int,
        visibility: Literal["public", "secret"],
        known_by: Sequence[str] = (),
    ) -> Op:
        row = yield fetch_one(
            f"""UPDATE relationships r SET visibility = %s, known_by = %s, updated_at = now()
               WHERE r.campaign_id = %s AND r.id = %s RETURNING {REL_COLUMNS}""",
            (visibility, list(known_by), campaign_id, rel_id),
        )
        if row is None:
            raise NotFoundError(f"unknown fact {rel_id} in campaign {campaign_id!r}")
        return from_row(Relationship, row)

    @read_operation
    def review_queue(self, campaign_id: str, *, limit: int = 100) -> Op:
        rows = yield fetch_all(
            f"""{_FACTS_WITH_NAMES} WHERE r.campaign_id = %s AND r.status = 'pending'
                   AND r.invalidated_at IS NULL
                ORDER BY r.confidence DESC, r.id LIMIT %s""",
            (campaign_id, limit),
        )
        return [_known_fact(r, None) for r in rows]

    # -- traversal ------------------------------------------------------------------------
    def _expand_op(self, campaign_id: str, frontier: Sequence[str], params: dict[str, Any]) -> Op:
        """Edges touching any frontier node (both directions), one indexed query."""
        p = dict(params, f=list(frontier))
        rows = yield fetch_all(
            f"""SELECT {REL_COLUMNS}, r.target_id AS via_other, r.source_id AS via_from
                FROM relationships r WHERE r.source_id = ANY(%(f)s) AND {_FACT_FILTER}
                UNION ALL
                SELECT {REL_COLUMNS}, r.source_id AS via_other, r.target_id AS via_from
                FROM relationships r WHERE r.target_id = ANY(%(f)s) AND {_FACT_FILTER}""",
            p,
        )
        return rows

    def _entities_op(self, campaign_id: str, ids: Sequence[str]) -> Op:
        rows = yield fetch_all(
            "SELECT * FROM entities WHERE campaign_id = %s AND id = ANY(%s)",
            (campaign_id, list(ids)),
        )
        return {r["id"]: from_row(Entity, r) for r in rows}

    def _neighbors_op(
        self,
        campaign_id: str,
        entity_id: str,
        depth: int,
        rel_types: Sequence[str] | None,
        node_types: Sequence[str] | None,
        max_nodes: int,
        npc_id: str | None,
        at: datetime | None,
        include_facts: bool = True,
    ) -> Op:
        """Level-by-level BFS in SQL: each level returns only the new nodes (not every
        edge), as whole entity rows so no further query fetches them; then, on request, one
        query fetches the facts among them."""
        if depth < 1 or max_nodes < 1:
            return Subgraph([], [])
        params = _fact_params(campaign_id, npc_id=npc_id, rel_types=rel_types, at=at)
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
                        WHERE r.source_id = ANY(%(f)s) AND {_FACT_FILTER}
                        UNION
                        SELECT r.source_id FROM relationships r
                        WHERE r.target_id = ANY(%(f)s) AND {_FACT_FILTER})
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
            f"""{_FACTS_WITH_NAMES}
                WHERE r.source_id = ANY(%(ids)s) AND r.target_id = ANY(%(ids)s)
                  AND {_FACT_FILTER}
                ORDER BY r.rel_type, r.source_id, r.target_id, r.id""",
            dict(params, ids=ids),
        )
        return Subgraph(found, [_known_fact(f, npc_id) for f in facts])

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
            yield from self._neighbors_op(
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
        params = _fact_params(campaign_id, npc_id=npc_id, rel_types=rel_types)
        parents: tuple[dict[str, Any], dict[str, Any]] = ({source_id: None}, {target_id: None})
        frontiers: tuple[list[str], list[str]] = ([source_id], [target_id])
        depth = 0
        while depth < max_depth and frontiers[0] and frontiers[1]:
            side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
            rows = yield from self._expand_op(campaign_id, frontiers[side], params)
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
                return self._join_path(parents, meet)
            frontiers = (nxt, frontiers[1]) if side == 0 else (frontiers[0], nxt)
        return []

    @staticmethod
    def _join_path(parents: tuple[dict[str, Any], dict[str, Any]], meet: str) -> list[Relationship]:
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

    @operation
    def visible_subgraph(
        self, campaign_id: str, npc_id: str, *, depth: int = 2, max_nodes: int = 200
    ) -> Op:
        """What `npc_id` knows around itself: only facts visible to it are followed."""
        return (
            yield from self._neighbors_op(
                campaign_id, npc_id, depth, None, None, max_nodes, npc_id, None
            )
        )

    def _identity_op(self, campaign_id: str, npc_id: str, fact_limit: int) -> Op:
        row = yield fetch_one(
            """SELECT e.*, to_jsonb(p) AS profile FROM entities e
               LEFT JOIN npc_profiles p ON p.campaign_id = e.campaign_id AND p.entity_id = e.id
               WHERE e.campaign_id = %s AND e.id = %s""",
            (campaign_id, npc_id),
        )
        if row is None:
            raise NotFoundError(f"unknown NPC {npc_id!r} in campaign {campaign_id!r}")
        profile = from_row(NpcProfile, row["profile"]) if row["profile"] else None
        # Three disjoint index-backed arms (out, in, known_by GIN) instead of one OR that
        # would scan, each cut to its best `limit` rows by the ranked indexes: a hub NPC's
        # top facts are read without joining names onto all of its hundreds (3.8 -> 0.9 ms).
        # The arms are the whole visibility filter (the NPC is source or target, or listed in
        # known_by; current, canon), so the outer query only joins names and merges.
        facts = yield fetch_all(
            _IDENTITY_FACTS,
            {"c": campaign_id, "npc": npc_id, "limit": fact_limit},
        )
        return IdentitySnapshot(
            entity=from_row(Entity, row),
            profile=profile,
            facts=[_known_fact(f, npc_id) for f in facts],
        )

    @read_operation
    def identity_snapshot(self, campaign_id: str, npc_id: str, *, fact_limit: int = 50) -> Op:
        """The NPC, its profile, and the facts it is part of or knows (visible to it only)."""
        return (yield from self._identity_op(campaign_id, npc_id, fact_limit))
