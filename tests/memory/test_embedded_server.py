"""The embedded server: started on demand, shared by processes, never started twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from glyphoxa_pipelines.db import embedded

_START = """
import sys
from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import embedded, resolve_url
s = Settings.from_env()
url = resolve_url(s)
print(embedded.status(s.pgdata).pid)
"""


@pytest.mark.slow  # starts a second interpreter against the server
def test_two_processes_share_one_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "GLYPHOXA_HOME": str(home)}
    env.pop("GLYPHOXA_DATABASE_URL", None)
    procs = [
        subprocess.Popen([sys.executable, "-c", _START], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    try:
        pids = {p.communicate(timeout=120)[0].strip() for p in procs}
        assert all(p.returncode == 0 for p in procs)
        assert len(pids) == 1  # one postmaster served all three
        st = embedded.status(home / "pgdata")
        assert st.running and str(st.pid) in pids
        # it outlives the processes that started it, and holds the migrated schema
        with psycopg.connect(embedded.with_database(st.url or "", "glyphoxa")) as conn:
            assert conn.execute("SELECT count(*) FROM campaigns").fetchone() == (0,)
    finally:
        assert embedded.stop(home / "pgdata") is True
    assert not embedded.status(home / "pgdata").running
    assert embedded.stop(home / "pgdata") is False


def test_shared_buffers_are_a_quarter_of_memory_within_bounds() -> None:
    mb = 1024 * 1024
    assert embedded.shared_buffers_mb(0) == embedded.SHARED_BUFFERS_MIN_MB
    assert embedded.shared_buffers_mb(256 * mb) == embedded.SHARED_BUFFERS_MIN_MB
    assert embedded.shared_buffers_mb(2048 * mb) == 512
    assert embedded.shared_buffers_mb(64 * 1024 * mb) == embedded.SHARED_BUFFERS_MAX_MB


def test_a_container_limit_below_the_machine_is_the_memory(tmp_path: Path) -> None:
    physical = embedded.total_memory(())
    assert physical > 0
    limit = tmp_path / "memory.max"
    limit.write_text(f"{512 * 1024 * 1024}\n")
    assert embedded.total_memory((limit,)) == 512 * 1024 * 1024
    limit.write_text("max\n")  # no limit: the machine's
    assert embedded.total_memory((limit, tmp_path / "absent")) == physical


def _buffers(url: str) -> tuple[int, str]:
    """What the server runs with (MB), and what its configuration files say now (the last
    `shared_buffers` line: ALTER SYSTEM's when there is one)."""
    with psycopg.connect(url) as conn:
        running = conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024)"
            " FROM pg_settings WHERE name = 'shared_buffers'").fetchone()
        filed = conn.execute(
            "SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers'"
            " ORDER BY seqno DESC LIMIT 1").fetchone()
    assert running is not None and filed is not None
    return int(running[0]), str(filed[0])


@pytest.mark.slow  # starts and restarts its own server
def test_a_started_server_gets_its_buffers_and_a_running_one_keeps_its_clients(
    tmp_path: Path,
) -> None:
    pgdata = tmp_path / "pgdata"
    wanted = embedded.shared_buffers_mb(embedded.total_memory())
    try:
        url = embedded.start(pgdata)
        # the start that created it restarted it
        assert _buffers(url) == (wanted, f"{wanted}MB")
        # A server already running with other buffers (an older install) is not restarted
        # under its clients: the setting waits for its next start.
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET shared_buffers = '128MB'")
        embedded._restart(pgdata)
        pid = embedded.status(pgdata).pid
        with psycopg.connect(url) as client:
            assert embedded.start(pgdata) == url
            assert client.execute("SELECT 1").fetchone() == (1,)
        assert embedded.status(pgdata).pid == pid
        assert _buffers(url) == (128, f"{wanted}MB")
    finally:
        embedded.stop(pgdata)


def test_start_after_stop_in_one_process_starts_the_server_again(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"
    try:
        embedded.start(pgdata)
        assert embedded.stop(pgdata) is True
        assert not embedded.status(pgdata).running
        # pgserver keeps this process's handle to the stopped server; start must not hand
        # back a URL nobody answers.
        url = embedded.start(pgdata)
        assert embedded.status(pgdata).running
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        embedded.stop(pgdata)
