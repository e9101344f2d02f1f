"""Who an NPC is and what it knows: its entity row, its profile, and the facts it is party to
or has been told. The stable part of its hot context.

`npc_facts_query` is the one SQL for "the facts an NPC knows": `identity_snapshot` runs it on
its own, and the realtime hot-context read (`hot_read`) embeds it in its single statement.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql

from glyphoxa_pipelines.db.operations import Op, fetch_all, fetch_one, read_operation
from glyphoxa_pipelines.memory.errors import NotFoundError
from glyphoxa_pipelines.memory.graph_facts import REL_COLUMNS, known_fact
from glyphoxa_pipelines.memory.models import Entity, IdentitySnapshot, NpcProfile
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.visibility import PARTY_OR_TOLD_ARMS

# The columns the hot context shows of a fact (fewer than `REL_COLUMNS`: the prompt needs no
# evidence or provenance, and the facts travel as JSON).
HOT_FACT_COLUMNS = (
    "r.id, r.campaign_id, r.source_id, r.target_id, r.rel_type, r.confidence, r.visibility, "
    "r.session_id, r.observed_at"
)


def npc_facts_query(campaign: sql.Composable, columns: str) -> sql.Composed:
    """The current canon facts NPC %(npc)s is party to or told (`PARTY_OR_TOLD_ARMS`, which
    together with public facts make up all it may see), its own first, then by confidence,
    at most %(limit)s, with `source_name`, `target_name` and their order `ord`.

    Each arm is cut to %(limit)s rows by its ranked index, so a hub NPC with hundreds of facts
    costs what a minor one does, and only the rows returned get their names looked up (by
    primary key: a join would be planned as a hash over every entity, the arms' sizes being
    guesses). One top-N sort over the arms; `ord` is numbered over the kept rows, already in
    that order. `campaign` is the campaign's expression (a parameter, or a joined column);
    `columns` must include `r.campaign_id`."""
    arm = sql.SQL(
        """(SELECT {cols} FROM relationships r
         WHERE r.campaign_id = {campaign} AND {cond}
           AND r.invalidated_at IS NULL AND r.status = 'canon'
         ORDER BY r.confidence DESC, r.rel_type, r.id LIMIT %(limit)s)"""
    )
    arms = sql.SQL("\n        UNION ALL\n        ").join(
        arm.format(cols=sql.SQL(columns), campaign=campaign, cond=cond)
        for cond in PARTY_OR_TOLD_ARMS
    )
    return sql.SQL(
        """
SELECT f.*,
       row_number() OVER (ORDER BY (f.source_id = %(npc)s) DESC, f.confidence DESC,
                          f.rel_type, f.id) AS ord,
       (SELECT name FROM entities e WHERE e.campaign_id = f.campaign_id AND e.id = f.source_id)
           AS source_name,
       (SELECT name FROM entities e WHERE e.campaign_id = f.campaign_id AND e.id = f.target_id)
           AS target_name
FROM (
    SELECT u.* FROM (
        {arms}
    ) u
    ORDER BY (u.source_id = %(npc)s) DESC, u.confidence DESC, u.rel_type, u.id
    LIMIT %(limit)s
) f"""
    ).format(arms=arms)


_IDENTITY_FACTS = (
    sql.SQL("{facts}\nORDER BY ord")
    .format(facts=npc_facts_query(sql.SQL("%(c)s"), REL_COLUMNS))
    .as_string()
)

_NPC_WITH_PROFILE = """SELECT e.*, to_jsonb(p) AS profile FROM entities e
   LEFT JOIN npc_profiles p ON p.campaign_id = e.campaign_id AND p.entity_id = e.id
   WHERE e.campaign_id = %s AND e.id = %s"""


def identity_op(campaign_id: str, npc_id: str, fact_limit: int = 50) -> Op[IdentitySnapshot]:
    """The NPC, its profile, and the facts it is part of or knows (visible to it only)."""
    row: dict[str, Any] | None = yield fetch_one(_NPC_WITH_PROFILE, (campaign_id, npc_id))
    if row is None:
        raise NotFoundError(f"unknown NPC {npc_id!r} in campaign {campaign_id!r}")
    profile = from_row(NpcProfile, row["profile"]) if row["profile"] else None
    facts = yield fetch_all(_IDENTITY_FACTS, {"c": campaign_id, "npc": npc_id, "limit": fact_limit})
    return IdentitySnapshot(
        entity=from_row(Entity, row),
        profile=profile,
        facts=[known_fact(f) for f in facts],
    )


class IdentityOperations:
    """The identity part of `KnowledgeGraph` (which binds `db`)."""

    db: Any

    @read_operation
    def identity_snapshot(
        self, campaign_id: str, npc_id: str, *, fact_limit: int = 50
    ) -> Op[IdentitySnapshot]:
        """The NPC, its profile, and the facts it is part of or knows (visible to it only)."""
        return identity_op(campaign_id, npc_id, fact_limit)
