"""`glyphoxa inspect ...`: each subcommand run on a small campaign, and none of them reading
another campaign's rows (the same ids are seeded in a second campaign)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.campaign.session_import import import_session
from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.db.operations import Op, execute
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Chunk,
    Entity,
    KnowledgeGraph,
    Relationship,
    SemanticIndex,
)
from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import suggest_spellings_op

runner = CliRunner()


def _rows(*args: str) -> list[list[str]]:
    result = runner.invoke(app, ["inspect", *args])
    assert result.exit_code == 0, result.output
    return [line.split("\t") for line in result.output.strip().splitlines() if line]


def _seed(db: Database, cid: str, tmp_path: Path, *, embed: bool) -> str:
    CampaignStore(db).upsert(Campaign(cid, cid))
    g = KnowledgeGraph(db)
    for eid, typ in (("vorn", "npc"), ("hask", "npc"), ("keep", "location"), ("guild", "faction")):
        g.add_entity(Entity(cid, eid, typ, eid.title()))
    g.add_relationship(Relationship(cid, "vorn", "keep", "lives_in"))
    g.add_relationship(Relationship(cid, "keep", "guild", "controlled_by"))
    g.add_relationship(Relationship(cid, "vorn", "hask", "plots_against", visibility="hidden"))
    g.add_relationship(Relationship(cid, "hask", "guild", "member_of", status="pending",
                                    confidence=0.4, provenance="extracted"))
    path = tmp_path / f"{cid}-night.txt"
    path.write_text("DM: The keep looms.\nRook: I climb the wall.\nMira: Quietly.\n")
    sid = import_session(db, cid, path).session.id

    def correct() -> Op[int]:
        n: int = yield execute(
            "UPDATE session_entries SET text = 'I climb the wall, carefully.' "
            "WHERE session_id = %s AND raw_text = 'I climb the wall.'", (sid,))
        return n

    assert db.run(correct()) == 1
    assert db.run(suggest_spellings_op(cid, sid, {"vorn": ["Vornn"], "keep": ["Keep"]})) == 1
    if embed:
        from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder

        emb = SentenceTransformerEmbedder()
        chunks = [Chunk(f"{sid}:0", cid, sid, 0, "The dragon sleeps under the mountain."),
                  Chunk(f"{sid}:1", cid, sid, 1, "The baker sells bread at dawn.")]
        index = SemanticIndex(db)
        index.register_model(emb.model_id, emb.dimension)
        index.index_chunks(chunks, emb.embed([c.text for c in chunks]), model=emb.model_id)
    return sid


@pytest.fixture
def campaign(db: Database, tmp_path: Path) -> tuple[str, str]:
    cid = "insp-" + uuid.uuid4().hex[:8]
    sid = _seed(db, cid, tmp_path, embed=True)
    _seed(db, cid + "-other", tmp_path, embed=False)  # same entity ids, another campaign
    return cid, sid


def test_sessions_corrections_entities(campaign: tuple[str, str]) -> None:
    cid, sid = campaign
    assert _rows("sessions", "-c", cid) == [
        [sid, "2020-01-01 19:00", "ended", "3", "1", "2", f"{cid}-night"]
    ]
    assert [r[1:] for r in _rows("corrections", "-c", cid)] == [
        [sid, "Rook", "I climb the wall.", "I climb the wall, carefully."]
    ]
    assert _rows("entities", "-c", cid) == [
        ["faction", "1", "0"], ["location", "1", "0"], ["npc", "2", "0"]
    ]


def test_embedding_coverage_and_nearest(campaign: tuple[str, str]) -> None:
    cid, sid = campaign
    (row,) = _rows("embeddings", "-c", cid)
    assert row[1:] == ["2/2", "0/3"]
    hits = _rows("nearest", "a sleeping dragon", "-c", cid, "--top", "2")
    assert [h[2] for h in hits] == [f"{sid}:0", f"{sid}:1"]
    assert float(hits[0][0]) < float(hits[1][0])


def test_relationships_review_and_walk(campaign: tuple[str, str]) -> None:
    cid, sid = campaign
    rels = _rows("relationships", "vorn", "-c", cid)
    assert {(r[1], r[2], r[3], r[6]) for r in rels} == {
        ("Vorn", "lives_in", "Keep", "public"), ("Vorn", "plots_against", "Hask", "hidden")
    }
    (pending,) = _rows("review", "-c", cid)
    # one heard spelling, this campaign's only ("Keep" is the entity's own name)
    assert _rows("spellings", "-c", cid) == [["vorn", "Vorn", "Vornn", sid]]
    assert pending[1:4] == ["Hask", "member_of", "Guild"] and pending[5] == "pending"
    walked = _rows("walk", "vorn", "-c", cid, "--depth", "2")
    reached = {r[1] for r in walked if r[0] == "entity"}
    assert {"keep", "guild"} <= reached  # two hops: vorn -> keep -> guild
    facts = {r[2] for r in walked if r[0] != "entity"}
    assert "controlled_by" in facts
    as_hask = _rows("walk", "vorn", "-c", cid, "--depth", "1", "--npc", "hask")
    assert "plots_against" not in {r[2] for r in as_hask if r[0] != "entity"}
    assert len({r[0] for r in rels}) == len(rels)  # one row per fact: no other campaign's
