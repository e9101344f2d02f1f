"""L3 facts: typed, directed relationships with provenance, validity in time and visibility.

Every read that takes an `npc_id` composes `FACT_FILTER`, which applies the one visibility
rule (`visibility.VISIBLE_TO_NPC`) beside currency (now, or at a time), review status and
relation types.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from psycopg import errors as pg_errors
from psycopg import sql

from glyphoxa_pipelines.db.operations import (
    Op,
    execute,
    fetch_all,
    fetch_one,
    operation,
    read_operation,
)
from glyphoxa_pipelines.memory.errors import InvalidInputError, NotFoundError
from glyphoxa_pipelines.memory.models import KnownFact, Relationship
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.visibility import VISIBLE_TO_NPC, is_secret

Direction = Literal["out", "in", "both"]

# Relations that hold both ways (the design: ALLIED_WITH and HOSTILE_TO "in both directions").
# One row stands for both: a write of the mirror updates the stored row, and a read by
# direction finds the row from either end. Compared lower-cased, so the design's upper-case
# types and the extractor's lower-case ones are one relation.
SYMMETRIC_RELATIONS = frozenset(
    {"allied_with", "hostile_to", "enemy_of", "friend_of", "sibling_of", "spouse_of"}
)

REL_COLUMNS = (
    "r.id, r.campaign_id, r.source_id, r.target_id, r.rel_type, r.attributes, r.confidence, "
    "r.assertion, r.provenance, r.dm_confirmed, r.status, r.visibility, r.known_by, "
    "r.session_id, r.observed_at, r.evidence, r.valid_from, r.invalidated_at, "
    "r.invalidated_by, r.extractor_version"
)


def fact_filter(*, history: bool = False) -> sql.Composed:
    """WHERE fragment over `relationships r`: the campaign %(c)s; canon (or pending too, with
    %(pending)s); true now, or at %(at)s when given, or ever with `history`; visible to
    %(npc)s; of the relation types %(types)s when given. Parameters: `fact_params`."""
    current = sql.SQL("true" if history else "r.invalidated_at IS NULL")
    return sql.SQL(
        """
    r.campaign_id = %(c)s
    AND (%(pending)s OR r.status = 'canon')
    AND r.status <> 'rejected'
    AND (CASE WHEN %(at)s::timestamptz IS NULL THEN {current}
              ELSE r.valid_from <= %(at)s
                   AND (r.invalidated_at IS NULL OR r.invalidated_at > %(at)s) END)
    AND {visible}
    AND (%(types)s::text[] IS NULL OR r.rel_type = ANY(%(types)s))
"""
    ).format(current=current, visible=VISIBLE_TO_NPC)


# The usual filter (current facts), rendered once.
FACT_FILTER = fact_filter().as_string()


def fact_params(
    campaign_id: str,
    *,
    npc_id: str | None = None,
    rel_types: Sequence[str] | None = None,
    at: datetime | None = None,
    include_pending: bool = False,
) -> dict[str, Any]:
    """The named parameters `fact_filter` reads."""
    return {
        "c": campaign_id,
        "npc": npc_id,
        "types": list(rel_types) if rel_types else None,
        "at": at,
        "pending": include_pending,
    }


def known_fact(row: dict[str, Any]) -> KnownFact:
    """A fact row with `source_name` / `target_name` as the NPC that read it sees it."""
    rel = from_row(Relationship, row)
    return KnownFact(
        relationship=rel,
        source_name=row["source_name"],
        target_name=row["target_name"],
        secret=is_secret(rel.visibility),
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


FACTS_WITH_NAMES = f"""
    SELECT {REL_COLUMNS}, s.name AS source_name, t.name AS target_name
    FROM relationships r
    JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
    JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
"""


def upsert_relationship_op(rel: Relationship, *, protect_confirmed: bool) -> Op[Relationship]:
    """Insert or replace the current fact (source, type, target); with `protect_confirmed`,
    a DM-made or DM-confirmed fact stands unchanged."""
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
    if rel.rel_type.lower() in SYMMETRIC_RELATIONS:
        mirror = yield fetch_one(
            """SELECT 1 FROM relationships WHERE campaign_id = %s AND source_id = %s
                   AND rel_type = %s AND target_id = %s AND invalidated_at IS NULL""",
            (rel.campaign_id, rel.target_id, rel.rel_type, rel.source_id),
        )
        if mirror is not None:  # the same fact stated from the other end: update that row
            rel = dataclasses.replace(rel, source_id=rel.target_id, target_id=rel.source_id)
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


def record_replacement_op(campaign_id: str, fact_id: int, replaced_by: int | None) -> Op[int]:
    """Record which fact replaced an invalidated one (a retcon), so history reads as a chain."""
    n = yield execute(
        "UPDATE relationships SET invalidated_by = %s WHERE campaign_id = %s AND id = %s",
        (replaced_by, campaign_id, fact_id),
    )
    return n


class FactOperations:
    """The fact half of `KnowledgeGraph` (which binds `db`)."""

    db: Any

    @operation
    def add_relationship(self, rel: Relationship, *, protect_confirmed: bool = False) -> Op:
        """Insert or replace the current fact (source, type, target). With
        `protect_confirmed`, DM-made or DM-confirmed facts are left as they are."""
        try:
            return (yield from upsert_relationship_op(rel, protect_confirmed=protect_confirmed))
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
        params = fact_params(
            campaign_id, npc_id=npc_id, rel_types=rel_types, at=at, include_pending=include_pending
        )
        params.update(e=entity_id, limit=limit, sym=sorted(SYMMETRIC_RELATIONS))
        mirrored = "lower(r.rel_type) = ANY(%(sym)s)"
        ends = {
            "out": f"(r.source_id = %(e)s OR (r.target_id = %(e)s AND {mirrored}))",
            "in": f"(r.target_id = %(e)s OR (r.source_id = %(e)s AND {mirrored}))",
            "both": "(r.source_id = %(e)s OR r.target_id = %(e)s)",
        }[direction]
        rows = yield fetch_all(
            f"""SELECT {REL_COLUMNS} FROM relationships r WHERE {ends} AND {FACT_FILTER}
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
        visibility: Literal["public", "secret", "hidden"],
        known_by: Sequence[str] = (),
    ) -> Op:
        try:
            row = yield fetch_one(
                f"""UPDATE relationships r SET visibility = %s, known_by = %s, updated_at = now()
                   WHERE r.campaign_id = %s AND r.id = %s RETURNING {REL_COLUMNS}""",
                (visibility, list(known_by), campaign_id, rel_id),
            )
        except pg_errors.CheckViolation as exc:
            raise InvalidInputError(f"fact {rel_id}: {exc.diag.message_primary}") from exc
        if row is None:
            raise NotFoundError(f"unknown fact {rel_id} in campaign {campaign_id!r}")
        return from_row(Relationship, row)

    @operation
    def reveal(
        self, campaign_id: str, rel_id: int, to: Sequence[str] | None = None
    ) -> Op[Relationship]:
        """The DM reveals a fact in one call: to the NPCs `to` (added to `known_by`; the
        rest still do not see it) or, with `to` None, to all (it becomes public)."""
        return reveal_op(campaign_id, rel_id, to)

    @read_operation
    def review_queue(self, campaign_id: str, *, limit: int = 100) -> Op:
        rows = yield fetch_all(
            f"""{FACTS_WITH_NAMES} WHERE r.campaign_id = %s AND r.status = 'pending'
                   AND r.invalidated_at IS NULL
                ORDER BY r.confidence DESC, r.id LIMIT %s""",
            (campaign_id, limit),
        )
        return [known_fact(r) for r in rows]


def reveal_op(campaign_id: str, rel_id: int, to: Sequence[str] | None) -> Op[Relationship]:
    """See `FactOperations.reveal`."""
    told = list(dict.fromkeys(to or ()))
    if to is not None and not told:
        raise InvalidInputError("reveal to whom? name at least one NPC, or reveal to all")
    missing = yield fetch_all(
        """SELECT x.id FROM unnest(%s::text[]) AS x(id)
           WHERE NOT EXISTS (SELECT 1 FROM entities e
                             WHERE e.campaign_id = %s AND e.id = x.id)""",
        (told, campaign_id),
    )
    if missing:
        names = ", ".join(repr(m["id"]) for m in missing)
        raise NotFoundError(f"reveal fact {rel_id}: unknown entity {names}")
    row = yield fetch_one(
        f"""UPDATE relationships r
               SET visibility = CASE WHEN %(all)s THEN 'public' ELSE r.visibility END,
                   known_by = CASE WHEN %(all)s THEN r.known_by ELSE ARRAY(
                       SELECT DISTINCT k FROM unnest(r.known_by || %(to)s::text[]) AS k(k)
                       ORDER BY k) END,
                   updated_at = now()
            WHERE r.campaign_id = %(c)s AND r.id = %(id)s RETURNING {REL_COLUMNS}""",
        {"all": to is None, "to": told, "c": campaign_id, "id": rel_id},
    )
    if row is None:
        raise NotFoundError(f"unknown fact {rel_id} in campaign {campaign_id!r}")
    return from_row(Relationship, row)
