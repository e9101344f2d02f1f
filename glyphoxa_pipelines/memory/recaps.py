"""Session summaries, "Previously on…" recaps, and the campaign's story so far."""

from __future__ import annotations

import json
from typing import Any

from psycopg import sql

from glyphoxa_pipelines.db.operations import Op, execute, fetch_one, operation, read_operation
from glyphoxa_pipelines.memory.errors import NotFoundError
from glyphoxa_pipelines.memory.models import Recap, SessionSummary
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.visibility import session_heard


def _by_session(table: str) -> sql.Composed:
    """A session's row of `table` (summaries, recaps), if `%(listener)s` heard that session
    (`visibility.session_heard`; None: anyone)."""
    return sql.SQL("SELECT t.* FROM {t} t WHERE t.session_id = %(s)s AND {heard}").format(
        t=sql.Identifier(table), heard=session_heard(sql.SQL("t.session_id")))


def _latest(table: str) -> sql.Composed:
    """The campaign's most recent row of `table` (before session `%(b)s` started, when given)
    of a session `%(listener)s` heard: an NPC's "last session" is the last one it was in."""
    return sql.SQL(
        """SELECT t.* FROM {t} t JOIN sessions s ON s.id = t.session_id
           WHERE t.campaign_id = %(c)s
             AND (%(b)s::text IS NULL OR s.started_at <
                  (SELECT started_at FROM sessions WHERE id = %(b)s))
             AND {heard}
           ORDER BY s.started_at DESC LIMIT 1"""
    ).format(t=sql.Identifier(table), heard=session_heard(sql.SQL("t.session_id")))


_SUMMARY_BY_SESSION = _by_session("session_summaries")
_SUMMARY_LATEST = _latest("session_summaries")
_RECAP_BY_SESSION = _by_session("recaps")
_RECAP_LATEST = _latest("recaps")


def _session_campaign_op(session_id: str) -> Op[str]:
    row = yield fetch_one("SELECT campaign_id FROM sessions WHERE id = %s", (session_id,))
    if row is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    return row["campaign_id"]


def save_summary_op(summary: SessionSummary) -> Op[SessionSummary]:
    """Insert or replace a session's summary (the campaign is the session's). A plain
    operation: composing it into another transaction needs no store object."""
    campaign = yield from _session_campaign_op(summary.session_id)
    row = yield fetch_one(
        """INSERT INTO session_summaries (session_id, campaign_id, summary, key_points, method)
           VALUES (%s, %s, %s, %s::jsonb, %s)
           ON CONFLICT (campaign_id, session_id) DO UPDATE SET summary = EXCLUDED.summary,
               key_points = EXCLUDED.key_points, method = EXCLUDED.method,
               created_at = now()
           RETURNING *""",
        (
            summary.session_id,
            campaign,
            summary.summary,
            json.dumps(summary.key_points),
            summary.method,
        ),
    )
    return from_row(SessionSummary, row)


class SummaryStore:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def save(self, summary: SessionSummary) -> Op[SessionSummary]:
        return save_summary_op(summary)

    @read_operation
    def get(self, session_id: str, *, listener: str | None = None) -> Op:
        """The session's summary; None also when `listener` (an NPC) heard none of it."""
        row = yield fetch_one(_SUMMARY_BY_SESSION, {"s": session_id, "listener": listener})
        return from_row(SessionSummary, row) if row else None

    @read_operation
    def latest(self, campaign_id: str, *, before_session: str | None = None,
               listener: str | None = None) -> Op:
        """The summary of the campaign's most recent summarised session ("last session"),
        of those `listener` heard."""
        row = yield fetch_one(
            _SUMMARY_LATEST, {"c": campaign_id, "b": before_session, "listener": listener})
        return from_row(SessionSummary, row) if row else None

    @operation
    def delete(self, session_id: str) -> Op:
        n = yield execute("DELETE FROM session_summaries WHERE session_id = %s", (session_id,))
        return n > 0


class RecapStore:
    def __init__(self, db: Any) -> None:
        self.db = db

    @operation
    def save(self, recap: Recap) -> Op:
        campaign = yield from _session_campaign_op(recap.session_id)
        row = yield fetch_one(
            """INSERT INTO recaps (session_id, campaign_id, text, audio_path, method)
               VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (campaign_id, session_id) DO UPDATE SET text = EXCLUDED.text,
                   audio_path = EXCLUDED.audio_path, method = EXCLUDED.method,
                   created_at = now()
               RETURNING *""",
            (recap.session_id, campaign, recap.text, recap.audio_path, recap.method),
        )
        return from_row(Recap, row)

    @read_operation
    def get(self, session_id: str, *, listener: str | None = None) -> Op:
        """The session's recap; None also when `listener` (an NPC) heard none of it."""
        row = yield fetch_one(_RECAP_BY_SESSION, {"s": session_id, "listener": listener})
        return from_row(Recap, row) if row else None

    @read_operation
    def latest(self, campaign_id: str, *, before_session: str | None = None,
               listener: str | None = None) -> Op:
        """The recap of the campaign's most recent session that has one (before the session
        `before_session` started, when given): "previously on…" for the next one; of the
        sessions `listener` heard."""
        row = yield fetch_one(
            _RECAP_LATEST, {"c": campaign_id, "b": before_session, "listener": listener})
        return from_row(Recap, row) if row else None

    @operation
    def delete(self, session_id: str) -> Op:
        n = yield execute("DELETE FROM recaps WHERE session_id = %s", (session_id,))
        return n > 0

    @operation
    def save_story(self, campaign_id: str, story: str, details: dict[str, Any]) -> Op:
        yield execute(
            """INSERT INTO campaign_summaries (campaign_id, story, details)
               VALUES (%s, %s, %s::jsonb)
               ON CONFLICT (campaign_id) DO UPDATE SET story = EXCLUDED.story,
                   details = EXCLUDED.details, updated_at = now()""",
            (campaign_id, story, json.dumps(details)),
        )

    @read_operation
    def get_story(self, campaign_id: str) -> Op:
        row = yield fetch_one(
            "SELECT story FROM campaign_summaries WHERE campaign_id = %s", (campaign_id,)
        )
        return row["story"] if row else None
