"""Migrations: applied once, recorded, safe when run twice or concurrently."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import psycopg
import pytest

from glyphoxa_pipelines.db import MigrationError, migrate
from glyphoxa_pipelines.db.embedded import ensure_database, with_database
from glyphoxa_pipelines.db.migrations import discover


def _fresh_database(database_url: str) -> str:
    name = "mig_" + uuid.uuid4().hex[:10]
    ensure_database(with_database(database_url, "postgres"), name)
    return with_database(database_url, name)


def test_migrate_twice_is_a_no_op(database_url: str) -> None:
    url = _fresh_database(database_url)
    first = migrate(url)
    assert first == [m.name for m in discover()]
    assert migrate(url) == []
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        assert [r[1] for r in rows] == first
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
    assert {
        "campaigns",
        "sessions",
        "session_entries",
        "chunks",
        "chunk_embeddings",
        "entry_embeddings",
        "entities",
        "relationships",
        "session_summaries",
        "recaps",
    } <= tables


def test_concurrent_migrations_do_not_race(database_url: str) -> None:
    url = _fresh_database(database_url)
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(migrate(url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(len(r) for r in results) == [0, 0, 0, len(discover())]


def test_edited_migration_is_refused(database_url: str, tmp_path: Path) -> None:
    url = _fresh_database(database_url)
    (tmp_path / "001_a.sql").write_text("CREATE TABLE a (x int);")
    assert migrate(url, tmp_path) == ["001_a.sql"]
    (tmp_path / "001_a.sql").write_text("CREATE TABLE a (x bigint);")
    with pytest.raises(MigrationError, match="changed after it was applied"):
        migrate(url, tmp_path)
    (tmp_path / "001_a.sql").write_text("CREATE TABLE a (x int);")
    (tmp_path / "002_bad.sql").write_text("CREATE TABLE oops (;")
    with pytest.raises(MigrationError, match="002_bad.sql failed"):
        migrate(url, tmp_path)
    (tmp_path / "bad-name.sql").write_text("")
    with pytest.raises(MigrationError, match="NNN_snake_case"):
        discover(tmp_path)
