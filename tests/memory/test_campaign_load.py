"""Campaign YAML: idempotent loading, updates, and errors that load nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from glyphoxa_pipelines.campaign.campaign_file import (
    CampaignFileError,
    parse_campaign_file,
    parse_campaign_text,
)
from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN
from glyphoxa_pipelines.memory import CampaignStore, KnowledgeGraph


def _rows(db: Database, cid: str) -> tuple[list[tuple], list[tuple]]:
    with db.connection() as conn:
        ents = conn.execute(
            "SELECT id, type, name, aliases, attributes, updated_at FROM entities "
            "WHERE campaign_id = %s ORDER BY id",
            (cid,),
        ).fetchall()
        rels = conn.execute(
            "SELECT id, source_id, rel_type, target_id, visibility, known_by, confidence "
            "FROM relationships WHERE campaign_id = %s ORDER BY id",
            (cid,),
        ).fetchall()
    return ents, rels


def _doc(cid: str, extra_entity: str = "", rel_type: str = "lives_in") -> str:
    return textwrap.dedent(
        f"""\
        campaign: {{id: {cid}, name: Test}}
        entities:
          - {{name: Eldrinax, type: npc, aliases: [the Old Wizard]}}
          - {{name: Ironhold, type: location}}
          - {{name: Grimjaw, type: npc}}
        {extra_entity}
        relationships:
          - {{source: the old wizard, target: Ironhold, type: {rel_type}}}
          - {{source: Grimjaw, target: eldrinax, type: fears, visibility: [Grimjaw]}}
        npcs:
          - {{name: Eldrinax, personality: cryptic, behavior_rules: [riddles]}}
        """
    )


def test_sample_campaign_meets_the_demo_minimum() -> None:
    parsed = parse_campaign_file(SAMPLE_CAMPAIGN)
    assert len(parsed.entities) >= 12
    assert len({e.type for e in parsed.entities}) >= 5
    assert len(parsed.relationships) >= 20
    assert len(parsed.npcs) >= 3
    assert any(r.visibility != "public" for r in parsed.relationships)


def test_load_is_idempotent_and_updates_what_changed(db: Database, campaign_id: str) -> None:
    cid = campaign_id + "-yaml"
    loader = CampaignLoader(db)
    first = loader.load(parse_campaign_text(_doc(cid)))
    assert (first.entities, first.relationships, first.npcs) == (3, 2, 1)
    before = _rows(db, cid)
    second = loader.load(parse_campaign_text(_doc(cid)))
    assert second.entities_changed == 0
    assert _rows(db, cid) == before  # nothing changed, not even timestamps or ids
    g = KnowledgeGraph(db)
    secret = g.get_relationships(cid, "grimjaw")[0]
    assert secret.visibility == "secret" and secret.known_by == ["grimjaw"]
    assert g.get_npc_profile(cid, "eldrinax").behavior_rules == ["riddles"]

    changed = _doc(cid, extra_entity="  - {name: Vexmira, type: npc}", rel_type="rules")
    report = loader.load(parse_campaign_text(changed))
    assert report.entities_changed == 1 and report.removed_relationships == 1
    assert [r.rel_type for r in g.get_relationships(cid, "eldrinax")] == ["rules"]
    smaller = (
        _doc(cid)
        .replace("  - {name: Grimjaw, type: npc}\n", "")
        .replace(
            "  - {source: Grimjaw, target: eldrinax, type: fears, visibility: [Grimjaw]}\n", ""
        )
    )
    report = loader.load(parse_campaign_text(smaller))
    assert report.removed_entities == 2  # Grimjaw and Vexmira left the file
    assert g.get_entity(cid, "grimjaw") is None


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (
            "campaign: {id: c1, name: X}\nentities:\n  - name: A\n    type: npc\n    colour: red\n",
            5,
            "unknown key",
        ),
        (
            "campaign: {id: c1, name: X}\nrelationships:\n  - {source: A, target: B, type: knows}\n",
            3,
            "unknown entity 'A'",
        ),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: npc, aliases: 5}\n",
            3,
            "valid list",
        ),
        ("campaign: {id: c1, name: X}\nentities: [\n", 3, "invalid YAML"),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: npc}\n  - {name: a, type: npc}\n",
            4,
            "defined twice",
        ),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: location}\nnpcs:\n  - {name: A}\n",
            5,
            "not an npc",
        ),
        ("campaign: {id: c1, name: X}\ncampaign: {id: c2, name: Y}\n", 2, "duplicate key"),
        ("campaign: {id: C 1, name: X}\n", 1, "campaign.id"),
        ("- just\n- a list\n", 1, "expected a mapping"),
    ],
)
def test_malformed_files_name_line_and_problem(text: str, line: int, problem: str) -> None:
    with pytest.raises(CampaignFileError) as info:
        parse_campaign_text(text, "bad.yaml")
    assert f"bad.yaml:{line}:" in str(info.value)
    assert problem in str(info.value)


def test_bad_file_via_cli_loads_nothing(db: Database, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glyphoxa_pipelines.cli import app

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "campaign: {id: never-loaded, name: X}\nentities:\n  - {name: A, type: npc}\n"
        "relationships:\n  - {source: A, target: Nobody, type: knows}\n"
    )
    result = CliRunner().invoke(app, ["campaign", "load", str(bad)])
    assert result.exit_code == 2
    assert "bad.yaml:5" in result.output and "unknown entity 'Nobody'" in result.output
    assert CampaignStore(db).get("never-loaded") is None
    missing = CliRunner().invoke(app, ["campaign", "load", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
