"""Numbered SQL migrations, applied in order and recorded in `schema_migrations`.

A transaction-level advisory lock serialises concurrent starts: the second process waits, then
finds every migration recorded and does nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"
_LOCK_KEY = 0x61797068_6F786100 >> 8  # stable 64-bit key, "glyphoxa"
_NAME = re.compile(r"^(\d{3,})_[a-z0-9_]+\.sql$")


class MigrationError(RuntimeError):
    """A migration file is malformed, was edited after being applied, or failed."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def discover(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        m = _NAME.match(path.name)
        if not m:
            raise MigrationError(f"{path}: migration files are named NNN_snake_case.sql")
        found.append(Migration(int(m.group(1)), path.name, path.read_text()))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"{directory}: two migrations share a number: {versions}")
    return found


def migrate(url: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations; return the names applied (empty when up to date)."""
    migrations = discover(directory)
    applied: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                       version integer PRIMARY KEY,
                       name text NOT NULL,
                       checksum text NOT NULL,
                       applied_at timestamptz NOT NULL DEFAULT now())"""
        )
        done = {
            row[0]: row[1]
            for row in conn.execute("SELECT version, checksum FROM schema_migrations")
        }
        for mig in migrations:
            if mig.version in done:
                if done[mig.version] != mig.checksum:
                    raise MigrationError(
                        f"{mig.name} was changed after it was applied; add a new migration"
                    )
                continue
            try:
                conn.execute(mig.sql.encode())  # whole file, simple query protocol
            except psycopg.Error as exc:
                raise MigrationError(f"{mig.name} failed: {exc}") from exc
            conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                (mig.version, mig.name, mig.checksum),
            )
            applied.append(mig.name)
    return applied
