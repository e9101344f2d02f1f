"""Migration 024 rekeys a database in place: a home written under the old keys (migrations up to
023) keeps every row and every answer, and the writers follow the new keys (session ids stay
unique across campaigns, a deleted fact still clears what it invalidated, a re-corrected turn
still drops its stale vector)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from glyphoxa_pipelines.db import Database, migrate
from glyphoxa_pipelines.db.embedded import ensure_database, with_database
from glyphoxa_pipelines.db.migrations import MIGRATIONS_DIR, discover
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    InvalidInputError,
    KnowledgeGraph,
    NewEntry,
    SemanticIndex,
    SessionStore,
)

REKEY = 24
TABLES = {  # table -> a stable order for comparing rows
    "sessions": "id",
    "session_entries": "id",
    "chunks": "id",
    "chunk_embeddings": "chunk_id, model",
    "entry_embeddings": "entry_id, model",
    "entities": "id",
    "relationships": "id",
    "session_summaries": "session_id",
    "recaps": "session_id",
}


def _vector(i: int) -> str:
    return "[" + ",".join("1" if j == i else "0" for j in range(384)) + "]"


def _old_schema(database_url: str, tmp_path: Path) -> str:
    name = "rekey_" + uuid.uuid4().hex[:10]
    ensure_database(with_database(database_url, "postgres"), name)
    url = with_database(database_url, name)
    old = tmp_path / "old"
    old.mkdir()
    for m in discover():
        if m.version < REKEY:
            shutil.copy(MIGRATIONS_DIR / m.name, old / m.name)
    migrate(url, old)
    return url


def _load(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Two campaigns' worth of rows written with the old keys, as the stores wrote them."""
    ids: dict[str, int] = {}
    for cid in ("old-a", "old-b"):
        conn.execute("INSERT INTO campaigns (id, name) VALUES (%s, %s)", (cid, cid))
        sid = f"{cid}-s1"
        conn.execute("INSERT INTO sessions (id, campaign_id, title) VALUES (%s, %s, 'one')",
                     (sid, cid))
        entry_ids = [
            conn.execute(
                """INSERT INTO session_entries (campaign_id, session_id, idempotency_key,
                       speaker_name, raw_text, text, spoken_at)
                   VALUES (%s, %s, %s, 'Vex', %s, %s, now() - make_interval(secs => %s))
                   RETURNING id""",
                (cid, sid, f"k{i}", f"line {i} of {cid}", f"line {i} of {cid}", 10 - i),
            ).fetchone()[0]  # type: ignore[index]
            for i in range(3)
        ]
        ids[f"{cid}-entry"] = entry_ids[0]
        conn.execute(
            """INSERT INTO chunks (id, campaign_id, session_id, seq, text, first_entry_id,
                   last_entry_id) VALUES (%s, %s, %s, 0, %s, %s, %s)""",
            (f"{sid}#0", cid, sid, f"the chunk of {cid}", entry_ids[0], entry_ids[-1]),
        )
        conn.execute(
            """INSERT INTO chunk_embeddings (chunk_id, model, campaign_id, session_id, embedding)
               VALUES (%s, 'all-MiniLM-L6-v2', %s, %s, %s::vector)""",
            (f"{sid}#0", cid, sid, _vector(0 if cid == "old-a" else 1)),
        )
        for eid in entry_ids:
            conn.execute(
                """INSERT INTO entry_embeddings (entry_id, model, campaign_id, session_id,
                       embedding) VALUES (%s, 'all-MiniLM-L6-v2', %s, %s, %s::vector)""",
                (eid, cid, sid, _vector(2)),
            )
        for ent in ("vex", "orb", "map"):
            conn.execute("INSERT INTO entities (campaign_id, id, type, name) VALUES "
                         "(%s, %s, 'npc', %s)", (cid, ent, ent.title()))
        newer = conn.execute(
            """INSERT INTO relationships (campaign_id, source_id, rel_type, target_id)
               VALUES (%s, 'vex', 'holds', 'map') RETURNING id""", (cid,)).fetchone()[0]  # type: ignore[index]
        older = conn.execute(
            """INSERT INTO relationships (campaign_id, source_id, rel_type, target_id,
                   invalidated_at, invalidated_by)
               VALUES (%s, 'vex', 'holds', 'orb', now(), %s) RETURNING id""",
            (cid, newer)).fetchone()[0]  # type: ignore[index]
        ids[f"{cid}-newer"], ids[f"{cid}-older"] = newer, older
        conn.execute("INSERT INTO session_summaries (session_id, campaign_id, summary) "
                     "VALUES (%s, %s, 'they met')", (sid, cid))
        conn.execute("INSERT INTO recaps (session_id, campaign_id, text) "
                     "VALUES (%s, %s, 'previously')", (sid, cid))
    return ids


def _snapshot(conn: psycopg.Connection[Any]) -> dict[str, list[Any]]:
    return {
        t: [r[0] for r in conn.execute(
            f"SELECT to_jsonb(x) - 'embedding' FROM {t} x ORDER BY {order}").fetchall()]
        for t, order in TABLES.items()
    }


def test_an_old_home_is_rekeyed_in_place_with_rows_and_answers_intact(
    database_url: str, tmp_path: Path
) -> None:
    url = _old_schema(database_url, tmp_path)
    with psycopg.connect(url, autocommit=True) as conn:
        ids = _load(conn)
        before = _snapshot(conn)
    assert all(before[t] for t in TABLES), "every rekeyed table must hold rows"

    assert migrate(url) == [m.name for m in discover() if m.version >= REKEY]

    with psycopg.connect(url, autocommit=True) as conn:
        assert _snapshot(conn) == before
        keys = dict(conn.execute(
            """SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
               WHERE contype = 'p' AND conrelid::regclass::text = ANY(%s)""",
            (list(TABLES),)).fetchall())
    assert all(k.startswith("PRIMARY KEY (campaign_id, ") for k in keys.values()), keys

    with Database(url, max_size=2).open() as db:
        recent = SessionStore(db).get_recent("old-a-s1")
        assert [e.text for e in recent] == [f"line {i} of old-a" for i in range(3)]
        hits = SemanticIndex(db).search("old-b", [0.0, 1.0] + [0.0] * 382, top_k=5)
        assert [h.chunk.id for h in hits] == ["old-b-s1#0"]
        graph = KnowledgeGraph(db)
        fact = graph.get_relationship("old-a", ids["old-a-older"])
        assert fact is not None and fact.invalidated_by == ids["old-a-newer"]

        # The live write on the new key: a repeated idempotency key lands once.
        store = SessionStore(db)
        again = store.write_entry("old-a-s1", NewEntry(idempotency_key="k0", text="other"))
        assert again.id == ids["old-a-entry"] and again.text == "line 0 of old-a"

        # Deleting the newer fact clears invalidated_by alone (the campaign stays).
        graph.delete_relationship("old-a", ids["old-a-newer"])
        fact = graph.get_relationship("old-a", ids["old-a-older"])
        assert fact is not None and fact.invalidated_by is None
        assert graph.get_relationship("old-b", ids["old-b-older"]).invalidated_by == ids[
            "old-b-newer"]

    with psycopg.connect(url, autocommit=True) as conn:
        # A re-corrected turn drops its stale vector through the new key; others keep theirs.
        conn.execute("UPDATE session_entries SET text = 'corrected' WHERE id = %s",
                     (ids["old-a-entry"],))
        left = conn.execute(
            "SELECT campaign_id, count(*) FROM entry_embeddings GROUP BY 1 ORDER BY 1").fetchall()
        assert left == [("old-a", 2), ("old-b", 3)]


def test_session_ids_stay_unique_across_campaigns(db: Any) -> None:
    a, b = ("k-" + uuid.uuid4().hex[:10] for _ in range(2))
    for cid in (a, b):
        CampaignStore(db).upsert(Campaign(cid, cid))
    sessions = SessionStore(db)
    sid = f"{a}-shared"
    first = sessions.start_session(a, sid, title="first")
    assert sessions.start_session(a, sid).title == "first"  # same campaign: returned as is
    with pytest.raises(InvalidInputError, match="belongs to another campaign"):
        sessions.start_session(b, sid)
    assert sessions.get_session(sid) == first
