"""Everything an NPC's hot context reads from the store, as ONE statement (one round trip, one
snapshot): the session and its scene's entities, the last utterances within the window and,
unless the caller has them cached, the NPC with its profile and the facts it knows.

Composed from the store's own SQL, so the hot path runs what the store (and its bench) runs:
"what was just said" is `session_log.recent_entries_query` (the lines the NPC heard: the
`visibility` rule's dialogue half), "what the NPC knows" is
`npc_identity.npc_facts_query` (the private half of the `visibility` rule; the context shows
no public facts beyond those).
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from glyphoxa_pipelines.db.operations import Op, fetch_one
from glyphoxa_pipelines.memory.npc_identity import HOT_FACT_COLUMNS, npc_facts_query
from glyphoxa_pipelines.memory.session_log import recent_entries_query
from glyphoxa_pipelines.memory.visibility import dialogue_visible

# The scene's location, present NPCs and quests, by id (free-text quests are skipped here and
# shown as given by the context).
_SCENE_ENTITIES = sql.SQL("""
SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'type', e.type, 'name', e.name)
                          ORDER BY e.id), '[]'::jsonb)
FROM entities e
WHERE e.campaign_id = s.campaign_id AND e.id IN (
    SELECT s.scene ->> 'location'
    UNION ALL SELECT jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(s.scene -> 'present') = 'array'
             THEN s.scene -> 'present' ELSE '[]'::jsonb END)
    UNION ALL SELECT q #>> '{}' FROM jsonb_array_elements(
        CASE WHEN jsonb_typeof(s.scene -> 'quests') = 'array'
             THEN s.scene -> 'quests' ELSE '[]'::jsonb END) q
    WHERE jsonb_typeof(q) = 'string')
""")

# Only the columns the prompt uses.
_RECENT_COLUMNS = "id, speaker_id, speaker_name, speaker_role, text, spoken_at"

_NPC_ROW = sql.SQL("""
SELECT e.id, e.type, e.name, e.aliases, e.attributes, to_jsonb(p) AS profile
FROM entities e
LEFT JOIN npc_profiles p ON p.campaign_id = e.campaign_id AND p.entity_id = e.id
WHERE e.campaign_id = s.campaign_id AND e.id = %(npc)s
""")

_LIVE_COLUMNS = sql.SQL("""
s.campaign_id, s.scene,
    ({scene}) AS scene_entities,
    (SELECT coalesce(jsonb_agg(to_jsonb(y) ORDER BY y.spoken_at, y.id), '[]'::jsonb)
     FROM ({recent}) y) AS recent""").format(
    scene=_SCENE_ENTITIES,
    recent=recent_entries_query(sql.SQL("s.id"), _RECENT_COLUMNS, dialogue_visible("y")),
)

_IDENTITY_COLUMNS = sql.SQL("""
    (SELECT to_jsonb(n) FROM ({npc}) n) AS npc,
    (SELECT coalesce(jsonb_agg(to_jsonb(f) ORDER BY f.ord), '[]'::jsonb)
     FROM ({facts}) f) AS facts""").format(
    npc=_NPC_ROW, facts=npc_facts_query(sql.SQL("s.campaign_id"), HOT_FACT_COLUMNS)
)

_HOT = (
    sql.SQL("SELECT {live},{identity}\nFROM sessions s WHERE s.id = %(s)s")
    .format(live=_LIVE_COLUMNS, identity=_IDENTITY_COLUMNS)
    .as_string()
)
_LIVE = (
    sql.SQL("SELECT {live}\nFROM sessions s WHERE s.id = %(s)s")
    .format(live=_LIVE_COLUMNS)
    .as_string()
)


def hot_row_statement(
    session_id: str,
    npc_id: str,
    *,
    recent_limit: int,
    fact_limit: int,
    window_s: float,
    with_identity: bool = True,
) -> tuple[str, dict[str, Any]]:
    """The hot read as (query, parameters), for a caller that runs it on its own connection.
    Its row: `campaign_id`, `scene`, `scene_entities`, `recent` (oldest first) and, with
    identity, `npc` (None for an unknown NPC) and `facts` (the NPC's own first)."""
    params: dict[str, Any] = {
        "s": session_id,
        "now": None,
        "recent_limit": recent_limit,
        "window": window_s,
        "listener": npc_id,  # the lines it heard or was told of (`dialogue_visible`)
    }
    if not with_identity:
        return _LIVE, params
    return _HOT, dict(params, npc=npc_id, limit=fact_limit)


def hot_row_op(
    session_id: str,
    npc_id: str,
    *,
    recent_limit: int,
    fact_limit: int,
    window_s: float,
    with_identity: bool = True,
) -> Op[dict[str, Any] | None]:
    """`hot_row_statement` as an operation (None for an unknown session); read-only and one
    statement, so run it without a transaction."""
    query, params = hot_row_statement(
        session_id,
        npc_id,
        recent_limit=recent_limit,
        fact_limit=fact_limit,
        window_s=window_s,
        with_identity=with_identity,
    )
    row: dict[str, Any] | None = yield fetch_one(query, params)
    return row
