"""The pipeline commands through the real CLI: session import on good and bad files, status,
and `glyphoxa process` on a slice of a real CRD3 episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL
from glyphoxa_pipelines.memory import KnowledgeGraph, SemanticIndex, SessionStore, SummaryStore
from tests.support.sample_sessions import FACTS_SESSION

FIXTURES = Path(__file__).resolve().parents[1] / "processing" / "fixtures"
runner = CliRunner()


def _run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def test_session_import_good_file(db: Any, campaign_id: str) -> None:
    result = _run("session", "import", "--campaign", campaign_id, str(FACTS_SESSION))
    assert result.exit_code == 0, result.output
    session_id = f"{campaign_id}--facts-session"
    assert session_id in result.output
    session = SessionStore(db).get_session(session_id)
    assert session is not None and session.status == "ended"
    assert len(SessionStore(db).get_entries(session_id)) == 12
    again = _run("session", "import", "--campaign", campaign_id, str(FACTS_SESSION))
    assert again.exit_code == 0 and "0 new" in again.output


@pytest.mark.parametrize(
    ("name", "line"),
    [("bad_json.jsonl", 2), ("bad_timing.srt", None), ("bad_crd3.json", None)],
)
def test_session_import_bad_file_fails_with_location_and_imports_nothing(
    db: Any, campaign_id: str, name: str, line: int | None
) -> None:
    path = FIXTURES / name
    result = _run("session", "import", "--campaign", campaign_id, str(path))
    assert result.exit_code == 2
    text = " ".join((result.output + (result.stderr or "")).split())
    assert name in text
    if line is not None:
        assert f"{name}:{line}" in text
    assert SessionStore(db).list_sessions(campaign_id) == []


@pytest.mark.slow  # the pipeline over a real episode
def test_process_and_status_on_a_real_crd3_episode_slice(
    db: Any, campaign_id: str, shared_data: Path, tmp_path: Path
) -> None:
    episode = json.loads((shared_data / "crd3" / "cleaned" / "C1E001.json").read_text())
    episode["TURNS"] = episode["TURNS"][:120]
    path = tmp_path / "C1E001-slice.json"
    path.write_text(json.dumps(episode))
    assert _run("session", "import", "--campaign", campaign_id, str(path)).exit_code == 0
    session_id = f"{campaign_id}--c1e001-slice"

    before = _run("status", "--campaign", campaign_id)
    assert before.exit_code == 0 and "1 of 1 session(s) stale" in " ".join(before.output.split())

    result = _run("process", "--campaign", campaign_id)
    assert result.exit_code == 0, result.output
    assert "0 failed check(s)" in result.output
    chunks = SemanticIndex(db).get_chunks(session_id)
    assert len(chunks) >= 10
    assert not SemanticIndex(db).chunks_missing_embeddings(
        DEFAULT_EMBEDDING_MODEL, session_id=session_id
    )
    names = {e.name for e in KnowledgeGraph(db).find_entities(campaign_id)}
    assert {"Kraghammer", "Grog"} & {n.split()[0] for n in names}
    assert SummaryStore(db).get(session_id).summary

    after = _run("status", "--campaign", campaign_id)
    assert "0 of 1 session(s) stale" in " ".join(after.output.split())


def test_process_rejects_unknown_assets_and_sessions(campaign_id: str) -> None:
    bad = _run("process", "--campaign", campaign_id, "--assets", "nonsense")
    assert bad.exit_code != 0
    missing = _run("process", "--campaign", campaign_id, "--session", "no-such-session")
    assert missing.exit_code != 0
