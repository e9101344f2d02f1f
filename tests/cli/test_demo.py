"""`glyphoxa demo` end to end on the test run's embedded database."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app

pytestmark = pytest.mark.slow  # the whole demo: model load, import, recap


def test_demo_shows_an_npc_memory(database_url: str) -> None:
    result = CliRunner().invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "L3 identity snapshot of Eldrinax" in out
    assert "Eldrinax lives in Tower of Whispers" in out
    assert "(SECRET: do not reveal)" in out  # Eldrinax knows his own secret, flagged
    assert "(heard:" in out and "Elder nacks" in out  # raw STT kept beside the correction
    assert "L2 nearest chunks" in out and "Summary of" in out and "Recap" in out
    assert "Captain Orlen Hask knows: none (hidden from this NPC)" in out
    # a second run changes nothing: campaign, sessions and entries are idempotent
    again = CliRunner().invoke(app, ["demo"], env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    assert "(0 new)" in again.output
