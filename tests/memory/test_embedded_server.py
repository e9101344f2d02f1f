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
