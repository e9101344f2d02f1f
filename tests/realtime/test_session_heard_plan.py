"""The session rule (`visibility.session_heard`) as the summary and recap reads run it: each
probe walks the (session_id, spoken_at) index. Written as EXISTS, PostgreSQL dropped the
subquery's LIMIT and chose a sequential scan that expected an early match, reading every
earlier session's lines first: get_session_summary slowed 2-4x in `bench/realtime.py`."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import psycopg

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    NewEntry,
    SessionStore,
    SessionSummary,
    SummaryStore,
)
from glyphoxa_pipelines.memory.recaps import _SUMMARY_BY_SESSION, _SUMMARY_LATEST

T0 = datetime(2025, 1, 1, tzinfo=UTC)
SESSIONS, LINES = 6, 3000  # loaded session by session, as a campaign's table is


def test_summary_reads_probe_the_session_index(rt_db_url: str) -> None:
    cid = "heard-plan-" + uuid.uuid4().hex[:6]
    with Database(rt_db_url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, "Plan"))
        log = SessionStore(db)
        sids = []
        for s in range(SESSIONS):
            start = T0 + timedelta(days=7 * s)
            sid = log.start_session(cid, f"{cid}-s{s}", started_at=start).id
            sids.append(sid)
            log.write_entries(sid, [
                NewEntry(idempotency_key=str(i), text=f"line {i}", speaker_id="p",
                         speaker_name="P", speaker_role="player",
                         spoken_at=start + timedelta(seconds=4 * i))
                for i in range(LINES)])
            SummaryStore(db).save(SessionSummary(sid, cid, f"summary {s}", method="test"))
    with psycopg.connect(rt_db_url) as conn:
        conn.execute("ANALYZE session_entries")
        for query, params in ((_SUMMARY_LATEST, {"c": cid, "b": None, "listener": "npc"}),
                              (_SUMMARY_BY_SESSION, {"s": sids[-1], "listener": "npc"})):
            plan = "\n".join(r[0] for r in conn.execute(
                "EXPLAIN " + query.as_string(conn), params).fetchall())
            assert "session_entries_recent" in plan, plan
            assert "Seq Scan on session_entries" not in plan, plan
            # and the answer: public lines, so the NPC reads the summary
            row = conn.execute(query.as_string(conn), params).fetchone()
            assert row is not None
