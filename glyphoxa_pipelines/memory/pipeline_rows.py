"""Store operations only the pipeline needs: replacing one session's derived rows, staleness,
asset-check queries, and what the sensors and the nightly schedule look at.

Why a separate module: the lead's stores are the shared API of the realtime service and the
pipeline; these operations encode pipeline rules (what a session's pipeline "owns", what a
reprocess may delete) and compose with the stores' operations into one transaction.

Ownership rule: a session's pipeline owns rows with provenance 'extracted' and that session_id,
except DM decisions: facts the DM confirmed (dm_confirmed) or rejected (status 'rejected')
survive reprocessing, and an entity is only deleted when no fact outside the session still
references it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from glyphoxa_pipelines.db.operations import Op, execute, execute_many, fetch_all, fetch_one
from glyphoxa_pipelines.memory.errors import NotFoundError
from glyphoxa_pipelines.memory.knowledge_graph import REL_COLUMNS, relationship_params
from glyphoxa_pipelines.memory.models import Entity, Relationship
from glyphoxa_pipelines.memory.rows import from_row

EPISODE_TYPE = "episode"


# ----------------------------------------------------------------------------- lookups


def session_info_op(session_id: str) -> Op:
    """The session row plus L1 figures the raw_transcript asset reports."""
    row = yield fetch_one(
        """SELECT s.id, s.campaign_id, s.title, s.status, s.started_at, s.ended_at,
                  count(e.id) AS entries, coalesce(max(e.id), 0) AS max_entry_id,
                  count(DISTINCT nullif(e.speaker_name, '')) AS speakers,
                  coalesce(sum(array_length(regexp_split_to_array(btrim(e.raw_text), '\\s+'),
                                            1)), 0) AS words,
                  coalesce(extract(epoch FROM max(e.spoken_at
                      + make_interval(secs => e.duration_s)) - min(e.spoken_at)), 0)
                      AS duration_s
           FROM sessions s LEFT JOIN session_entries e ON e.session_id = s.id
           WHERE s.id = %s GROUP BY s.id""",
        (session_id,),
    )
    if row is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    return row


def campaign_settings_op(campaign_id: str) -> Op:
    row = yield fetch_one(
        "SELECT id, review_threshold, active_embedding_model, settings FROM campaigns "
        "WHERE id = %s",
        (campaign_id,),
    )
    if row is None:
        raise NotFoundError(f"unknown campaign {campaign_id!r}")
    return row


def campaign_entities_op(campaign_id: str, *, exclude_session: str | None = None) -> Op:
    """Entities of a campaign; with `exclude_session`, without the entities that session's
    extraction made (so a reprocess re-creates them instead of "resolving" to itself)."""
    rows = yield fetch_all(
        """SELECT * FROM entities WHERE campaign_id = %(c)s
               AND NOT (%(s)s::text IS NOT NULL AND provenance = 'extracted'
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
              AND NOT (%(s)s::text IS NOT NULL AND r.provenance = 'extracted'
                       AND r.session_id = %(s)s AND NOT r.dm_confirmed)
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


# ----------------------------------------------------------------------------- replacement


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


def upsert_session_entity_op(entity: Entity, session_id: str) -> Op:
    """Insert an entity this session found; an existing row is only updated when this same
    session's pipeline made it (DM/import entities and other sessions' are never changed).
    Returns True when the row is this session's."""
    row = yield fetch_one(
        """INSERT INTO entities (campaign_id, id, type, name, aliases, attributes, provenance,
               session_id, extractor_version)
           VALUES (%s, %s, %s, %s, %s, %s::jsonb, 'extracted', %s, %s)
           ON CONFLICT (campaign_id, id) DO UPDATE SET
               type = EXCLUDED.type, name = EXCLUDED.name, aliases = EXCLUDED.aliases,
               attributes = EXCLUDED.attributes,
               extractor_version = EXCLUDED.extractor_version, updated_at = now()
           WHERE entities.provenance = 'extracted' AND entities.session_id = EXCLUDED.session_id
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


def clear_session_knowledge_op(campaign_id: str, session_id: str) -> Op:
    """Undo what this session's extraction wrote, keeping DM decisions: facts it invalidated
    become current again, its own facts go (except confirmed/rejected ones), then its entities
    that nothing else references (the episode entity is the summary asset's)."""
    restored = yield execute(
        """UPDATE relationships o SET invalidated_at = NULL, invalidated_by = NULL,
               updated_at = now()
           FROM relationships n
           WHERE n.id = o.invalidated_by AND n.campaign_id = %(c)s AND n.session_id = %(s)s
             AND n.provenance = 'extracted' AND NOT n.dm_confirmed AND n.status <> 'rejected'
             AND NOT EXISTS (SELECT 1 FROM relationships x
                             WHERE x.campaign_id = o.campaign_id AND x.source_id = o.source_id
                               AND x.rel_type = o.rel_type AND x.target_id = o.target_id
                               AND x.invalidated_at IS NULL)""",
        {"c": campaign_id, "s": session_id},
    )
    facts = yield execute(
        """DELETE FROM relationships WHERE campaign_id = %s AND session_id = %s
               AND provenance = 'extracted' AND NOT dm_confirmed AND status <> 'rejected'""",
        (campaign_id, session_id),
    )
    entities = yield execute(
        """DELETE FROM entities e WHERE e.campaign_id = %(c)s AND e.session_id = %(s)s
               AND e.provenance = 'extracted' AND e.type <> %(ep)s
               AND NOT EXISTS (SELECT 1 FROM relationships r WHERE r.campaign_id = %(c)s
                               AND (r.source_id = e.id OR r.target_id = e.id))
               AND NOT EXISTS (SELECT 1 FROM npc_profiles p WHERE p.campaign_id = %(c)s
                               AND p.entity_id = e.id)""",
        {"c": campaign_id, "s": session_id, "ep": EPISODE_TYPE},
    )
    return {"facts_restored": restored, "facts_deleted": facts, "entities_deleted": entities}


def invalidate_fact_op(fact_id: int, by: int | None, at: datetime | None) -> Op:
    n = yield execute(
        """UPDATE relationships SET invalidated_at = coalesce(%s, now()), invalidated_by = %s,
               updated_at = now()
           WHERE id = %s AND invalidated_at IS NULL AND NOT dm_confirmed
             AND provenance = 'extracted'""",
        (at, by, fact_id),
    )
    return n > 0


def clear_episode_op(campaign_id: str, episode_id: str) -> Op:
    """Remove the episode's participation links (the summary asset rebuilds them)."""
    n = yield execute(
        """DELETE FROM relationships WHERE campaign_id = %s AND target_id = %s
               AND provenance = 'extracted' AND NOT dm_confirmed AND status <> 'rejected'""",
        (campaign_id, episode_id),
    )
    return n


def existing_entity_ids_op(campaign_id: str, ids: Sequence[str]) -> Op:
    rows = yield fetch_all(
        "SELECT id FROM entities WHERE campaign_id = %s AND id = ANY(%s)",
        (campaign_id, list(ids)),
    )
    return {r["id"] for r in rows}


# ----------------------------------------------------------------------------- checks


def correction_coverage_op(session_id: str, corrector_version: str) -> Op:
    row = yield fetch_one(
        """SELECT count(*) AS entries,
                  count(*) FILTER (WHERE corrector_version IS DISTINCT FROM %s) AS uncorrected
           FROM session_entries WHERE session_id = %s""",
        (corrector_version, session_id),
    )
    return row


def chunk_coverage_op(session_id: str) -> Op:
    """Entries no chunk's [first_entry, last_entry] span covers (in spoken order). Computed
    from two index scans in Python: linear, and immune to the planner misjudging fresh tables."""
    entries = yield fetch_all(
        """SELECT id FROM session_entries WHERE session_id = %s AND btrim(text) <> ''
           ORDER BY spoken_at, id""",
        (session_id,),
    )
    spans = yield fetch_all(
        "SELECT first_entry_id, last_entry_id FROM chunks WHERE session_id = %s",
        (session_id,),
    )
    position = {r["id"]: n for n, r in enumerate(entries)}
    delta = [0] * (len(entries) + 1)
    for span in spans:
        lo = position.get(span["first_entry_id"])
        hi = position.get(span["last_entry_id"])
        if lo is None or hi is None or hi < lo:
            continue
        delta[lo] += 1
        delta[hi + 1] -= 1
    uncovered = depth = 0
    for n in range(len(entries)):
        depth += delta[n]
        uncovered += depth == 0
    return {"entries": len(entries), "uncovered": uncovered}


def embedding_coverage_op(session_id: str, model: str, max_tokens: int) -> Op:
    row = yield fetch_one(
        """SELECT count(*) AS chunks,
                  count(*) FILTER (WHERE NOT EXISTS (
                      SELECT 1 FROM chunk_embeddings e WHERE e.chunk_id = c.id
                        AND e.model = %s)) AS missing,
                  count(*) FILTER (WHERE c.token_count > %s) AS over_limit,
                  coalesce(max(c.token_count), 0) AS max_tokens
           FROM chunks c WHERE c.session_id = %s""",
        (model, max_tokens, session_id),
    )
    return row


def turn_embedding_coverage_op(session_id: str, model: str) -> Op:
    """The session's entries and how many have no per-turn embedding for `model`."""
    row = yield fetch_one(
        """SELECT count(*) AS entries,
                  count(*) FILTER (WHERE NOT EXISTS (
                      SELECT 1 FROM entry_embeddings x WHERE x.entry_id = e.id
                        AND x.model = %s)) AS missing
           FROM session_entries e WHERE e.session_id = %s""",
        (model, session_id),
    )
    return row


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


# ----------------------------------------------------------------------------- automation


def ended_sessions_op(since: datetime | None, limit: int = 200) -> Op:
    """Ended sessions changed after `since` (oldest change first), with a content version
    (entry count and highest entry id) so a re-import into an ended session runs again."""
    rows = yield fetch_all(
        """SELECT s.id, s.campaign_id, s.updated_at,
                  (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id) AS entries,
                  (SELECT coalesce(max(e.id), 0) FROM session_entries e
                   WHERE e.session_id = s.id) AS max_entry_id
           FROM sessions s
           WHERE s.status = 'ended' AND (%(since)s::timestamptz IS NULL
                                         OR s.updated_at > %(since)s)
           ORDER BY s.updated_at, s.id LIMIT %(limit)s""",
        {"since": since, "limit": limit},
    )
    return rows


def live_sessions_op() -> Op:
    rows = yield fetch_all(
        """SELECT s.id, s.campaign_id,
                  (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id) AS entries,
                  (SELECT coalesce(max(e.id), 0) FROM session_entries e
                   WHERE e.session_id = s.id) AS max_entry_id
           FROM sessions s WHERE s.status = 'live' ORDER BY s.id"""
    )
    return rows


def campaigns_to_consolidate_op() -> Op:
    """Campaigns whose sessions, entities or facts changed since the last consolidation
    (or that were never consolidated but have sessions)."""
    rows = yield fetch_all(
        """SELECT c.id FROM campaigns c
           LEFT JOIN campaign_summaries cs ON cs.campaign_id = c.id
           WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.campaign_id = c.id)
             AND (cs.campaign_id IS NULL
                  OR EXISTS (SELECT 1 FROM sessions s WHERE s.campaign_id = c.id
                             AND s.updated_at > cs.updated_at)
                  OR EXISTS (SELECT 1 FROM entities e WHERE e.campaign_id = c.id
                             AND e.updated_at > cs.updated_at)
                  OR EXISTS (SELECT 1 FROM relationships r WHERE r.campaign_id = c.id
                             AND r.updated_at > cs.updated_at)
                  OR EXISTS (SELECT 1 FROM session_summaries ss WHERE ss.campaign_id = c.id
                             AND ss.created_at > cs.updated_at))
           ORDER BY c.id"""
    )
    return [r["id"] for r in rows]


def campaign_session_ids_op(campaign_id: str, *, ended_only: bool = False) -> Op:
    rows = yield fetch_all(
        """SELECT id FROM sessions WHERE campaign_id = %s
               AND (NOT %s OR status = 'ended') ORDER BY started_at, id""",
        (campaign_id, ended_only),
    )
    return [r["id"] for r in rows]


def session_staleness_op(
    campaign_id: str,
    *,
    corrector_version: str,
    chunker_version: str,
    embedding_model: str,
    extractor_versions: Sequence[str],
) -> Op:
    """Per session of the campaign: what is missing or was made by another version."""
    rows = yield fetch_all(
        """SELECT s.id AS session_id, s.status, s.started_at,
              (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id) AS entries,
              (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id
                  AND e.corrector_version IS DISTINCT FROM %(cv)s) AS uncorrected,
              (SELECT count(*) FROM chunks c WHERE c.session_id = s.id) AS chunks,
              (SELECT count(*) FROM chunks c WHERE c.session_id = s.id
                  AND c.chunker_version <> %(chv)s) AS old_chunks,
              (SELECT count(*) FROM chunks c WHERE c.session_id = s.id
                  AND NOT EXISTS (SELECT 1 FROM chunk_embeddings ce WHERE ce.chunk_id = c.id
                                  AND ce.model = %(m)s)) AS unembedded,
              (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id
                  AND NOT EXISTS (SELECT 1 FROM entry_embeddings ee WHERE ee.entry_id = e.id
                                  AND ee.model = %(m)s)) AS unembedded_turns,
              (SELECT count(*) FROM relationships r WHERE r.session_id = s.id
                  AND r.provenance = 'extracted' AND r.rel_type <> 'appears_in'
                  AND NOT (r.extractor_version = ANY(%(ev)s))) AS old_facts,
              (SELECT count(*) FROM entities en WHERE en.session_id = s.id
                  AND en.provenance = 'extracted' AND en.type <> 'episode'
                  AND NOT (en.extractor_version = ANY(%(ev)s))) AS old_entities,
              EXISTS (SELECT 1 FROM session_summaries ss WHERE ss.session_id = s.id)
                  AS has_summary,
              EXISTS (SELECT 1 FROM recaps rc WHERE rc.session_id = s.id) AS has_recap
           FROM sessions s WHERE s.campaign_id = %(c)s ORDER BY s.started_at, s.id""",
        {
            "c": campaign_id,
            "cv": corrector_version,
            "chv": chunker_version,
            "m": embedding_model,
            "ev": list(extractor_versions),
        },
    )
    return rows


def set_campaign_keywords_op(campaign_id: str, keywords: Sequence[str]) -> Op:
    """Publish the campaign's name list (STT keyword boosting, phonetic matcher) in
    campaigns.settings->'stt_keywords' where the realtime service reads campaign settings."""
    n = yield execute(
        """UPDATE campaigns SET settings = jsonb_set(settings, '{stt_keywords}', %s::jsonb),
               updated_at = now()
           WHERE id = %s AND settings -> 'stt_keywords' IS DISTINCT FROM %s::jsonb""",
        (json.dumps(list(keywords)), campaign_id, json.dumps(list(keywords))),
    )
    return n


def set_fact_confidences_op(updates: Sequence[tuple[int, float, str]]) -> Op:
    """(fact id, confidence, status) for extracted, unconfirmed facts only."""
    if not updates:
        return 0
    n = yield execute_many(
        """UPDATE relationships SET confidence = %s, status = %s, updated_at = now()
           WHERE id = %s AND provenance = 'extracted' AND NOT dm_confirmed
             AND status <> 'rejected' AND (confidence, status) IS DISTINCT FROM (%s, %s)""",
        [(conf, status, fid, conf, status) for fid, conf, status in updates],
    )
    return n


# ----------------------------------------------------------------------------- text products


def chunk_vectors_op(session_id: str, model: str) -> Op:
    """{chunk id: embedding} of one session for one model (numpy arrays via pgvector)."""
    rows = yield fetch_all(
        """SELECT e.chunk_id, e.embedding FROM chunk_embeddings e
           WHERE e.session_id = %s AND e.model = %s""",
        (session_id, model),
    )
    return {r["chunk_id"]: r["embedding"] for r in rows}


def session_speakers_op(session_id: str) -> Op:
    """Speaker names by role, most talkative first."""
    rows = yield fetch_all(
        """SELECT speaker_name, speaker_role, count(*) AS turns FROM session_entries
           WHERE session_id = %s AND speaker_name <> ''
           GROUP BY speaker_name, speaker_role ORDER BY turns DESC, speaker_name""",
        (session_id,),
    )
    return rows


def set_chunk_entities_op(updates: Sequence[tuple[str, list[str]]]) -> Op:
    """(chunk id, entity ids): refresh what chunks mention once extraction knows more names."""
    if not updates:
        return 0
    n = yield execute_many(
        """UPDATE chunks SET entity_ids = %s
           WHERE id = %s AND entity_ids IS DISTINCT FROM %s""",
        [(ids, cid, ids) for cid, ids in updates],
    )
    return n


def campaign_summaries_op(campaign_id: str) -> Op:
    rows = yield fetch_all(
        """SELECT s.id, s.title, s.started_at, ss.summary, ss.key_points, ss.method
           FROM sessions s JOIN session_summaries ss ON ss.session_id = s.id
           WHERE s.campaign_id = %s ORDER BY s.started_at, s.id""",
        (campaign_id,),
    )
    return rows


# ----------------------------------------------------------------------------- consolidation


def merge_entity_op(campaign_id: str, dup_id: str, keep_id: str) -> Op:
    """Fold an extracted duplicate into `keep`: its facts are re-pointed (a fact `keep`
    already has current is dropped, history rows move too), chunk mentions follow, and its
    names become aliases of `keep` when `keep` is itself extracted (DM entities never change).
    """
    p = {"c": campaign_id, "d": dup_id, "k": keep_id}
    yield execute(
        """DELETE FROM relationships r WHERE r.campaign_id = %(c)s
               AND ((r.source_id = %(d)s AND r.target_id = %(k)s)
                    OR (r.source_id = %(k)s AND r.target_id = %(d)s)
                    OR (r.invalidated_at IS NULL AND NOT r.dm_confirmed AND EXISTS (
                        SELECT 1 FROM relationships x WHERE x.campaign_id = %(c)s
                          AND x.invalidated_at IS NULL AND x.rel_type = r.rel_type
                          AND x.source_id = CASE WHEN r.source_id = %(d)s THEN %(k)s
                                                 ELSE r.source_id END
                          AND x.target_id = CASE WHEN r.target_id = %(d)s THEN %(k)s
                                                 ELSE r.target_id END)))
               AND (r.source_id = %(d)s OR r.target_id = %(d)s)""",
        p,
    )
    moved = yield execute(
        """UPDATE relationships SET
               source_id = CASE WHEN source_id = %(d)s THEN %(k)s ELSE source_id END,
               target_id = CASE WHEN target_id = %(d)s THEN %(k)s ELSE target_id END,
               attributes = attributes || jsonb_build_object('merged_from', %(d)s),
               updated_at = now()
           WHERE campaign_id = %(c)s AND (source_id = %(d)s OR target_id = %(d)s)""",
        p,
    )
    yield execute(
        """UPDATE chunks SET entity_ids = ARRAY(
               SELECT x FROM unnest(array_replace(entity_ids, %(d)s, %(k)s))
                   WITH ORDINALITY AS u(x, n)
               GROUP BY x ORDER BY min(n))
           WHERE campaign_id = %(c)s AND %(d)s = ANY(entity_ids)""",
        p,
    )
    yield execute(
        """UPDATE entities k SET aliases = ARRAY(
               SELECT DISTINCT a FROM unnest(k.aliases || d.name || d.aliases) a
               WHERE lower(a) <> lower(k.name) ORDER BY a),
               updated_at = now()
           FROM entities d
           WHERE k.campaign_id = %(c)s AND k.id = %(k)s AND k.provenance = 'extracted'
             AND d.campaign_id = %(c)s AND d.id = %(d)s""",
        p,
    )
    yield execute(
        """DELETE FROM entities WHERE campaign_id = %(c)s AND id = %(d)s
               AND provenance = 'extracted'""",
        p,
    )
    return moved


def recompute_fact_confidence_op(campaign_id: str, threshold: float) -> Op:
    """Confidence of current extracted facts from all sessions: the extractor's confidence
    (kept in attributes.base_confidence) raised by 0.1 per further session whose chunks
    mention both ends, capped at 0.99; status follows the campaign's review threshold.
    Idempotent: the base is kept, never compounded. DM decisions are untouched."""
    n = yield execute(
        """WITH support AS (
               SELECT r.id,
                      coalesce((r.attributes ->> 'base_confidence')::real, r.confidence) AS base,
                      (SELECT count(DISTINCT c.session_id) FROM chunks c
                       WHERE c.campaign_id = r.campaign_id
                         AND c.entity_ids @> ARRAY[r.source_id, r.target_id]) AS sessions
               FROM relationships r
               WHERE r.campaign_id = %(c)s AND r.provenance = 'extracted'
                 AND NOT r.dm_confirmed AND r.status <> 'rejected'
                 AND r.invalidated_at IS NULL AND r.rel_type <> 'appears_in'),
           scored AS (
               SELECT id, base, sessions,
                      least(0.99, base + 0.1 * greatest(sessions - 1, 0))::real AS conf
               FROM support)
           UPDATE relationships r SET confidence = s.conf,
               status = CASE WHEN s.conf >= %(t)s THEN 'canon' ELSE 'pending' END,
               attributes = r.attributes || jsonb_build_object(
                   'base_confidence', s.base, 'supporting_sessions', s.sessions),
               updated_at = now()
           FROM scored s
           WHERE r.id = s.id AND (r.confidence IS DISTINCT FROM s.conf
               OR r.status IS DISTINCT FROM
                  (CASE WHEN s.conf >= %(t)s THEN 'canon' ELSE 'pending' END)
               OR r.attributes -> 'supporting_sessions' IS DISTINCT FROM to_jsonb(s.sessions))""",
        {"c": campaign_id, "t": threshold},
    )
    return n


def session_fact_sentences_op(session_id: str, limit: int = 8) -> Op:
    """The session's strongest current, public, canon facts as sentences (recap material)."""
    rows = yield fetch_all(
        """SELECT s.name AS source_name, r.rel_type, t.name AS target_name
           FROM relationships r
           JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
           JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
           WHERE r.session_id = %s AND r.invalidated_at IS NULL AND r.status = 'canon'
             AND r.visibility = 'public' AND r.rel_type <> 'appears_in'
           ORDER BY r.confidence DESC, r.id LIMIT %s""",
        (session_id, limit),
    )
    return [
        f"{r['source_name']} {r['rel_type'].replace('_', ' ')} {r['target_name']}" for r in rows
    ]
