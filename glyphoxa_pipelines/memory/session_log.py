"""L1 session log: sessions and every utterance, raw and corrected.

Writes are idempotent on (session, idempotency_key): a retried or replayed write lands once.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from psycopg import errors as pg_errors
from psycopg import sql

from glyphoxa_pipelines.db.operations import (
    Op,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
    operation,
    read_operation,
)
from glyphoxa_pipelines.memory.errors import InvalidInputError, NotFoundError
from glyphoxa_pipelines.memory.models import Entry, NewEntry, Session
from glyphoxa_pipelines.memory.presence import WITNESSES_AT_WRITE
from glyphoxa_pipelines.memory.rows import from_row

MAX_TEXT_CHARS = 200_000
ENTRY_COLUMNS = (
    "id, campaign_id, session_id, idempotency_key, speaker_id, speaker_name, speaker_role, "
    "raw_text, text, npc_id, spoken_at, duration_s, word_confidences, corrections, "
    "corrector_version"
)
_ROLES = ("dm", "player", "npc", "system")
# First key of the two-key advisory lock that serialises creating a session id (the second is
# the id's hash); the migration runner's lock is a one-key lock, a separate space.
_SESSION_ID_LOCK = 0x676C79


def claim_session_ids_op(session_ids: Sequence[str]) -> Op[None]:
    """Hold, until the transaction ends, the right to create these session ids. Session ids
    are unique across campaigns (Dagster partition keys, every API path), but the table's key
    is (campaign_id, id) so a sharded store can hold it (migration 024): every writer of
    sessions takes this lock, then looks, then inserts. Sorted, so two writers never wait on
    each other in a circle."""
    for sid in sorted(set(session_ids)):
        yield fetch_one("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_SESSION_ID_LOCK, sid))


def validate_entry(entry: NewEntry) -> None:
    """Refuse what cannot be stored, naming the problem (before anything is written)."""
    if not entry.idempotency_key or len(entry.idempotency_key) > 200:
        raise InvalidInputError("entry idempotency_key must be 1-200 characters")
    for label, value in (("text", entry.text), ("raw_text", entry.raw_text)):
        if value is None:
            continue
        if not value.strip():
            raise InvalidInputError(f"entry {entry.idempotency_key!r}: {label} is empty")
        if len(value) > MAX_TEXT_CHARS:
            raise InvalidInputError(
                f"entry {entry.idempotency_key!r}: {label} is {len(value)} characters; "
                f"the limit is {MAX_TEXT_CHARS}"
            )
        if "\x00" in value:
            raise InvalidInputError(f"entry {entry.idempotency_key!r}: {label} contains NUL")
    if entry.speaker_role not in _ROLES:
        raise InvalidInputError(
            f"entry {entry.idempotency_key!r}: speaker_role {entry.speaker_role!r} is not one "
            f"of {', '.join(_ROLES)}"
        )
    if entry.duration_s < 0:
        raise InvalidInputError(f"entry {entry.idempotency_key!r}: duration_s is negative")
    if entry.word_confidences is not None and any(
        not 0.0 <= c <= 1.0 for c in entry.word_confidences
    ):
        raise InvalidInputError(
            f"entry {entry.idempotency_key!r}: word_confidences must lie in [0, 1]"
        )


def entry_record(e: NewEntry) -> dict[str, Any]:
    """An entry as one element of `INSERT_ENTRIES`' JSON payload (also the spool's format)."""
    rec = asdict(e)
    rec["raw_text"] = e.raw_text if e.raw_text is not None else e.text
    rec["spoken_at"] = e.spoken_at.isoformat() if e.spoken_at else None
    return rec


# The one statement that writes utterances, live or imported: a JSON array of
# `entry_record`s and the session id; idempotent on (session, idempotency_key).
INSERT_ENTRIES = f"""
INSERT INTO session_entries (campaign_id, session_id, idempotency_key, speaker_id, speaker_name,
    speaker_role, raw_text, text, npc_id, spoken_at, duration_s, word_confidences, corrections,
    corrector_version, witnesses)
SELECT s.campaign_id, s.id, x.idempotency_key, coalesce(x.speaker_id, ''),
       coalesce(x.speaker_name, ''), coalesce(x.speaker_role, 'player'), x.raw_text, x.text,
       x.npc_id, coalesce(x.spoken_at, clock_timestamp()), coalesce(x.duration_s, 0),
       x.word_confidences, coalesce(x.corrections, '[]'::jsonb), x.corrector_version,
       {WITNESSES_AT_WRITE}
FROM sessions s,
     ROWS FROM (jsonb_to_recordset(%s::jsonb) AS (
        idempotency_key text, speaker_id text, speaker_name text, speaker_role text,
        raw_text text, text text, npc_id text, spoken_at timestamptz, duration_s real,
        word_confidences real[], corrections jsonb, corrector_version text))
        WITH ORDINALITY AS x(idempotency_key, speaker_id, speaker_name, speaker_role,
        raw_text, text, npc_id, spoken_at, duration_s, word_confidences, corrections,
        corrector_version, ord)
WHERE s.id = %s
ORDER BY x.ord
ON CONFLICT (campaign_id, session_id, idempotency_key) DO NOTHING
RETURNING {ENTRY_COLUMNS}
"""


def recent_entries_query(
    session: sql.Composable, columns: str, heard: sql.Composable = sql.SQL("TRUE")
) -> sql.Composed:
    """The last %(recent_limit)s entries of a session within %(window)s seconds of its latest
    one (or of %(now)s, when given: then only entries up to it), oldest first. The one SQL for
    "what was just said": `SessionStore.get_recent` runs it, and the hot-context read embeds
    it. Newest first by the (session, spoken_at) index, cut there, then the window: the
    latest entry is among the last `limit`, so the cut never drops one the window keeps.
    `columns`: plain column names of `session_entries`. `heard`: who may recall a line
    (`visibility.dialogue_visible("y")`), applied after the window so a listener's "just
    said" ends where the session's does, not at the last line it heard."""
    cols = sql.SQL(columns)
    return sql.SQL(
        """SELECT {cols} FROM (
               SELECT x.*, max(x.spoken_at) OVER () AS latest FROM (
                   SELECT {cols}, witnesses, told FROM session_entries
                   WHERE session_id = {session}
                     AND (%(now)s::timestamptz IS NULL OR spoken_at <= %(now)s)
                   ORDER BY spoken_at DESC, id DESC LIMIT %(recent_limit)s) x) y
           WHERE y.spoken_at >= coalesce(%(now)s, y.latest) - make_interval(secs => %(window)s)
             AND {heard}
           ORDER BY y.spoken_at, y.id"""
    ).format(cols=cols, session=session, heard=heard)


_GET_RECENT = recent_entries_query(sql.SQL("%(s)s"), ENTRY_COLUMNS).as_string()


def insert_entries_op(session_id: str, entries: Sequence[NewEntry]) -> Op[int]:
    """Write utterances to a session known to exist, as one statement (the live write path:
    run it without a transaction, one round trip per utterance). Returns the number of new
    rows; a repeated idempotency key is skipped."""
    for e in entries:
        validate_entry(e)
    if not entries:
        return 0
    try:
        n = yield execute(
            INSERT_ENTRIES, (json.dumps([entry_record(e) for e in entries]), session_id)
        )
    except pg_errors.CheckViolation as exc:
        raise InvalidInputError(str(exc.diag.message_primary)) from exc
    return n


class SessionStore:
    """L1: start/end/list sessions, write and read utterances."""

    def __init__(self, db: Any) -> None:
        self.db = db

    # -- sessions -------------------------------------------------------------------------
    @operation
    def start_session(
        self,
        campaign_id: str,
        session_id: str | None = None,
        *,
        title: str = "",
        started_at: datetime | None = None,
        status: str = "live",
    ) -> Op:
        """Create a session (or return it unchanged when it already exists in this campaign)."""
        campaign = yield fetch_one("SELECT id FROM campaigns WHERE id = %s", (campaign_id,))
        if campaign is None:
            raise NotFoundError(f"unknown campaign {campaign_id!r}")
        sid = session_id or f"{campaign_id}-{secrets.token_hex(4)}"
        if "," in sid or not sid.strip():
            raise InvalidInputError(f"session id {sid!r} must be a non-empty slug without commas")
        yield from claim_session_ids_op([sid])
        row = yield fetch_one("SELECT * FROM sessions WHERE id = %s", (sid,))
        if row is None:
            row = yield fetch_one(
                """INSERT INTO sessions (id, campaign_id, title, status, started_at, ended_at)
                   VALUES (%s, %s, %s, %s, coalesce(%s, now()),
                           CASE WHEN %s = 'ended' THEN coalesce(%s, now()) END)
                   ON CONFLICT (campaign_id, id) DO NOTHING RETURNING *""",
                (sid, campaign_id, title, status, started_at, status, started_at),
            )
        if row["campaign_id"] != campaign_id:
            raise InvalidInputError(f"session id {sid!r} belongs to another campaign")
        return from_row(Session, row)

    @operation
    def end_session(self, session_id: str, *, ended_at: datetime | None = None) -> Op:
        row = yield fetch_one(
            """UPDATE sessions SET status = 'ended', updated_at = now(),
                   ended_at = coalesce(ended_at, %s,
                       (SELECT max(spoken_at + make_interval(secs => duration_s))
                        FROM session_entries WHERE session_id = %s), now())
               WHERE id = %s RETURNING *""",
            (ended_at, session_id, session_id),
        )
        if row is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        return from_row(Session, row)

    @read_operation
    def get_session(self, session_id: str) -> Op:
        row = yield fetch_one("SELECT * FROM sessions WHERE id = %s", (session_id,))
        return from_row(Session, row) if row else None

    @operation
    def set_scene(self, session_id: str, scene: dict[str, Any]) -> Op:
        row = yield fetch_one(
            "UPDATE sessions SET scene = %s::jsonb, updated_at = now() WHERE id = %s RETURNING *",
            (json.dumps(scene), session_id),
        )
        if row is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        return from_row(Session, row)

    @read_operation
    def list_sessions(self, campaign_id: str, limit: int = 20, *, status: str | None = None) -> Op:
        """Newest first."""
        rows = yield fetch_all(
            """SELECT * FROM sessions WHERE campaign_id = %s
                   AND (%s::text IS NULL OR status = %s)
               ORDER BY started_at DESC, id DESC LIMIT %s""",
            (campaign_id, status, status, limit),
        )
        return [from_row(Session, r) for r in rows]

    @operation
    def delete_session(self, session_id: str) -> Op:
        n = yield execute("DELETE FROM sessions WHERE id = %s", (session_id,))
        return n > 0

    # -- entries --------------------------------------------------------------------------
    @operation
    def write_entry(self, session_id: str, entry: NewEntry) -> Op:
        """Write one utterance; a repeated idempotency key returns the stored entry."""
        validate_entry(entry)
        rows = yield fetch_all(INSERT_ENTRIES, (json.dumps([entry_record(entry)]), session_id))
        if rows:
            return from_row(Entry, rows[0])
        row = yield fetch_one(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries "
            "WHERE campaign_id = (SELECT campaign_id FROM sessions WHERE id = %s)"
            " AND session_id = %s AND idempotency_key = %s",
            (session_id, session_id, entry.idempotency_key),
        )
        if row is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        return from_row(Entry, row)

    @operation
    def write_entries(self, session_id: str, entries: Sequence[NewEntry]) -> Op:
        """Bulk write in one statement; returns the number of new rows (duplicates skipped)."""
        if not entries:
            return 0
        for e in entries:
            validate_entry(e)
        session = yield fetch_one("SELECT id FROM sessions WHERE id = %s", (session_id,))
        if session is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        payload = json.dumps([entry_record(e) for e in entries])
        rows = yield fetch_all(INSERT_ENTRIES, (payload, session_id))
        return len(rows)

    @read_operation
    def get_recent(
        self,
        session_id: str,
        duration: timedelta | float = 300.0,
        *,
        limit: int = 200,
        now: datetime | None = None,
    ) -> Op:
        """The last `duration` of the session (anchored at `now`, else at its latest entry),
        at most `limit` entries, oldest first."""
        seconds = duration.total_seconds() if isinstance(duration, timedelta) else duration
        rows = yield fetch_all(
            _GET_RECENT, {"s": session_id, "now": now, "window": seconds, "recent_limit": limit}
        )
        return [from_row(Entry, r) for r in rows]

    @read_operation
    def get_entries(self, session_id: str, *, after_id: int = 0) -> Op:
        """All entries of a session in spoken order (pipeline input)."""
        rows = yield fetch_all(
            f"""SELECT {ENTRY_COLUMNS} FROM session_entries
                WHERE session_id = %s AND id > %s ORDER BY spoken_at, id""",
            (session_id, after_id),
        )
        return [from_row(Entry, r) for r in rows]

    @read_operation
    def search(
        self,
        campaign_id: str,
        query: str,
        *,
        session_id: str | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
        speaker: str | None = None,
        limit: int = 20,
    ) -> Op:
        """Full-text search (English stemming, web-search syntax), best match first."""
        if not query.strip():
            return []
        rows = yield fetch_all(
            f"""SELECT {ENTRY_COLUMNS}, ts_rank_cd(tsv, q) AS rank
                FROM session_entries, websearch_to_tsquery('english', %(q)s) q
                WHERE campaign_id = %(c)s AND tsv @@ q
                  AND (%(s)s::text IS NULL OR session_id = %(s)s)
                  AND (%(after)s::timestamptz IS NULL OR spoken_at >= %(after)s)
                  AND (%(before)s::timestamptz IS NULL OR spoken_at < %(before)s)
                  AND (%(sp)s::text IS NULL OR speaker_id = %(sp)s OR speaker_name = %(sp)s)
                ORDER BY rank DESC, spoken_at DESC LIMIT %(limit)s""",
            {
                "q": query,
                "c": campaign_id,
                "s": session_id,
                "after": after,
                "before": before,
                "sp": speaker,
                "limit": limit,
            },
        )
        return [from_row(Entry, r) for r in rows]

    @read_operation
    def entry_count(self, session_id: str) -> Op:
        row = yield fetch_one(
            "SELECT count(*) AS n FROM session_entries WHERE session_id = %s", (session_id,)
        )
        return int(row["n"])

    @operation
    def update_corrections(
        self,
        updates: Sequence[tuple[int, str, list[dict[str, Any]], str]],
    ) -> Op:
        """Store improved text for entries: (entry id, text, corrections, corrector version).
        raw_text is never touched. This (the corrected_transcript step) is the only writer of
        `text`; a changed text drops the entry's per-turn embeddings (trigger, migration 017)
        so the next chunk_embeddings run embeds the new text."""
        if not updates:
            return 0
        n = yield execute_many(
            """UPDATE session_entries SET text = %s, corrections = %s::jsonb,
                   corrector_version = %s WHERE id = %s""",
            [(text, json.dumps(corr), ver, eid) for eid, text, corr, ver in updates],
        )
        return n
