"""Store queries the realtime tools need that the memory store does not offer yet.

Written as operations (see `glyphoxa_pipelines.db.operations`) so they run on the async pool and
compose into one transaction. Visibility reuses the knowledge graph's own SQL filter, so there is
exactly one definition of "what an NPC may see".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from glyphoxa_pipelines.db.operations import Op, fetch_all, fetch_one
from glyphoxa_pipelines.memory.knowledge_graph import (
    _FACT_FILTER,
    _FACTS_WITH_NAMES,
    REL_COLUMNS,
    _fact_params,
    _known_fact,
)
from glyphoxa_pipelines.memory.models import Entity, KnownFact
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.semantic_index import or_tsquery
from glyphoxa_pipelines.memory.session_log import ENTRY_COLUMNS

# The empty string is no entity id, so as a viewer it sees public facts only.
PUBLIC_VIEWER = ""


def viewer(npc_id: str | None) -> str:
    """The visibility filter value: the NPC, or public-only when nobody is named. Never None:
    None would mean "no filter" (the DM's view) in the knowledge graph."""
    return npc_id or PUBLIC_VIEWER


def facts_about_op(
    campaign_id: str,
    entity_ids: Sequence[str],
    npc: str,
    *,
    limit: int = 20,
    rel_types: Sequence[str] | None = None,
) -> Op:
    """Current canon facts touching any of `entity_ids`, as `npc` may see them, with names."""
    params = _fact_params(campaign_id, npc_id=npc, rel_types=rel_types)
    params.update(ids=list(entity_ids), limit=limit)
    rows = yield fetch_all(
        f"""{_FACTS_WITH_NAMES}
            WHERE (r.source_id = ANY(%(ids)s) OR r.target_id = ANY(%(ids)s)) AND {_FACT_FILTER}
            ORDER BY r.confidence DESC, r.rel_type, r.id LIMIT %(limit)s""",
        params,
    )
    return [_known_fact(r, npc) for r in rows]


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
    params = _fact_params(campaign_id, npc_id=npc, rel_types=rel_types, at=at)
    params.update(
        q=or_tsquery(query) if query and query.strip() else None,
        e=entity_id,
        after=after,
        before=before,
        limit=limit,
    )
    fact_filter = _FACT_FILTER
    if include_history and at is None:
        # Drop the "current only" clause: history (invalidated facts) is wanted too.
        fact_filter = fact_filter.replace(
            "THEN r.invalidated_at IS NULL", "THEN true", 1
        )
    rows = yield fetch_all(
        f"""SELECT * FROM (
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
              WHERE {fact_filter}
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
    return [(_known_fact(r, npc), r["session_started_at"]) for r in rows]


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


def hot_rows_op(
    session_id: str, *, window_s: float, limit: int
) -> Op:
    """Session row, the scene's entities, and the recent transcript: the non-NPC half of a hot
    context. Three statements, one transaction."""
    session = yield fetch_one(
        "SELECT id, campaign_id, title, status, started_at, scene FROM sessions WHERE id = %s",
        (session_id,),
    )
    if session is None:
        return None, [], []
    scene = session["scene"] or {}
    ids = [scene.get("location")] if isinstance(scene.get("location"), str) else []
    ids += [p for p in scene.get("present", []) or [] if isinstance(p, str)]
    ids += [q for q in scene.get("quests", []) or [] if isinstance(q, str)]
    scene_entities: list[dict[str, Any]] = []
    if ids:
        scene_entities = yield fetch_all(
            """SELECT id, type, name, attributes FROM entities
               WHERE campaign_id = %s AND id = ANY(%s)""",
            (session["campaign_id"], ids),
        )
    recent = yield fetch_all(
        f"""SELECT * FROM (
               SELECT {ENTRY_COLUMNS} FROM session_entries
               WHERE session_id = %(s)s AND spoken_at >=
                     (SELECT max(spoken_at) FROM session_entries WHERE session_id = %(s)s)
                     - make_interval(secs => %(secs)s)
               ORDER BY spoken_at DESC, id DESC LIMIT %(limit)s) recent
           ORDER BY spoken_at, id""",
        {"s": session_id, "secs": window_s, "limit": limit},
    )
    return session, scene_entities, recent


def entity_context_op(campaign_id: str, entity_id: str, npc: str, *, fact_limit: int = 8) -> Op:
    """An entity and its facts as `npc` sees them: what pre-fetch brings for a mentioned name."""
    row = yield fetch_one(
        "SELECT * FROM entities WHERE campaign_id = %s AND id = %s", (campaign_id, entity_id)
    )
    if row is None:
        return None
    facts = yield from facts_about_op(campaign_id, [entity_id], npc, limit=fact_limit)
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
