"""Who heard a session's lines: presence written with each utterance, shown and edited by the
DM as spans. The rule that reads it is `visibility.dialogue_visible`; this module only writes
and lists it.

An utterance is witnessed by the NPCs the scene names `present` when it is written, its
speaker when that is an NPC, and the NPC it addresses (the entry's `npc_id`). A scene that
names nobody present (no `present` list at all) records no presence: the line stays public,
which is what every line was before presence existed. The DM corrects what the scene got
wrong (an NPC who slipped out, an eavesdropper) and tells NPCs of conversations they missed;
both are edits of a span of lines, effective at the next read (nothing caches them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from glyphoxa_pipelines.db.operations import Op, execute, fetch_all, fetch_one
from glyphoxa_pipelines.memory.errors import InvalidInputError, NotFoundError

# The witnesses of a line being written, in the one statement that writes lines
# (`session_log.INSERT_ENTRIES`: `s` the session row, `x` the incoming record). A `present`
# element is an entity id or, as Discord's `/scene set` stores what the DM typed, a name
# (case-insensitive; the (campaign, lower(name)) index): both become the entity's id. Sorted
# and deduplicated so equal presence compares equal when the DM's listing groups lines.
WITNESSES_AT_WRITE = """CASE WHEN jsonb_typeof(s.scene -> 'present') = 'array' THEN ARRAY(
    SELECT DISTINCT w FROM unnest(
        ARRAY(SELECT coalesce(
                  (SELECT en.id FROM entities en WHERE en.campaign_id = s.campaign_id
                     AND (en.id = p OR lower(en.name) = lower(p))
                   ORDER BY en.id <> p, en.id LIMIT 1), p)
              FROM jsonb_array_elements_text(s.scene -> 'present') p)
        || ARRAY[x.npc_id, CASE WHEN x.speaker_role = 'npc' THEN x.speaker_id END]) w
    WHERE w IS NOT NULL AND btrim(w) <> '' ORDER BY w) END"""


def witnesses_of(scene: dict[str, Any], speaker_role: str, speaker_id: str,
                 npc_id: str | None) -> list[str] | None:
    """`WITNESSES_AT_WRITE` over plain data, for a line the database has not seen yet (the
    degraded hot context judges spooled lines by the last scene it read): None when the scene
    records no presence (a public line). Names in `present` stay names (no entities here): an
    NPC named rather than listed by id misses those lines until the database is back."""
    present = scene.get("present")
    if not isinstance(present, list):
        return None
    ids = [str(p) for p in present if p is not None]
    ids += [npc_id or "", speaker_id if speaker_role == "npc" else ""]
    return sorted({w for w in ids if w.strip()})


@dataclass(frozen=True, slots=True)
class PresenceSpan:
    """Consecutive lines (spoken order) heard by the same NPCs. `public`: no presence
    recorded, every NPC may recall them; `witnesses` then is empty."""

    first_entry_id: int
    last_entry_id: int
    first_at: datetime
    last_at: datetime
    lines: int
    public: bool
    witnesses: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PresenceEdit:
    """A DM's correction of the lines from `first_entry_id` to `last_entry_id` in spoken order
    (None: from the session's first line / to its last). `present` are added as witnesses,
    `absent` removed; `told` are told of the lines, `untold` no longer; `public` True clears
    the recorded presence (every NPC), False records it (nobody, before `present` is added)."""

    first_entry_id: int | None = None
    last_entry_id: int | None = None
    present: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    told: tuple[str, ...] = ()
    untold: tuple[str, ...] = ()
    public: bool | None = None

    def npcs(self) -> list[str]:
        return list(dict.fromkeys((*self.present, *self.absent, *self.told, *self.untold)))

    def check(self) -> None:
        """Refuse an edit that says nothing, or contradicts itself."""
        if not self.npcs() and self.public is None:
            raise InvalidInputError(
                "a presence edit names no NPC (present, absent, told, untold) and sets no public"
            )
        if any(not n.strip() for n in self.npcs()):
            raise InvalidInputError("a presence edit names a blank NPC id")
        for a, b, what in ((self.present, self.absent, "present and absent"),
                           (self.told, self.untold, "told and untold")):
            both = sorted(set(a) & set(b))
            if both:
                raise InvalidInputError(f"{', '.join(both)}: both {what} in one edit")
        if self.public and self.present:
            raise InvalidInputError(
                "public lines are every NPC's: name present NPCs or set public, not both"
            )
        if (self.first_entry_id is not None and self.last_entry_id is not None
                and self.first_entry_id > self.last_entry_id):
            raise InvalidInputError(
                f"first_entry_id {self.first_entry_id} is after last_entry_id "
                f"{self.last_entry_id}"
            )


def spans(rows: Sequence[dict[str, Any]]) -> list[PresenceSpan]:
    """Lines (in spoken order: `id`, `spoken_at`, `witnesses`, `told`) grouped into spans of
    equal presence; what the DM reads instead of one row per line."""
    out: list[PresenceSpan] = []
    key: tuple[Any, ...] | None = None
    first: dict[str, Any] | None = None
    last: dict[str, Any] | None = None
    count = 0

    def close() -> None:
        if first is not None and last is not None:
            w = first["witnesses"]
            out.append(PresenceSpan(first["id"], last["id"], first["spoken_at"],
                                    last["spoken_at"], count, w is None, sorted(w or []),
                                    sorted(first["told"] or [])))

    for r in rows:
        k = (None if r["witnesses"] is None else tuple(sorted(r["witnesses"])),
             tuple(sorted(r["told"] or [])))
        if k != key:
            close()
            key, first, count = k, r, 0
        last = r
        count += 1
    close()
    return out


_LINES = """SELECT id, spoken_at, witnesses, told FROM session_entries
            WHERE session_id = %(s)s ORDER BY spoken_at, id"""


def presence_op(session_id: str) -> Op[list[PresenceSpan]]:
    """The session's lines as spans of equal presence (an unknown session is an error)."""
    session = yield fetch_one("SELECT campaign_id FROM sessions WHERE id = %(s)s",
                              {"s": session_id})
    if session is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    rows = yield fetch_all(_LINES, {"s": session_id})
    return spans(rows)


def _check_npcs_op(campaign_id: str, npcs: list[str]) -> Op[None]:
    rows = yield fetch_all(
        "SELECT id, type FROM entities WHERE campaign_id = %(c)s AND id = ANY(%(ids)s)",
        {"c": campaign_id, "ids": npcs},
    )
    types = {r["id"]: r["type"] for r in rows}
    unknown = [n for n in npcs if n not in types]
    if unknown:
        raise NotFoundError(f"unknown NPC {', '.join(map(repr, unknown))} in campaign "
                            f"{campaign_id!r}")
    not_npc = [f"{n!r} ({types[n]})" for n in npcs if types[n] != "npc"]
    if not_npc:
        raise InvalidInputError(f"not an NPC: {', '.join(not_npc)}; only NPCs hear lines")


def _check_bound_op(session_id: str, entry_id: int | None, what: str) -> Op[None]:
    if entry_id is None:
        return
    row = yield fetch_one("SELECT session_id FROM session_entries WHERE id = %(e)s",
                          {"e": entry_id})
    if row is None or row["session_id"] != session_id:
        raise NotFoundError(f"{what} {entry_id} is no line of session {session_id!r}")


# The lines an edit covers: spoken order between its bounds (the order chunks and the DM's
# spans use), found by the (session, spoken_at) index.
_BOUNDS = """b AS (SELECT (SELECT (spoken_at, id) FROM session_entries WHERE id = %(first)s) AS lo,
                  (SELECT (spoken_at, id) FROM session_entries WHERE id = %(last)s) AS hi)"""
_IN_RANGE = """e.session_id = %(s)s
  AND (b.lo IS NULL OR (e.spoken_at, e.id) >= b.lo)
  AND (b.hi IS NULL OR (e.spoken_at, e.id) <= b.hi)"""

_EDIT = f"""
WITH {_BOUNDS}, changed AS (
UPDATE session_entries e SET
    witnesses = CASE
        WHEN %(public)s::boolean IS TRUE THEN NULL
        WHEN e.witnesses IS NULL AND %(public)s::boolean IS NULL
             AND cardinality(%(present)s::text[]) = 0 THEN NULL
        ELSE ARRAY(SELECT DISTINCT w
                   FROM unnest(coalesce(e.witnesses, '{{}}') || %(present)s::text[]) w
                   WHERE w <> ALL(%(absent)s::text[]) ORDER BY w) END,
    told = ARRAY(SELECT DISTINCT w FROM unnest(e.told || %(told)s::text[]) w
                 WHERE w <> ALL(%(untold)s::text[]) ORDER BY w)
FROM b WHERE {_IN_RANGE}
RETURNING 1)
SELECT count(*) AS n FROM changed
"""

_REFRESH_CHUNKS = """UPDATE chunks SET audience =
    glyphoxa_chunk_audience(session_id, first_entry_id, last_entry_id) WHERE session_id = %(s)s"""

_PUBLIC_IN_RANGE = f"""
WITH {_BOUNDS}
SELECT min(e.id) AS id FROM session_entries e, b WHERE e.witnesses IS NULL AND {_IN_RANGE}
"""


def edit_presence_op(session_id: str, edit: PresenceEdit) -> Op[dict[str, Any]]:
    """Apply a DM's presence edit to a span of lines, in one transaction: the lines changed
    and the session's spans after it. Every NPC named must be an NPC of the session's
    campaign; both bounds lines of the session. Removing a witness from a public line is
    refused: public means every NPC, so the DM names who was present instead."""
    edit.check()
    session = yield fetch_one("SELECT campaign_id FROM sessions WHERE id = %(s)s",
                              {"s": session_id})
    if session is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    yield from _check_npcs_op(session["campaign_id"], edit.npcs())
    yield from _check_bound_op(session_id, edit.first_entry_id, "first_entry_id")
    yield from _check_bound_op(session_id, edit.last_entry_id, "last_entry_id")
    params = {"s": session_id, "first": edit.first_entry_id, "last": edit.last_entry_id,
              "present": list(edit.present), "absent": list(edit.absent),
              "told": list(edit.told), "untold": list(edit.untold), "public": edit.public}
    if edit.absent and edit.public is None and not edit.present:
        row = yield fetch_one(_PUBLIC_IN_RANGE, params)
        if row is not None and row["id"] is not None:
            raise InvalidInputError(
                f"line {row['id']} is public (no presence recorded): every NPC heard it; "
                "name who was present (present, or public: false) instead of who was absent"
            )
    changed = yield fetch_one(_EDIT, params)
    # The chunks' audiences follow their turns (the whole session: a DM edit, not a hot path).
    yield execute(_REFRESH_CHUNKS, {"s": session_id})
    rows = yield fetch_all(_LINES, {"s": session_id})
    return {"session_id": session_id, "lines_changed": int(changed["n"]),
            "spans": spans(rows)}
