"""The dashboard's read statements the stores do not offer: an entity's facts with their
history, the campaign's non-public facts, who sees each of them, and the graph picture's facts.

Every one composes the store's fact filter (`graph_facts.fact_filter`, which applies the one
visibility rule of `memory/visibility.py`): the DM's view is the rule with no viewer (None),
an NPC's view is the rule with that NPC, so the dashboard never decides visibility itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory.graph_facts import (
    REL_COLUMNS,
    fact_filter,
    fact_params,
    known_fact,
)
from glyphoxa_pipelines.memory.models import KnownFact

_CURRENT = fact_filter().as_string()
_HISTORY = fact_filter(history=True).as_string()
_NAMED = f"""SELECT {REL_COLUMNS}, s.name AS source_name, t.name AS target_name
    FROM relationships r
    JOIN entities s ON s.campaign_id = r.campaign_id AND s.id = r.source_id
    JOIN entities t ON t.campaign_id = r.campaign_id AND t.id = r.target_id"""


def entity_facts_op(campaign_id: str, entity_id: str, *, limit: int = 500) -> Op[list[KnownFact]]:
    """Every fact touching the entity as the DM sees it, pending and retconned ones included
    (current first, then history newest first), so a retcon shows what it replaced."""
    params = fact_params(campaign_id, npc_id=None, include_pending=True)
    params.update(e=entity_id, limit=limit)
    rows = yield fetch_all(
        f"""{_NAMED} WHERE (r.source_id = %(e)s OR r.target_id = %(e)s) AND {_HISTORY}
            ORDER BY r.invalidated_at IS NOT NULL, r.invalidated_at DESC, r.rel_type, r.id
            LIMIT %(limit)s""",
        params,
    )
    return [known_fact(r) for r in rows]


def hidden_facts_op(campaign_id: str, *, limit: int = 500) -> Op[list[KnownFact]]:
    """The campaign's current secret and hidden facts (the DM's view), pending included."""
    params = fact_params(campaign_id, npc_id=None, include_pending=True)
    params.update(limit=limit)
    rows = yield fetch_all(
        f"""{_NAMED} WHERE r.visibility <> 'public' AND {_CURRENT}
            ORDER BY r.visibility, s.name, r.rel_type, t.name, r.id LIMIT %(limit)s""",
        params,
    )
    return [known_fact(r) for r in rows]


def who_sees_op(
    campaign_id: str, npc_ids: Sequence[str], fact_ids: Sequence[int]
) -> Op[dict[int, list[str]]]:
    """For each fact, the NPCs (of `npc_ids`) the visibility rule lets see it: the rule is run
    once per NPC, as that NPC, rather than restated here. Campaigns hold tens of NPCs."""
    seen: dict[int, list[str]] = {f: [] for f in fact_ids}
    if not fact_ids:
        return seen
    for npc in npc_ids:
        params = fact_params(campaign_id, npc_id=npc, include_pending=True)
        params.update(ids=list(fact_ids))
        rows = yield fetch_all(
            f"SELECT r.id FROM relationships r WHERE r.id = ANY(%(ids)s) AND {_CURRENT}",
            params,
        )
        for row in rows:
            seen[row["id"]].append(npc)
    return seen


def graph_facts_op(
    campaign_id: str, npc: str | None, session_id: str | None, *, limit: int = 2000
) -> Op[list[KnownFact]]:
    """Current canon facts for the picture: as `npc` sees them (None: the DM), optionally only
    those a session produced."""
    params: dict[str, Any] = fact_params(campaign_id, npc_id=npc)
    params.update(s=session_id, limit=limit)
    rows = yield fetch_all(
        f"""{_NAMED} WHERE {_CURRENT} AND (%(s)s::text IS NULL OR r.session_id = %(s)s)
            ORDER BY r.id LIMIT %(limit)s""",
        params,
    )
    return [known_fact(r) for r in rows]
