"""The timeline of imported sessions: undated transcripts get increasing starts in import
order, `--started-at` / `--session-number` place them, dated files keep their dates, a
re-import keeps its start, and `glyphoxa session list` shows the order."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from glyphoxa_pipelines.campaign.session_import import import_session
from glyphoxa_pipelines.campaign.transcript_import import DEFAULT_START
from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import SessionStore, SummaryStore
from glyphoxa_pipelines.memory.models import SessionSummary

runner = CliRunner()
WEEK = timedelta(days=7)


def _episode(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.txt"
    path.write_text(f"DM: Episode {name} begins.\nRook: Onward.\n")
    return path


def test_undated_imports_follow_import_order(
    db: Database, campaign_id: str, tmp_path: Path
) -> None:
    starts = [
        import_session(db, campaign_id, _episode(tmp_path, f"ep{i}")).session.started_at
        for i in range(1, 4)
    ]
    assert starts == [DEFAULT_START, DEFAULT_START + WEEK, DEFAULT_START + 2 * WEEK]
    # a re-import keeps its place (and is still a no-op)
    again = import_session(db, campaign_id, _episode(tmp_path, "ep1"))
    assert again.written == 0 and again.session.started_at == DEFAULT_START
    # the timeline drives "last session": the summary before ep3 is ep2's
    sids = [f"{campaign_id}--ep{i}" for i in range(1, 4)]
    for sid in sids:
        SummaryStore(db).save(SessionSummary(sid, campaign_id, f"summary of {sid}"))
    latest = SummaryStore(db).latest(campaign_id, before_session=sids[2])
    assert latest is not None and latest.session_id == sids[1]


def test_started_at_number_and_dated_files(db: Database, campaign_id: str, tmp_path: Path) -> None:
    told = datetime(2023, 6, 2, 18, 30, tzinfo=UTC)
    at = import_session(db, campaign_id, _episode(tmp_path, "told"), start_at=told)
    assert at.session.started_at == told
    numbered = import_session(db, campaign_id, _episode(tmp_path, "three"), session_number=3)
    assert numbered.session.started_at == DEFAULT_START + 2 * WEEK
    assert numbered.session.title == "Session 3: three"
    dated = tmp_path / "dated.jsonl"
    dated.write_text(json.dumps({"speaker": "DM", "text": "Hello.",
                                 "timestamp": "2025-02-03T20:00:00Z"}) + "\n")
    own = import_session(db, campaign_id, dated)
    assert own.transcript.absolute_times
    assert own.session.started_at == datetime(2025, 2, 3, 20, 0, tzinfo=UTC)
    # the next undated file goes a week after the latest, the dated one
    after = import_session(db, campaign_id, _episode(tmp_path, "next"))
    assert after.session.started_at == datetime(2025, 2, 10, 20, 0, tzinfo=UTC)


def test_session_import_and_list_commands(db: Database, campaign_id: str, tmp_path: Path) -> None:
    for name, extra in (("b", ["--session-number", "2"]),
                        ("a", ["--session-number", "1"]),
                        ("c", ["--started-at", "2021-05-01 19:30"])):
        result = runner.invoke(
            app, ["session", "import", str(_episode(tmp_path, name)), "-c", campaign_id, *extra]
        )
        assert result.exit_code == 0, result.output
    assert "started 2021-05-01 19:30" in result.output
    listed = runner.invoke(app, ["session", "list", "-c", campaign_id])
    assert listed.exit_code == 0, listed.output
    rows = [line.split("\t") for line in listed.output.strip().splitlines()]
    assert [(r[0], r[3]) for r in rows] == [
        ("1", f"{campaign_id}--a"), ("2", f"{campaign_id}--b"), ("3", f"{campaign_id}--c")
    ]
    assert rows[0][1].startswith("2020-01-01 19:00") and rows[2][1].startswith("2021-05-01 19:30")
    assert rows[1][4] == "Session 2: b"
    bad = runner.invoke(app, ["session", "import", str(_episode(tmp_path, "d")), "-c",
                              campaign_id, "--session-number", "0"])
    assert bad.exit_code == 2
    assert len(SessionStore(db).list_sessions(campaign_id, 100)) == 3
