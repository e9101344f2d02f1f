"""Store queries the realtime tools need that the memory store does not offer yet.

Written as operations (see `glyphoxa_pipelines.db.operations`) so they run on the async pool and
compose into one transaction. Every fact read composes the store's fact filter
(`graph_facts.FACT_FILTER`, which applies `visibility`'s rule), so there is exactly one
definition of "what an NPC may see".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
from pgvector import Vector

from glyphoxa_pipelines.db.operations import Op, fetch_all, fetch_one
from glyphoxa_pipelines.memory.graph_facts import (
    FACT_FILTER,
    REL_COLUMNS,
    fact_filter,
    fact_params,
    known_fact,
)
from glyphoxa_pipelines.memory.models import Entity, KnownFact
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.semantic_index import or_tsquery


def facts_about_op(
    campaign_id: str,
    entity_id: str,
    npc: str,
    *,
    limit: int = 20,
) -> Op:
    """Current canon facts touching `entity_id`, as `npc` may see them, best first, with names.
    Two ranked branches (outgoing, incoming) so a hub entity reads only its top rows."""
    params = fact_params(campaign_id, npc_id=npc)
    params.update(e=entity_id, limit=limit)
    rows = yield fetch_all(
        f"""SELECT f.*,
                (SELECT name FROM entities x WHERE x.campaign_id = f.campaign_id
                    AND x.id = f.source_id) AS source_name,
                (SELECT name FROM entities x WHERE x.campaign_id = f.campaign_id
                    AND x.id = f.target_id) AS target_name
            FROM (
                (SELECT {REL_COLUMNS} FROM relationships r
                 WHERE r.source_id = %(e)s AND {FACT_FILTER}
                 ORDER BY r.confidence DESC, r.rel_type, r.id LIMIT %(limit)s)
                UNION
                (SELECT {REL_COLUMNS} FROM relationships r
                 WHERE r.target_id = %(e)s AND {FACT_FILTER}
                 ORDER BY r.confidence DESC, r.rel_type, r.id LIMIT %(limit)s)
            ) f
            ORDER BY f.confidence DESC, f.rel_type, f.id LIMIT %(limit)s""",
        params,
    )
    return [known_fact(r) for r in rows]


_HISTORY_FILTER = fact_filter(history=True).as_string()


def search_facts_op(
    campaign_id: str,
    npc: str,
    *,
    query: str | None = None,
    entity_id: str | None = None,
    rel_types: Sequence[str] | None = None,
    after: datetime | None = None,
    before: datetime | None = None,
    at: datetime | None = None,
    include_history: bool = False,
    limit: int = 20,
) -> Op:
    """Facts matching words of `query` (names, relation, evidence), optionally about one entity,
    observed within [after, before), and true now — or at `at`, or ever (`include_history`)."""
    params = fact_params(campaign_id, npc_id=npc, rel_types=rel_types, at=at)
    params.update(
        q=or_tsquery(query) if query and query.strip() else None,
        e=entity_id,
        after=after,
        before=before,
        limit=limit,
    )
    # History (invalidated facts too) only when no point in time is asked for.
    where = _HISTORY_FILTER if include_history and at is None else FACT_FILTER
    # With words: rank only the facts that can match (migration 016's indexes: relation and
    # evidence, or either entity's name) instead of building the text of every fact.
    matching = (
        """WITH named AS MATERIALIZED (
               SELECT e.id FROM entities e WHERE e.campaign_id = %(c)s
                  AND to_tsvector('english', e.name) @@ to_tsquery('english', %(q)s)),
           matching AS MATERIALIZED (
               SELECT r.id FROM relationships r WHERE r.campaign_id = %(c)s
                  AND to_tsvector('english', replace(r.rel_type, '_', ' ') || ' ' || r.evidence)
                      @@ to_tsquery('english', %(q)s)
               UNION SELECT r.id FROM relationships r JOIN named n
                  ON r.campaign_id = %(c)s AND r.source_id = n.id
               UNION SELECT r.id FROM relationships r JOIN named n
                  ON r.campaign_id = %(c)s AND r.target_id = n.id)
        """
        if params["q"] is not None
        else ""
    )
    only_matching = "AND r.id IN (SELECT id FROM matching)" if matching else ""
    rows = yield fetch_all(
        f"""{matching}SELECT * FROM (
                SELECT {REL_COLUMNS}, s.name AS source_name, t.name AS target_name,
                   sess.started_at AS session_started_at,
                   CASE WHEN %(q)s::text IS NULL THEN 0 ELSE ts_rank_cd(
                       to_tsvector('english', s.name || ' ' || replace(r.rel_type, '_', ' ')
                                   || ' ' || t.name || ' ' || r.evidence),
                       to_tsquery('english', %(q)s)) END AS rank
              FROM relationships r
              JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
              JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id
              LEFT JOIN sessions sess ON sess.id = r.session_id
              WHERE {where} {only_matching}
                AND (%(e)s::text IS NULL OR r.source_id = %(e)s OR r.target_id = %(e)s)
                AND (%(after)s::timestamptz IS NULL
                     OR coalesce(r.observed_at, r.valid_from) >= %(after)s)
                AND (%(before)s::timestamptz IS NULL
                     OR coalesce(r.observed_at, r.valid_from) < %(before)s)
            ) f
            WHERE %(q)s::text IS NULL OR f.rank > 0
            ORDER BY f.rank DESC, coalesce(f.observed_at, f.valid_from) DESC, f.id
            LIMIT %(limit)s""",
        params,
    )
    return [(known_fact(r), r["session_started_at"]) for r in rows]


def search_events_op(
    campaign_id: str,
    *,
    query: str | None,
    after: datetime | None = None,
    before: datetime | None = None,
    limit: int = 10,
) -> Op:
    """Event / episode entities (what happened) matching `query`, by their session's date.
    Entity attributes are public to every NPC by design, so no visibility filter applies."""
    rows = yield fetch_all(
        """SELECT e.*, sess.started_at AS session_started_at FROM entities e
           LEFT JOIN sessions sess ON sess.id = e.session_id
           WHERE e.campaign_id = %(c)s AND e.type IN ('event', 'episode')
             AND (%(q)s::text IS NULL OR to_tsvector('english', e.name || ' ' || e.attributes::text)
                  @@ to_tsquery('english', %(q)s))
             AND (%(after)s::timestamptz IS NULL
                  OR coalesce(sess.started_at, e.created_at) >= %(after)s)
             AND (%(before)s::timestamptz IS NULL
                  OR coalesce(sess.started_at, e.created_at) < %(before)s)
           ORDER BY coalesce(sess.started_at, e.created_at) DESC, e.id LIMIT %(limit)s""",
        {
            "c": campaign_id,
            "q": or_tsquery(query) if query and query.strip() else None,
            "after": after,
            "before": before,
            "limit": limit,
        },
    )
    return [(from_row(Entity, r), r["session_started_at"]) for r in rows]




def entity_context_op(campaign_id: str, entity_id: str, npc: str, *, fact_limit: int = 8) -> Op:
    """An entity and its facts as `npc` sees them: what pre-fetch brings for a mentioned name."""
    row = yield fetch_one(
        "SELECT * FROM entities WHERE campaign_id = %s AND id = %s", (campaign_id, entity_id)
    )
    if row is None:
        return None
    facts = yield from facts_about_op(campaign_id, entity_id, npc, limit=fact_limit)
    return from_row(Entity, row), facts


def names_version_op(campaign_id: str) -> Op:
    """A cheap fingerprint of a campaign's names: refresh the correction index when it moves."""
    row = yield fetch_one(
        """SELECT count(*) AS n, max(updated_at) AS latest FROM entities
           WHERE campaign_id = %s""",
        (campaign_id,),
    )
    return (int(row["n"]), row["latest"])


def all_entities_op(campaign_id: str) -> Op:
    rows = yield fetch_all(
        "SELECT * FROM entities WHERE campaign_id = %s ORDER BY id", (campaign_id,)
    )
    return [from_row(Entity, r) for r in rows]


KnownFactList = list[KnownFact]


def chunk_turns_op(
    chunk_ids: Sequence[str],
    *,
    query_vector: Sequence[float] | np.ndarray | None = None,
    model: str | None = None,
) -> Op:
    """The L1 turns each chunk covers (first..last entry of its session), in spoken order:
    results can then show, and cite, single turns instead of whole windows.

    Every row has `similarity`: with both `query_vector` and `model`, the turn's cosine
    similarity to the query from its `entry_embeddings` row of that model (None when the turn
    has none yet: the pipeline embeds turns after the session's chunks, and drops a turn's
    vector when its text is corrected); without them, None. Each turn's vector is one primary
    key probe (~300 turns for 60 chunks: ~1 ms more than without). A query vector whose
    dimension differs from the model's stored vectors is an error (pgvector: different
    vector dimensions)."""
    if not chunk_ids:
        return {}
    score = query_vector is not None and model is not None
    if score:
        vec = np.asarray(query_vector, dtype=np.float32)
        if vec.ndim != 1 or not np.isfinite(vec).all():
            raise ValueError("chunk_turns_op: query_vector must be one finite vector")
        # A correlated subquery, not a LEFT JOIN: the planner overestimates the turn range
        # join (~20,000 rows for ~300) and would hash-join a scan of the whole table.
        similarity = """(SELECT 1 - (x.embedding <=> %(v)s::vector) FROM entry_embeddings x
                           WHERE x.campaign_id = e.campaign_id AND x.entry_id = e.id
                             AND x.model = %(m)s)"""
        params: dict[str, Any] = {"ids": list(chunk_ids), "v": Vector(vec), "m": model}
    else:
        similarity = "NULL::float8"
        params = {"ids": list(chunk_ids)}
    rows = yield fetch_all(
        f"""SELECT c.id AS chunk_id, e.id, e.speaker_name, e.speaker_id, e.text, e.spoken_at,
                   {similarity} AS similarity
            FROM chunks c
            JOIN session_entries f ON f.id = c.first_entry_id
            JOIN session_entries l ON l.id = c.last_entry_id
            JOIN session_entries e ON e.session_id = c.session_id
                 AND (e.spoken_at, e.id) >= (f.spoken_at, f.id)
                 AND (e.spoken_at, e.id) <= (l.spoken_at, l.id)
            WHERE c.id = ANY(%(ids)s)
            ORDER BY c.id, e.spoken_at, e.id""",
        params,
        # Its plan is the same for any windows (an index probe per chunk and per turn):
        # planned once per connection instead of per call (figures: DESIGN.md).
        generic_plan=True,
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["similarity"] is not None:
            r["similarity"] = float(r["similarity"])
        out.setdefault(r["chunk_id"], []).append(r)
    return out
