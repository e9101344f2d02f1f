"""Who may see a fact: the one definition every read path composes.

A fact (a row of `relationships`, aliased `r` in every query) has one of three visibilities:
- `public`: every NPC sees it;
- `secret`: the NPCs it names (source, target) and those listed in `known_by` see it;
- `hidden`: "hidden from all until revealed", a secret the DM keeps even from the NPCs it
  names (the traitor does not "know" the plot the DM has not yet decided to play); only those
  the DM has told (`known_by`) see it. `reveal_op` is the DM's one call that tells chosen
  NPCs or makes it public; since every read composes this rule and graph changes are
  announced (migration 014), the next hot context carries it.
Non-public facts an NPC does see come back flagged, and their sentence carries `SECRET_MARK` so
the LLM guards them. The rule lives in SQL (psycopg `sql` fragments, parameterized by
`%(npc)s`) so no caller filters rows in Python, and traversals apply it to every edge they
follow: a secret cannot be inferred from the shape of the graph either.

Who is asking (`%(npc)s`):
- an NPC id: that NPC's view;
- `PUBLIC_VIEWER` (what `viewer()` gives when no NPC is bound to a call): public facts only,
  the empty string being no entity's id;
- None: no filter at all, the DM's view. Realtime paths never pass None; `viewer()` sees to it.
"""

from __future__ import annotations

from psycopg import sql

PUBLIC_VIEWER = ""
SECRET_MARK = "SECRET: do not reveal"

# The whole rule, for any read that takes an `npc_id` (None: the DM, everything).
VISIBLE_TO_NPC = sql.SQL(
    "(%(npc)s::text IS NULL OR r.visibility = 'public' OR %(npc)s = ANY(r.known_by)"
    "\n         OR (r.visibility <> 'hidden' AND (r.source_id = %(npc)s OR r.target_id = %(npc)s)))"
)

# The private half of the rule, as three disjoint arms (the NPC is the source of a fact not
# hidden; its target; listed in known_by and not already in the first two): what an NPC
# knows about itself and has been told, public or not. Each arm reads one index (source,
# target, known_by GIN), so a hub NPC's facts are cut to the best rows there instead of
# scanning one OR.
PARTY_OR_TOLD_ARMS = (
    sql.SQL("r.source_id = %(npc)s AND r.visibility <> 'hidden'"),
    sql.SQL("r.target_id = %(npc)s AND r.source_id <> %(npc)s AND r.visibility <> 'hidden'"),
    sql.SQL(
        "r.known_by @> ARRAY[%(npc)s]::text[] AND (r.visibility = 'hidden'"
        " OR (r.source_id <> %(npc)s AND r.target_id <> %(npc)s))"
    ),
)


def viewer(npc_id: str | None) -> str:
    """Who is asking, as the `%(npc)s` value: the NPC, or public-only when no NPC is bound.
    Never None, which would mean "no filter" (the DM's view)."""
    return npc_id or PUBLIC_VIEWER


def is_secret(visibility: str) -> bool:
    """A fact the NPC sees but must not reveal (it sees it because it is party to it or was
    told): anything not public."""
    return visibility != "public"


def mark_secret(text: str, secret: bool) -> str:
    """A fact's prompt text, with the guard the LLM reads when the fact is secret."""
    return f"{text} ({SECRET_MARK})" if secret else text
