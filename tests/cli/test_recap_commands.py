"""`glyphoxa recap show|play S`, in-process via typer's runner."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import Recap, RecapStore, SessionStore

runner = CliRunner()


def test_recap_show_and_play(db: Database, campaign_id: str, tmp_path: Path) -> None:
    log = SessionStore(db)
    spoken = log.start_session(campaign_id, f"{campaign_id}-a", status="ended").id
    silent = log.start_session(campaign_id, f"{campaign_id}-b", status="ended").id
    none = log.start_session(campaign_id, f"{campaign_id}-c").id
    audio = tmp_path / "a.wav"
    audio.write_bytes(b"RIFF fake")
    RecapStore(db).save(Recap(spoken, campaign_id, "Previously: a dragon woke.", str(audio)))
    RecapStore(db).save(Recap(silent, campaign_id, "Previously: nothing much."))

    shown = runner.invoke(app, ["recap", "show", spoken])
    assert shown.exit_code == 0 and "a dragon woke" in shown.output and str(audio) in shown.output

    played_to = tmp_path / "played"
    player = f"{sys.executable} -c \"import shutil,sys; shutil.copy(sys.argv[1], '{played_to}')\""
    played = runner.invoke(app, ["recap", "play", spoken, "--player", player])
    assert played.exit_code == 0, played.output
    assert played_to.read_bytes() == b"RIFF fake"

    mute = runner.invoke(app, ["recap", "play", silent, "--player", player])
    assert mute.exit_code == 2 and "no recap audio" in mute.output and "nothing much" in mute.output
    missing = runner.invoke(app, ["recap", "show", none])
    assert missing.exit_code == 2 and "no recap yet" in missing.output
    unknown = runner.invoke(app, ["recap", "show", "no-such-session"])
    assert unknown.exit_code == 2 and "unknown session" in unknown.output
