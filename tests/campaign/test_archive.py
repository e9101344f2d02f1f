"""Campaign archives: every campaign table in them, the demo campaign round-trips (same rows,
same hot contexts, same tool answers), and a corrupt or foreign archive writes nothing."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.campaign.archive.dump import CampaignDump
from glyphoxa_pipelines.campaign.archive.tables import NOT_ARCHIVED, TABLE_NAMES
from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import suggest_spellings_op
from glyphoxa_pipelines.memory.spelling_suggestions import dismiss_spelling_op

runner = CliRunner()
DEMO = "shattered-crown"


def _run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == code, result.output
    return result.output


def test_archive_names_every_campaign_table(db: Database) -> None:
    with db.connection() as conn:
        scoped = {r[0] for r in conn.execute(
            """SELECT table_name FROM information_schema.columns
               WHERE table_schema = current_schema() AND column_name = 'campaign_id'""")}
    assert scoped | {"campaigns"} == TABLE_NAMES | NOT_ARCHIVED
    assert not TABLE_NAMES & NOT_ARCHIVED


async def _answers(url: str, sessions: list[str]) -> dict[str, Any]:
    from glyphoxa_pipelines.config import Settings
    from realtime.service import MemoryService
    from realtime.tools.scope import ToolScope

    settings = Settings.from_env()
    svc = MemoryService(url, settings=settings, spool_dir=settings.home / "spool-archive-test")
    await svc.open(warm_embedder=False)
    try:
        out: dict[str, Any] = {}
        for npc in ("eldrinax", "captain-orlen-hask"):
            ctx = await svc.hot_context(sessions[-1], npc)
            out[f"hot:{npc}"] = (ctx.prompt, ctx.facts, ctx.scene, ctx.recent)
        scope = ToolScope(DEMO, sessions[-1], "eldrinax")
        for name, args in (
            ("memory.query_entities", {"name": "Grimjaw"}),
            ("memory.search_sessions", {"query": "Who forged the hammer?"}),
            ("memory.get_session_summary", {"session": sessions[0]}),
            ("memory.search_graph", {"query": "the hammer", "entity": "Grimjaw"}),
            ("memory.search_facts", {"query": "hammer"}),
        ):
            result = await svc.call_tool(name, args, scope)
            assert not result.get("error") and not result.get("degraded"), (name, result)
            out[name] = json.loads(json.dumps(_without_timings(result), default=str))
        return out
    finally:
        await svc.close()


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if not (k.endswith("_ms") or k in ("elapsed", "latency", "took"))}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.slow
async def test_demo_campaign_round_trips(db: Database, database_url: str, tmp_path: Path) -> None:
    _run("demo")
    dump = CampaignDump(db)
    sessions = [s["id"] for s in dump.rows(DEMO)[0]["sessions"]]
    # The DM's answers to heard spellings travel too: one waiting, one dismissed.
    assert db.run(suggest_spellings_op(DEMO, sessions[0],
                                       {"grimjaw": ["Grimjow", "Grimjew"]})) == 2
    db.run(dismiss_spelling_op(DEMO, "grimjaw", "Grimjew"))
    before_rows, models, _ = dump.rows(DEMO)
    assert before_rows["spelling_suggestions"] and before_rows["spelling_dismissals"]
    assert before_rows["chunk_embeddings"] and before_rows["entry_embeddings"]
    assert before_rows["recaps"] and before_rows["session_summaries"]
    before = await _answers(database_url, sessions)

    archive = tmp_path / "demo.tar.gz"
    _run("campaign", "export", DEMO, "-o", str(archive))
    # A copy of a campaign in the same home is refused by its session ids; nothing written.
    out = _run("campaign", "import", str(archive), "--as", "demo-copy", code=2)
    assert "already exists in this home" in out
    assert "demo-copy" not in _run("campaign", "list")

    with db.connection() as conn:
        conn.execute("DELETE FROM campaigns WHERE id = %s", (DEMO,))
    assert "imported" in _run("campaign", "import", str(archive))
    after_rows, after_models, _ = dump.rows(DEMO)
    assert after_rows == before_rows
    assert after_models == models
    assert await _answers(database_url, sessions) == before
    _run("campaign", "import", str(archive), code=2)  # the campaign exists now: refused


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_corrupt_and_foreign_archives_write_nothing(db: Database, tmp_path: Path) -> None:
    with db.connection() as conn:
        conn.execute("INSERT INTO campaigns (id, name) VALUES ('arch-src', 'Source') "
                     "ON CONFLICT DO NOTHING")
        conn.execute("INSERT INTO entities (campaign_id, id, type, name) VALUES "
                     "('arch-src', 'vex', 'npc', 'Vex') ON CONFLICT DO NOTHING")
    good = tmp_path / "good.tar.gz"
    _run("campaign", "export", "arch-src", "-o", str(good))
    with tarfile.open(good, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]

    tampered = dict(members)
    tampered["tables/entities.jsonl"] = members["tables/entities.jsonl"].replace(b"Vex", b"Vax")
    _tar(tmp_path / "tampered.tar.gz", tampered)
    foreign = {"manifest.json": b'{"format": "something-else"}'}
    _tar(tmp_path / "foreign.tar.gz", foreign)
    extra = dict(members, **{"../../etc/evil": b"x"})
    _tar(tmp_path / "extra.tar.gz", extra)
    (tmp_path / "truncated.tar.gz").write_bytes(good.read_bytes()[:200])
    (tmp_path / "notar.tar.gz").write_bytes(gzip.compress(b"hello"))
    cases = {
        "tampered": "member tables/entities.jsonl is corrupt",
        "foreign": "not a Glyphoxa campaign archive",
        "extra": "member ../../etc/evil is not in the manifest",
        "truncated": "not a readable gzip tar archive",
        "notar": "not a readable gzip tar archive",
    }
    for name, message in cases.items():
        out = _run("campaign", "import", str(tmp_path / f"{name}.tar.gz"), "--as", "arch-dst",
                   code=2)
        assert message in out, (name, out)
    assert "arch-dst" not in _run("campaign", "list")
    assert "arch-dst" in _run("campaign", "import", str(good), "--as", "arch-dst")
    with db.connection() as conn:
        assert conn.execute("SELECT name FROM entities WHERE campaign_id = 'arch-dst'"
                            ).fetchall() == [("Vex",)]


def test_taken_entry_and_fact_numbers_are_renumbered_with_their_references(
    db: Database, tmp_path: Path
) -> None:
    with db.connection() as conn:
        conn.execute("INSERT INTO campaigns (id, name) VALUES ('renum', 'R')")
        conn.execute("INSERT INTO sessions (id, campaign_id) VALUES ('renum-s1', 'renum')")
        entries = [r[0] for r in conn.execute(
            """INSERT INTO session_entries (campaign_id, session_id, idempotency_key,
                   raw_text, text)
               VALUES ('renum', 'renum-s1', 'k1', 'a', 'a'), ('renum', 'renum-s1', 'k2', 'b', 'b')
               RETURNING id""").fetchall()]
        conn.execute(
            """INSERT INTO chunks (id, campaign_id, session_id, seq, text, first_entry_id,
                   last_entry_id) VALUES ('renum-s1#0', 'renum', 'renum-s1', 0, 'a b', %s, %s)""",
            entries)
        conn.execute("INSERT INTO entry_embeddings (entry_id, model, campaign_id, session_id, "
                     "embedding) VALUES (%s, 'all-MiniLM-L6-v2', 'renum', 'renum-s1', %s)",
                     (entries[1], "[" + ",".join(["0.5"] * 384) + "]"))
        conn.execute("INSERT INTO entities (campaign_id, id, type, name) VALUES "
                     "('renum', 'a', 'npc', 'A'), ('renum', 'b', 'location', 'B')")
        new = conn.execute("INSERT INTO relationships (campaign_id, source_id, rel_type, "
                           "target_id) VALUES ('renum', 'a', 'lives_in', 'b') RETURNING id"
                           ).fetchone()[0]
        conn.execute("INSERT INTO relationships (campaign_id, source_id, rel_type, target_id, "
                     "invalidated_at, invalidated_by) VALUES ('renum', 'a', 'lives_in', 'a', "
                     "now(), %s)", (new,))
    archive = tmp_path / "renum.tar.gz"
    _run("campaign", "export", "renum", "-o", str(archive))
    with db.connection() as conn:
        conn.execute("DELETE FROM campaigns WHERE id = 'renum'")
        # another campaign takes the freed numbers
        conn.execute("INSERT INTO campaigns (id, name) VALUES ('renum-other', 'O')")
        conn.execute("INSERT INTO sessions (id, campaign_id) VALUES ('renum-o1', 'renum-other')")
        conn.execute(
            """INSERT INTO session_entries (id, campaign_id, session_id, idempotency_key,
                   raw_text, text) OVERRIDING SYSTEM VALUE
               VALUES (%s, 'renum-other', 'renum-o1', 'k', 'x', 'x')""", (entries[1],))
    assert "renumbered" in _run("campaign", "import", str(archive))
    with db.connection() as conn:
        got = [r[0] for r in conn.execute(
            "SELECT id FROM session_entries WHERE campaign_id = 'renum' ORDER BY id")]
        assert entries[1] not in got and len(got) == 2
        assert conn.execute("SELECT first_entry_id, last_entry_id FROM chunks "
                            "WHERE id = 'renum-s1#0'").fetchone() == tuple(got)
        assert conn.execute("SELECT entry_id FROM entry_embeddings WHERE campaign_id = 'renum'"
                            ).fetchone()[0] == got[1]
        facts = conn.execute("SELECT id, target_id, invalidated_by FROM relationships "
                             "WHERE campaign_id = 'renum' ORDER BY target_id").fetchall()
        current = next(f for f in facts if f[1] == "b")
        assert next(f for f in facts if f[1] == "a")[2] == current[0]
