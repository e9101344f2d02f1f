"""Sessions and campaigns as the pipeline sees them: what a session holds, which sessions
the sensors and the nightly schedule should run, what is stale, and the campaign settings the
pipeline reads and publishes (the STT keyword list)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory.errors import NotFoundError


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
           FROM sessions s
           LEFT JOIN session_entries e ON e.campaign_id = s.campaign_id AND e.session_id = s.id
           WHERE s.id = %s GROUP BY s.campaign_id, s.id""",
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


def campaign_session_ids_op(campaign_id: str, *, ended_only: bool = False) -> Op:
    rows = yield fetch_all(
        """SELECT id FROM sessions WHERE campaign_id = %s
               AND (NOT %s OR status = 'ended') ORDER BY started_at, id""",
        (campaign_id, ended_only),
    )
    return [r["id"] for r in rows]


def session_speakers_op(session_id: str) -> Op:
    """Speaker names by role, most talkative first."""
    rows = yield fetch_all(
        """SELECT speaker_name, speaker_role, count(*) AS turns FROM session_entries
           WHERE session_id = %s AND speaker_name <> ''
           GROUP BY speaker_name, speaker_role ORDER BY turns DESC, speaker_name""",
        (session_id,),
    )
    return rows


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
                  AND NOT EXISTS (SELECT 1 FROM chunk_embeddings ce
                                  WHERE ce.campaign_id = c.campaign_id AND ce.chunk_id = c.id
                                  AND ce.model = %(m)s)) AS unembedded,
              (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id
                  AND NOT EXISTS (SELECT 1 FROM entry_embeddings ee
                                  WHERE ee.campaign_id = e.campaign_id AND ee.entry_id = e.id
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
