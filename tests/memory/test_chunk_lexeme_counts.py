"""`chunk_lexeme_counts` (migration 025): each lexeme's chunk count per campaign, kept exact by
triggers on chunks through inserts, re-chunking (text updates), updates that leave the text
alone, session and campaign deletes, and concurrent writers of one campaign."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import CampaignStore, Chunk, SemanticIndex, SessionStore

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
WORDS = "dragon tavern sword crown king river bridge temple gold map ring storm".split()


def _chunks(campaign_id: str, session_id: str, n: int, offset: int = 0) -> list[Chunk]:
    return [
        Chunk(id=f"{session_id}#{i:05d}", campaign_id=campaign_id, session_id=session_id, seq=i,
              text=" ".join(WORDS[(i + offset + k * 5) % len(WORDS)] for k in range(3)),
              start_at=T0 + timedelta(minutes=i), end_at=T0 + timedelta(minutes=i + 1))
        for i in range(n)
    ]


def _table(db: Database, campaign_id: str) -> dict[str, int]:
    with db.connection() as conn:
        rows = conn.execute("SELECT lexeme, chunks FROM chunk_lexeme_counts"
                            " WHERE campaign_id = %s AND chunks > 0", (campaign_id,)).fetchall()
    return {r[0]: r[1] for r in rows}


def _recount(db: Database, campaign_id: str) -> dict[str, int]:
    with db.connection() as conn:
        rows = conn.execute("SELECT l.lexeme, count(*) FROM chunks c, unnest(c.tsv) l"
                            " WHERE c.campaign_id = %s GROUP BY 1", (campaign_id,)).fetchall()
    return {r[0]: r[1] for r in rows}


def test_counts_follow_inserts_rechunking_and_deletes(db: Database, campaign_id: str) -> None:
    sessions = [SessionStore(db).start_session(campaign_id).id for _ in range(2)]
    index = SemanticIndex(db)
    index.index_chunks(_chunks(campaign_id, sessions[0], 12))
    index.index_chunks(_chunks(campaign_id, sessions[1], 7))
    counts = _table(db, campaign_id)
    assert counts == _recount(db, campaign_id) and counts["dragon"] > 0
    before = dict(counts)

    # Re-chunking a session rewrites its chunks' text (an upsert): old lexemes go, new come.
    index.index_chunks(_chunks(campaign_id, sessions[1], 7, offset=1))
    assert _table(db, campaign_id) == _recount(db, campaign_id) != before
    # An update that keeps the text (presence edits rewrite `audience`) changes nothing.
    with db.connection() as conn:
        conn.execute("UPDATE chunks SET audience = '{}' WHERE session_id = %s", (sessions[0],))
    assert _table(db, campaign_id) == _recount(db, campaign_id)

    with db.connection() as conn:
        conn.execute("DELETE FROM sessions WHERE id = %s", (sessions[0],))
    assert _table(db, campaign_id) == _recount(db, campaign_id)
    with db.connection() as conn:
        conn.execute("DELETE FROM campaigns WHERE id = %s", (campaign_id,))
        left = conn.execute("SELECT count(*) FROM chunk_lexeme_counts WHERE campaign_id = %s",
                            (campaign_id,)).fetchone()
    assert left is not None and left[0] == 0


def test_concurrent_writers_of_one_campaign_do_not_deadlock(
    db: Database, campaign_id: str
) -> None:
    # Each writer upserts many chunks in one transaction, sharing lexemes but starting from
    # different ones: row locks taken chunk by chunk would cross between writers and deadlock.
    sessions = [SessionStore(db).start_session(campaign_id).id for _ in range(4)]
    index = SemanticIndex(db)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda k: index.index_chunks(_chunks(campaign_id, sessions[k], 40,
                                                           offset=3 * k)), range(4)))
    counts = _table(db, campaign_id)
    assert counts == _recount(db, campaign_id)
    assert sum(counts.values()) == 4 * 40 * 3


def test_campaigns_count_apart(db: Database, campaign_id: str) -> None:
    from glyphoxa_pipelines.memory import Campaign

    other = campaign_id + "-b"
    CampaignStore(db).upsert(Campaign(other, "another"))
    for cid, n in ((campaign_id, 5), (other, 9)):
        SemanticIndex(db).index_chunks(_chunks(cid, SessionStore(db).start_session(cid).id, n))
    assert _table(db, campaign_id) == _recount(db, campaign_id)
    assert _table(db, other) == _recount(db, other)
    assert sum(_table(db, other).values()) == 9 * 3
