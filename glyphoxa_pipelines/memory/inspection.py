"""The operator's view of one campaign's memory: the design's "Inspecting memory state" SQL,
rewritten for this schema and scoped to a campaign (the design's multi-hop query, adapted
naively, walks into other campaigns). Each is a read operation with bound parameters, run by
`glyphoxa inspect`; graph-shaped questions (an NPC's relationships, the review queue, a
multi-hop walk) go through `KnowledgeGraph` so they read the graph as every other caller does.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op, fetch_all

Rows = list[dict[str, Any]]


def entries_per_session_op(campaign_id: str) -> Op[Rows]:
    """Each session in timeline order with its entries, how many the correction changed,
    and its chunks."""
    rows: Rows = yield fetch_all(
        """SELECT s.id AS session_id, s.title, s.status, s.started_at,
                  (SELECT count(*) FROM session_entries e WHERE e.session_id = s.id) AS entries,
                  (SELECT count(*) FROM session_entries e
                    WHERE e.session_id = s.id AND e.text <> e.raw_text) AS corrected,
                  (SELECT count(*) FROM chunks c WHERE c.session_id = s.id) AS chunks
           FROM sessions s WHERE s.campaign_id = %s
           ORDER BY s.started_at, s.id""",
        (campaign_id,),
    )
    return rows


def raw_vs_corrected_op(campaign_id: str, session_id: str | None, limit: int) -> Op[Rows]:
    """Entries whose corrected text differs from what was heard, oldest first."""
    rows: Rows = yield fetch_all(
        """SELECT e.id, e.session_id, e.speaker_name, e.raw_text, e.text, e.corrections
           FROM session_entries e
           WHERE e.campaign_id = %(c)s AND e.text <> e.raw_text
             AND (%(s)s::text IS NULL OR e.session_id = %(s)s)
           ORDER BY e.spoken_at, e.id LIMIT %(n)s""",
        {"c": campaign_id, "s": session_id, "n": limit},
    )
    return rows


def embedding_coverage_op(campaign_id: str) -> Op[Rows]:
    """Per embedding model: chunks and entries embedded, out of how many there are."""
    rows: Rows = yield fetch_all(
        """WITH totals AS (
               SELECT (SELECT count(*) FROM chunks WHERE campaign_id = %(c)s) AS chunks,
                      (SELECT count(*) FROM session_entries WHERE campaign_id = %(c)s)
                          AS entries),
           models AS (
               SELECT model FROM chunk_embeddings WHERE campaign_id = %(c)s
               UNION SELECT model FROM entry_embeddings WHERE campaign_id = %(c)s)
           SELECT m.model,
                  (SELECT count(*) FROM chunk_embeddings ce
                    WHERE ce.campaign_id = %(c)s AND ce.model = m.model) AS chunks_embedded,
                  t.chunks,
                  (SELECT count(*) FROM entry_embeddings ee
                    WHERE ee.campaign_id = %(c)s AND ee.model = m.model) AS entries_embedded,
                  t.entries
           FROM models m CROSS JOIN totals t ORDER BY m.model""",
        {"c": campaign_id},
    )
    return rows


def entities_by_type_op(campaign_id: str) -> Op[Rows]:
    """How many entities of each type, and how many of them the pipeline extracted (the rest
    came from the DM or a campaign file)."""
    rows: Rows = yield fetch_all(
        """SELECT type, count(*) AS entities,
                  count(*) FILTER (WHERE provenance = 'extracted') AS extracted
           FROM entities WHERE campaign_id = %s GROUP BY type ORDER BY type""",
        (campaign_id,),
    )
    return rows
