"""The `glyphoxa` db / migrate / campaign / entity commands, in-process via typer's runner."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN

runner = CliRunner()


def _ok(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_db_url_is_accepted_by_psycopg_and_psql(database_url: str) -> None:
    url = _ok("db", "url").strip().splitlines()[-1]
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] >= 1
    import pgserver

    psql = Path(pgserver.__file__).parent / "pginstall" / "bin" / "psql"
    out = subprocess.run(
        [str(psql), url, "-tAc", "SELECT extname FROM pg_extension ORDER BY 1"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["pg_trgm", "plpgsql", "vector"]
    assert "running" in _ok("db", "status")
    assert "up to date" in _ok("migrate")


def test_campaign_load_and_entity_commands(database_url: str) -> None:
    out = _ok("campaign", "load", str(SAMPLE_CAMPAIGN))
    assert "shattered-crown" in out and "16 entities" in out
    again = _ok("campaign", "load", str(SAMPLE_CAMPAIGN))
    assert "0 changed" in again
    listed = _ok("entity", "list", "--campaign", "shattered-crown", "--type", "npc")
    rows = [line.split("\t") for line in listed.strip().splitlines()]
    assert ["eldrinax", "npc", "Eldrinax"] in rows and all(r[1] == "npc" for r in rows)

    added = _ok(
        "entity",
        "add",
        "Mirela Voss",
        "npc",
        "--campaign",
        "shattered-crown",
        "--attr",
        "age=41",
        "--attr",
        "role=innkeeper",
        "--alias",
        "Mirela",
    )
    assert added.strip() == "mirela-voss\tnpc\tMirela Voss"
    from glyphoxa_pipelines.db import Database
    from glyphoxa_pipelines.memory import KnowledgeGraph

    with Database(database_url) as db:
        ent = KnowledgeGraph(db).get_entity("shattered-crown", "mirela-voss")
    assert ent.attributes == {"age": 41, "role": "innkeeper"} and ent.provenance == "dm"
    keywords = _ok("entity", "keywords", "--campaign", "shattered-crown").splitlines()
    assert "Mirela" in keywords and "Eldrinax" in keywords and len(keywords) == len(set(keywords))
    assert "removed mirela-voss" in _ok(
        "entity", "remove", "Mirela", "--campaign", "shattered-crown"
    )
    assert "nothing removed" in _ok("entity", "remove", "Mirela", "--campaign", "shattered-crown")


def test_unknown_campaign_and_bad_attr_fail_clearly(database_url: str) -> None:
    result = runner.invoke(app, ["entity", "list", "--campaign", "no-such-campaign"])
    assert result.exit_code == 2 and "unknown campaign 'no-such-campaign'" in result.output
    result = runner.invoke(
        app, ["entity", "add", "X", "npc", "-c", "shattered-crown", "--attr", "oops"]
    )
    assert result.exit_code != 0 and "key=value" in result.output
