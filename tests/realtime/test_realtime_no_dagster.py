"""The realtime path never imports Dagster (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_realtime_imports_no_dagster() -> None:
    code = (
        "import sys\n"
        "import glyphoxa_pipelines.cli\n"
        "import glyphoxa_pipelines.cli.serve_commands\n"
        "import realtime, realtime.api.app, realtime.service, realtime.mcp.server\n"
        "import realtime.hot_context, realtime.prefetch, realtime.tools, realtime.spool\n"
        "import realtime.tools.dispatch, realtime.session_search, realtime.prefetch.prefetcher\n"
        "import realtime.discord, realtime.voice, realtime.dashboard\n"
        "import realtime.fact_search, realtime.auth\n"
        "from realtime.api.routes import context, dm, entries, health, sessions, tools\n"
        "bad = sorted(m for m in sys.modules if m == 'dagster' or m.startswith('dagster.')\n"
        "             or m.startswith('dagster_'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
