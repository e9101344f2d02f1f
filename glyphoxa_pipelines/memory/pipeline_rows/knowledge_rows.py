"""Extracted knowledge as the extraction step replaces it: the graph a session is resolved
against, its entities and facts written, and what a reprocess clears and restores.

A reprocess runs these in one transaction: clear what the session's extraction wrote (facts
it invalidated become current again), then write the new entities and facts; rows the
pipeline does not own (`ownership`) are never touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory.knowledge_graph import REL_COLUMNS, relationship_params
from glyphoxa_pipelines.memory.limits import MAX_NAME_CHARS
from glyphoxa_pipelines.memory.models import Entity, Relationship
from glyphoxa_pipelines.memory.pipeline_rows.ownership import (
    EPISODE_TYPE,
    pipeline_entity,
    pipeline_fact,
)
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.spelling_suggestions import OFFERED


def campaign_entities_op(campaign_id: str, *, exclude_session: str | None = None) -> Op:
    """Entities of a campaign; with `exclude_session`, without the entities that session's
    extraction made (so a reprocess re-creates them instead of "resolving" to itself)."""
    rows = yield fetch_all(
        f"""SELECT * FROM entities WHERE campaign_id = %(c)s
               AND NOT (%(s)s::text IS NOT NULL AND {pipeline_entity()}
                        AND session_id = %(s)s)
           ORDER BY id""",
        {"c": campaign_id, "s": exclude_session},
    )
    return [from_row(Entity, r) for r in rows]


def current_facts_op(campaign_id: str, *, exclude_session: str | None = None) -> Op:
    """Current facts (not invalidated, not rejected), without one session's extracted ones."""
    rows = yield fetch_all(
        f"""SELECT {REL_COLUMNS} FROM relationships r
            WHERE r.campaign_id = %(c)s AND r.invalidated_at IS NULL AND r.status <> 'rejected'
              AND NOT (%(s)s::text IS NOT NULL AND r.session_id = %(s)s
                       AND {pipeline_fact('r')})
            ORDER BY r.id""",
        {"c": campaign_id, "s": exclude_session},
    )
    return [from_row(Relationship, r) for r in rows]


def session_facts_op(session_id: str) -> Op:
    rows = yield fetch_all(
        f"""SELECT {REL_COLUMNS} FROM relationships r WHERE r.session_id = %s
            ORDER BY r.source_id, r.rel_type, r.target_id, r.id""",
        (session_id,),
    )
    return [from_row(Relationship, r) for r in rows]


def upsert_session_entity_op(entity: Entity, session_id: str) -> Op:
    """Insert an entity this session found; an existing row is only updated when this same
    session's pipeline made it (DM/import entities and other sessions' are never changed).
    Returns True when the row is this session's."""
    row = yield fetch_one(
        f"""INSERT INTO entities (campaign_id, id, type, name, aliases, attributes, provenance,
               session_id, extractor_version)
           VALUES (%s, %s, %s, %s, %s, %s::jsonb, 'extracted', %s, %s)
           ON CONFLICT (campaign_id, id) DO UPDATE SET
               type = EXCLUDED.type, name = EXCLUDED.name, aliases = EXCLUDED.aliases,
               attributes = EXCLUDED.attributes,
               extractor_version = EXCLUDED.extractor_version, updated_at = now()
           WHERE {pipeline_entity('entities')} AND entities.session_id = EXCLUDED.session_id
             AND (entities.type, entities.name, entities.aliases, entities.attributes,
                  entities.extractor_version)
                 IS DISTINCT FROM (EXCLUDED.type, EXCLUDED.name, EXCLUDED.aliases,
                                   EXCLUDED.attributes, EXCLUDED.extractor_version)
           RETURNING id""",
        (
            entity.campaign_id,
            entity.id,
            entity.type,
            entity.name.strip(),
            list(entity.aliases),
            json.dumps(entity.attributes),
            session_id,
            entity.extractor_version,
        ),
    )
    return row is not None


def insert_fact_op(rel: Relationship) -> Op:
    """Insert a pipeline fact unless a current fact with the same (source, type, target)
    exists (another session's, the DM's, a confirmed one: theirs stands) or the DM rejected
    that triple. Returns the new id, or None when skipped."""
    row = yield fetch_one(
        """INSERT INTO relationships (campaign_id, source_id, target_id, rel_type, attributes,
               confidence, assertion, provenance, dm_confirmed, status, visibility, known_by,
               session_id, observed_at, evidence, valid_from, invalidated_at, invalidated_by,
               extractor_version)
           SELECT %(campaign_id)s, %(source_id)s, %(target_id)s, %(rel_type)s,
               %(attributes)s::jsonb, %(confidence)s, %(assertion)s, %(provenance)s,
               %(dm_confirmed)s, %(status)s, %(visibility)s, %(known_by)s, %(session_id)s,
               %(observed_at)s, %(evidence)s, coalesce(%(valid_from)s, now()),
               %(invalidated_at)s, %(invalidated_by)s, %(extractor_version)s
           WHERE NOT EXISTS (SELECT 1 FROM relationships x
                             WHERE x.campaign_id = %(campaign_id)s
                               AND x.source_id = %(source_id)s AND x.rel_type = %(rel_type)s
                               AND x.target_id = %(target_id)s AND x.status = 'rejected')
           ON CONFLICT (campaign_id, source_id, rel_type, target_id)
               WHERE invalidated_at IS NULL DO NOTHING
           RETURNING id""",
        relationship_params(rel),
    )
    return row["id"] if row else None


def clear_session_knowledge_op(campaign_id: str, session_id: str) -> Op:
    """Undo what this session's extraction wrote, keeping DM decisions: facts it invalidated
    become current again, its own facts go (except confirmed/rejected ones), then its entities
    that nothing else references (the episode entity is the summary asset's)."""
    restored = yield execute(
        f"""UPDATE relationships o SET invalidated_at = NULL, invalidated_by = NULL,
               updated_at = now()
           FROM relationships n
           WHERE n.id = o.invalidated_by AND n.campaign_id = %(c)s AND n.session_id = %(s)s
             AND {pipeline_fact('n')}
             AND NOT EXISTS (SELECT 1 FROM relationships x
                             WHERE x.campaign_id = o.campaign_id AND x.source_id = o.source_id
                               AND x.rel_type = o.rel_type AND x.target_id = o.target_id
                               AND x.invalidated_at IS NULL)""",
        {"c": campaign_id, "s": session_id},
    )
    facts = yield execute(
        f"""DELETE FROM relationships WHERE campaign_id = %s AND session_id = %s
               AND {pipeline_fact()}""",
        (campaign_id, session_id),
    )
    entities = yield execute(
        f"""DELETE FROM entities e WHERE e.campaign_id = %(c)s AND e.session_id = %(s)s
               AND {pipeline_entity('e')} AND e.type <> %(ep)s
               AND NOT EXISTS (SELECT 1 FROM relationships r WHERE r.campaign_id = %(c)s
                               AND (r.source_id = e.id OR r.target_id = e.id))
               AND NOT EXISTS (SELECT 1 FROM npc_profiles p WHERE p.campaign_id = %(c)s
                               AND p.entity_id = e.id)""",
        {"c": campaign_id, "s": session_id, "ep": EPISODE_TYPE},
    )
    spellings = yield execute(
        "DELETE FROM spelling_suggestions WHERE campaign_id = %s AND session_id = %s",
        (campaign_id, session_id),
    )
    return {"facts_restored": restored, "facts_deleted": facts, "entities_deleted": entities,
            "spellings_cleared": spellings}


def suggest_spellings_op(
    campaign_id: str, session_id: str, spellings: Mapping[str, Sequence[str]]
) -> Op:
    """Offer the DM the session's new spellings of known entities (entity id -> spellings)
    as aliases; a spelling the entity already has, or the DM dismissed, is not offered.
    Returns how many were offered."""
    pairs = [(entity_id, spelling.strip()) for entity_id, found in sorted(spellings.items())
             for spelling in found if 0 < len(spelling.strip()) <= MAX_NAME_CHARS]
    if not pairs:
        return 0
    offered = yield execute(
        f"""INSERT INTO spelling_suggestions (campaign_id, entity_id, spelling, session_id)
           SELECT s.campaign_id, s.entity_id, s.spelling, %(s)s
           FROM (SELECT %(c)s::text AS campaign_id, x.entity_id, x.spelling
                 FROM unnest(%(ids)s::text[], %(spellings)s::text[]) AS x(entity_id, spelling)) s
           JOIN entities e ON e.campaign_id = s.campaign_id AND e.id = s.entity_id
           WHERE {OFFERED}
           ON CONFLICT DO NOTHING""",
        {"c": campaign_id, "s": session_id, "ids": [p[0] for p in pairs],
         "spellings": [p[1] for p in pairs]},
    )
    return offered


def invalidate_fact_op(fact_id: int, by: int | None, at: datetime | None) -> Op:
    n = yield execute(
        f"""UPDATE relationships SET invalidated_at = coalesce(%s, now()), invalidated_by = %s,
               updated_at = now()
           WHERE id = %s AND invalidated_at IS NULL AND {pipeline_fact()}""",
        (at, by, fact_id),
    )
    return n > 0


def dangling_facts_op(campaign_id: str, session_id: str) -> Op:
    """Facts of the session whose source or target entity does not exist (should be 0; the
    foreign keys make it so, the check proves it on any backend)."""
    row = yield fetch_one(
        """SELECT count(*) AS facts,
                  count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM entities s
                                       WHERE s.campaign_id = r.campaign_id AND s.id = r.source_id)
                                   OR NOT EXISTS (SELECT 1 FROM entities t
                                       WHERE t.campaign_id = r.campaign_id AND t.id = r.target_id))
                      AS dangling
           FROM relationships r WHERE r.campaign_id = %s AND r.session_id = %s""",
        (campaign_id, session_id),
    )
    return row
