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


# -- Dialogue: who may recall an utterance ------------------------------------------------
# An utterance (a row of `session_entries`) is recalled by the NPCs that witnessed it
# (`witnesses`: present in the scene when it was said, its speaker, the NPC it addressed;
# written by `presence.WITNESSES_AT_WRITE`, editable by the DM) and those the DM told of it
# (`told`). `witnesses` NULL means no presence was recorded (the scene named nobody present:
# sessions from before migration 022, imports, tables that never set one): the line is
# public, as every line was before. Who is asking is `%(listener)s`: an NPC id, or None for
# the DM and unscoped callers, who recall everything (unlike facts, where no NPC bound means
# public only: a transcript has no secrets from the table, only from characters).


def dialogue_visible(entry: str = "e") -> sql.Composed:
    """The rule for one utterance, `entry` being the alias of its `session_entries` row."""
    e = sql.Identifier(entry)
    return sql.SQL(
        "(%(listener)s::text IS NULL OR {e}.witnesses IS NULL"
        " OR %(listener)s = ANY({e}.witnesses) OR %(listener)s = ANY({e}.told))"
    ).format(e=e)


def chunk_visible(chunk: str = "c") -> sql.Composed:
    """The rule for a transcript chunk (alias `chunk`): the listener heard every turn it
    covers, so its text may be shown whole (GraphRAG, a window with no turns fetched) and a
    turn-level result never needs a turn the NPC did not hear. Read from `chunks.audience`
    (migration 022: the NPCs who heard every turn, NULL when every turn is public, kept by a
    trigger on chunk writes and by `presence.edit_presence_op`), so a candidate costs one array
    test: the full-text leg judges every chunk that matches a word."""
    c = sql.Identifier(chunk)
    return sql.SQL(
        "(%(listener)s::text IS NULL OR {c}.audience IS NULL"
        " OR %(listener)s = ANY({c}.audience))"
    ).format(c=c)


def session_heard(session: sql.Composable) -> sql.Composed:
    """The rule for a whole session's retelling (its summary, its recap): the listener heard
    some of it. A summary retells every scene, so an NPC that was nowhere in a session (a
    conversation held in another city) must not read it, while one that heard any line of it
    may: the retelling is the table's, and splitting it by scene would need summaries per
    audience. A session with no lines (imported summaries) is public, like a line without
    presence. `session` is the session id's column or placeholder."""
    # Each probe is a scalar subquery over the (session_id, spoken_at DESC) index, newest
    # line first. Not EXISTS: PostgreSQL drops an EXISTS subquery's ORDER BY and LIMIT and
    # then picks a sequential scan expecting an early match, which reads every other
    # session's rows first in a table loaded session by session (12 ms over 18k lines).
    return sql.SQL(
        "(%(listener)s::text IS NULL"
        " OR (SELECT true FROM session_entries w WHERE w.session_id = {p}"
        " ORDER BY w.spoken_at DESC LIMIT 1) IS NULL"
        " OR (SELECT true FROM session_entries w WHERE w.session_id = {p} AND {rule}"
        " ORDER BY w.spoken_at DESC LIMIT 1) IS NOT NULL)"
    ).format(p=session, rule=dialogue_visible("w"))
