"""Spellings of known entities the knowledge step heard, as the DM answers them.

The knowledge step offers them (`pipeline_rows.knowledge_rows.suggest_spellings_op`); the DM
accepts one, which makes it an alias of the entity (and so a target of the name corrector), or
dismisses it, which is remembered so no later session offers it again. A spelling the entity
carries by now (the DM typed it in, or accepted it) is no longer offered, whichever way it got
there.
"""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory.errors import NotFoundError
from glyphoxa_pipelines.memory.knowledge_graph import KnowledgeGraph
from glyphoxa_pipelines.memory.models import Entity

# SQL over a suggestion `s` and its entity `e`: the spelling is offered (not the entity's name
# or one of its aliases, and not dismissed for this entity). The one definition the pipeline's
# offer and the DM's reads compose.
OFFERED = """
    NOT lower(s.spelling) = lower(e.name)
    AND NOT lower(s.spelling) = ANY (SELECT lower(a) FROM unnest(e.aliases) a)
    AND NOT EXISTS (SELECT 1 FROM spelling_dismissals d
                    WHERE d.campaign_id = s.campaign_id AND d.entity_id = s.entity_id
                      AND d.spelling_key = lower(s.spelling))"""


def open_spellings_op(campaign_id: str, *, limit: int = 100) -> Op[list[dict[str, Any]]]:
    """The spellings waiting for the DM: one row per (entity, spelling), with the sessions that
    heard it, most heard first."""
    rows = yield fetch_all(
        f"""SELECT s.entity_id, e.name AS entity_name, e.type AS entity_type,
                   min(s.spelling) AS spelling,
                   array_agg(DISTINCT s.session_id ORDER BY s.session_id) AS sessions
            FROM spelling_suggestions s
            JOIN entities e ON e.campaign_id = s.campaign_id AND e.id = s.entity_id
            WHERE s.campaign_id = %s AND {OFFERED}
            GROUP BY s.entity_id, e.name, e.type, lower(s.spelling)
            ORDER BY count(DISTINCT s.session_id) DESC, e.name, lower(s.spelling)
            LIMIT %s""",
        (campaign_id, limit),
    )
    return [{**r, "sessions": list(r["sessions"])} for r in rows]


def _offered_op(campaign_id: str, entity_id: str, spelling: str) -> Op[str]:
    """The spelling as it was heard, when it is offered for this entity now."""
    row = yield fetch_one(
        f"""SELECT min(s.spelling) AS spelling FROM spelling_suggestions s
            JOIN entities e ON e.campaign_id = s.campaign_id AND e.id = s.entity_id
            WHERE s.campaign_id = %s AND s.entity_id = %s
              AND lower(s.spelling) = lower(btrim(%s)) AND {OFFERED}""",
        (campaign_id, entity_id, spelling),
    )
    if row is None or row["spelling"] is None:
        raise NotFoundError(
            f"no spelling {spelling!r} waits for entity {entity_id!r} in campaign {campaign_id!r}"
        )
    return str(row["spelling"])


def accept_spelling_op(
    graph: KnowledgeGraph, campaign_id: str, entity_id: str, spelling: str
) -> Op[Entity]:
    """The DM's yes: the offered spelling becomes one of the entity's aliases (a DM edit, so
    the pipeline never takes it back)."""
    heard = yield from _offered_op(campaign_id, entity_id, spelling)
    entity = yield from KnowledgeGraph.get_entity.op(graph, campaign_id, entity_id)
    if entity is None:
        raise NotFoundError(f"unknown entity {entity_id!r} in campaign {campaign_id!r}")
    return (yield from KnowledgeGraph.update_entity.op(
        graph, campaign_id, entity_id, aliases=[*entity.aliases, heard]))


def dismiss_spelling_op(campaign_id: str, entity_id: str, spelling: str) -> Op[str]:
    """The DM's no: the spelling is never offered for this entity again."""
    heard = yield from _offered_op(campaign_id, entity_id, spelling)
    yield execute(
        """INSERT INTO spelling_dismissals (campaign_id, entity_id, spelling_key)
           VALUES (%s, %s, lower(btrim(%s))) ON CONFLICT DO NOTHING""",
        (campaign_id, entity_id, heard),
    )
    return heard
