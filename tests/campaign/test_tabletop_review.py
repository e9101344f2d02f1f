"""Imported worlds wait for the DM: dry run, staging once, accepting all or some, discarding."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database

FIXTURES = Path(__file__).parent / "fixtures"
runner = CliRunner()


def _run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


def _count(db: Database, cid: str) -> tuple[int, int, int]:
    with db.connection() as conn:
        return conn.execute(
            """SELECT (SELECT count(*) FROM entities WHERE campaign_id = %(c)s),
                      (SELECT count(*) FROM relationships WHERE campaign_id = %(c)s),
                      (SELECT count(*) FROM import_batches WHERE campaign_id = %(c)s)""",
            {"c": cid},
        ).fetchone()


def _batch(output: str) -> str:
    m = re.search(r"import batch ([0-9a-f]{16})", output)
    assert m, output
    return m.group(1)


def test_foundry_world_through_review(db: Database) -> None:
    cid = f"vtt-{uuid.uuid4().hex[:8]}"
    world = str(FIXTURES / "foundry_world.json")
    out = _run("campaign", "import", "--format", "foundry", world, "-c", cid, "--dry-run")
    assert "5 entities" in out and "dry run: nothing was written" in out
    assert _count(db, cid) == (0, 0, 0)

    batch = _batch(_run("campaign", "import", "--format", "foundry", world, "-c", cid))
    assert _count(db, cid) == (0, 0, 1)  # staged, not in the world
    again = _run("campaign", "import", world, "-c", cid)  # format told by content
    assert "nothing changed" in again and _count(db, cid) == (0, 0, 1)
    assert "thessaly-vorn" in _run("campaign", "pending", "-c", cid)

    out = _run("campaign", "accept", batch, "-c", cid, "--entity", "The Archivist",
               "--entity", "ironhold archive")
    assert "2 entities added, 1 facts" in out and "batch pending" in out
    out = _run("campaign", "accept", batch, "-c", cid)
    assert "3 entities added, 1 facts" in out and "batch accepted" in out
    assert _count(db, cid) == (5, 2, 1)
    with db.connection() as conn:
        row = conn.execute(
            "SELECT provenance, attributes->>'alignment' FROM entities "
            "WHERE campaign_id = %s AND id = 'thessaly-vorn'", (cid,)
        ).fetchone()
    assert row == ("dm", "Lawful Neutral")
    _run("campaign", "discard", batch, "-c", cid, code=2)  # already decided
    assert "nothing changed" in _run("campaign", "import", world, "-c", cid)
    assert _count(db, cid) == (5, 2, 1)


def test_roll20_gm_notes_never_enter_the_graph(db: Database) -> None:
    cid = f"vtt-{uuid.uuid4().hex[:8]}"
    batch = _batch(_run("campaign", "load", str(FIXTURES / "roll20_export.json"), "-c", cid))
    _run("campaign", "accept", batch, "-c", cid)
    with db.connection() as conn:
        texts = conn.execute(
            "SELECT name, attributes::text FROM entities WHERE campaign_id = %s", (cid,)
        ).fetchall()
    assert len(texts) == 3
    assert not any("fence" in t or "Written by Ossa" in t for _, t in texts)


def test_discard_and_existing_entities_left_alone(db: Database) -> None:
    cid = f"vtt-{uuid.uuid4().hex[:8]}"
    _run("entity", "add", "Ironhold", "location", "-c", cid, code=2)  # no campaign yet
    csv = str(FIXTURES / "entities.csv")
    batch = _batch(_run("campaign", "import", "-f", "csv", csv, "-c", cid))
    _run("entity", "add", "Ironhold", "location", "-c", cid, "--attr", "ruler=Queen Dagna")
    out = _run("campaign", "accept", batch, "-c", cid, "-e", "ironhold")
    assert "0 entities added" in out and "1 already in the world" in out
    with db.connection() as conn:
        attrs = conn.execute("SELECT attributes FROM entities WHERE campaign_id = %s "
                             "AND id = 'ironhold'", (cid,)).fetchone()[0]
    assert attrs == {"ruler": "Queen Dagna"}  # the import never overwrites the world
    assert "1 entities never entered" in _run("campaign", "discard", batch, "-c", cid)
    assert _count(db, cid)[0] == 1
    _run("campaign", "accept", batch, "-c", cid, code=2)
    assert "no import batches waiting" in _run("campaign", "pending", "-c", cid)


def test_a_bad_file_stages_nothing(db: Database, tmp_path: Path) -> None:
    cid = f"vtt-{uuid.uuid4().hex[:8]}"
    bad = tmp_path / "bad.csv"
    bad.write_text("name,type\nA,npc\n,npc\n")
    result = runner.invoke(app, ["campaign", "import", str(bad), "-c", cid])
    assert result.exit_code == 2
    assert f"{bad}:3: an entry without a name" in result.output
    assert _count(db, cid) == (0, 0, 0)
