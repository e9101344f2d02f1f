"""L3 entities and NPC profiles: insert / edit / resolve / find, scoped by campaign.

Entity rows (names, aliases, attributes) are visible to every NPC by design; what an NPC may
not know lives in facts (see `visibility`) and in its own profile.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

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
from glyphoxa_pipelines.memory.models import Entity, NpcProfile
from glyphoxa_pipelines.memory.rows import from_row

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


def upsert_entity_op(entity: Entity) -> Op[Entity]:
    """Insert or replace an entity (id defaults to the slug of its name); an unchanged row
    keeps its `updated_at`."""
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


def entities_by_id_op(campaign_id: str, ids: Sequence[str]) -> Op[dict[str, Entity]]:
    """Entities by id (those that exist), keyed by id."""
    rows = yield fetch_all(
        "SELECT * FROM entities WHERE campaign_id = %s AND id = ANY(%s)",
        (campaign_id, list(ids)),
    )
    return {r["id"]: from_row(Entity, r) for r in rows}


class EntityOperations:
    """The entity and NPC-profile half of `KnowledgeGraph` (which binds `db`)."""

    db: Any

    @operation
    def add_entity(self, entity: Entity) -> Op:
        """Insert or replace an entity (id defaults to the slug of its name)."""
        try:
            return (yield from upsert_entity_op(entity))
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
