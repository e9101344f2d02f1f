"""A primary and a hot standby of the embedded server, for the scale tests: the standby is a
`pg_basebackup` of the primary streaming its WAL (`glyphoxa_pipelines.db.standby`), in its
own data folder on its own socket and port."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from glyphoxa_pipelines.config import Settings


@dataclass(frozen=True)
class ReplicaPair:
    home: Path
    settings: Settings
    primary_admin_url: str
    primary_url: str  # the application database on the primary
    standby_pgdata: Path
    standby_port: int
    standby_url: str  # the application database on the standby

    def restart_standby(self) -> None:
        from glyphoxa_pipelines.db import standby

        standby.start_standby(self.primary_admin_url, self.standby_pgdata,
                              port=self.standby_port)


def wait_replayed(pair: ReplicaPair, timeout_s: float = 10.0) -> None:
    """Until the standby has replayed everything the primary has written so far."""
    import time

    with psycopg.connect(pair.primary_url, autocommit=True) as conn:
        target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]  # type: ignore[index]
    deadline = time.monotonic() + timeout_s
    with psycopg.connect(pair.standby_url, autocommit=True) as conn:
        while True:
            done = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                (target,)).fetchone()
            if done and done[0]:
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the standby did not catch up")
            time.sleep(0.02)


@pytest.fixture(scope="session")
def replica_pair() -> Iterator[ReplicaPair]:
    from glyphoxa_pipelines.db import embedded, resolve_url, standby

    # Not pytest's tmp_path: as root the servers run as another user that must reach it.
    home = Path(tempfile.mkdtemp(prefix="gx-scale-"))
    home.chmod(0o755)
    settings = Settings(home=home, database_url=None)
    url = resolve_url(settings)
    admin = embedded.start(settings.pgdata)
    port = 5433
    standby_pgdata = home / "sb"
    try:
        standby.start_standby(admin, standby_pgdata, port=port)
        pair = ReplicaPair(home, settings, admin, url, standby_pgdata, port,
                           standby.standby_url(standby_pgdata, port, settings.database_name))
        yield pair
    finally:
        with contextlib.suppress(Exception):
            standby.drop_standby(admin, standby_pgdata)
        with contextlib.suppress(Exception):
            embedded.stop(settings.pgdata)
        shutil.rmtree(home, ignore_errors=True)
