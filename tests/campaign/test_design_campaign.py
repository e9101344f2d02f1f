"""The design's own campaign file loads verbatim; NPC identity comes from its attributes."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.campaign.campaign_file import (
    CampaignFileError,
    parse_campaign_file,
    parse_campaign_text,
)
from glyphoxa_pipelines.campaign.campaign_loader import CampaignChoiceError, CampaignLoader
from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import KnowledgeGraph
from glyphoxa_pipelines.memory.relation_types import (
    DESIGN_RELATION_TYPES,
    normalize_type_name,
)
from realtime.hot_context import assemble

DESIGN_FILE = Path(__file__).parent / "fixtures" / "design_campaign.yaml"
runner = CliRunner()


def _cid() -> str:
    return f"design-{uuid.uuid4().hex[:8]}"


def test_design_file_parses_without_a_campaign_block() -> None:
    parsed = parse_campaign_file(DESIGN_FILE)
    assert parsed.campaign is None
    assert [(e.name, e.type) for e in parsed.entities] == [
        ("Eldrinax", "npc"),
        ("Ironhold", "location"),
    ]
    assert parsed.relationships[0].type == "located_at"


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        *[(t.upper(), t) for t in DESIGN_RELATION_TYPES],
        ("located_at", "located_at"),
        ("Located At", "located_at"),
        ("quest-giver", "quest_giver"),
        ("sworn enemy of", "sworn_enemy_of"),
        ("Owes 300 gold to", "owes_300_gold_to"),
    ],
)
def test_relation_types_normalize_to_the_stored_form(written: str, stored: str) -> None:
    assert normalize_type_name(written) == stored


def test_a_bad_type_names_its_line_with_brackets_intact() -> None:
    text = "entities:\n  - {name: A, type: npc}\nrelationships:\n  - {source: A, target: A, type: '[42]'}\n"
    with pytest.raises(CampaignFileError) as err:
        parse_campaign_text(text, "w.yaml")
    assert str(err.value).startswith("w.yaml:4: relationships.0.type: type '[42]'")
    result = runner.invoke(app, ["campaign", "load", "-", "-c", "x"])
    assert result.exit_code == 2  # "-" is no file: refused by name, not a traceback


def test_cli_error_keeps_square_brackets(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("entities:\n  - {name: A, type: npc, id: 'Bad [a-z] id'}\n")
    result = runner.invoke(app, ["campaign", "load", str(bad), "-c", "x"])
    assert result.exit_code == 2
    assert "[a-z0-9]" in result.output  # rich markup did not swallow the pattern


def test_design_file_loads_into_the_campaign_chosen_at_load_time(db: Database) -> None:
    cid = _cid()
    result = runner.invoke(app, ["campaign", "load", str(DESIGN_FILE), "-c", cid])
    assert result.exit_code == 0, result.output
    graph = KnowledgeGraph(db)
    rels = graph.get_relationships(cid, "eldrinax")
    assert [(r.source_id, r.rel_type, r.target_id) for r in rels] == [
        ("eldrinax", "located_at", "ironhold")
    ]
    again = runner.invoke(app, ["campaign", "load", str(DESIGN_FILE), "-c", cid])
    assert again.exit_code == 0 and "0 changed" in again.output  # reload: no change


def test_campaign_must_be_chosen_and_must_agree(db: Database) -> None:
    parsed = parse_campaign_file(DESIGN_FILE)
    with pytest.raises(CampaignChoiceError, match="--campaign"):
        CampaignLoader(db).load(parsed)
    named = parse_campaign_text("campaign: {id: one, name: One}\n")
    with pytest.raises(CampaignChoiceError, match="'one', not 'two'"):
        CampaignLoader(db).load(named, "two")


def _ctx(attributes: dict[str, object], profile: dict[str, object] | None = None) -> str:
    npc = {"id": "thessaly-vorn", "name": "Thessaly Vorn", "type": "npc",
           "attributes": attributes, "profile": profile}
    ctx = assemble(campaign_id="c", session_id="s", npc=npc, facts=[], scene={},
                   scene_entities=[], recent=[], memories=[], budget=2000)
    return ctx.prompt


def test_identity_block_renders_the_design_attributes_in_order() -> None:
    prompt = _ctx({
        "alignment": "lawful neutral",
        "home": "Ironhold",
        "personality": "precise, suspicious of magic",
        "speaking_style": "clipped, formal",
        "appearance": "ink-stained fingers, grey braid",
        "occupation": "archivist",
        "description": "Keeper of the Ironhold records.",
    })
    lines = prompt.splitlines()
    start = lines.index("You are Thessaly Vorn (npc).")
    assert lines[start + 1 : start + 8] == [
        "Keeper of the Ironhold records.",
        "Occupation: archivist",
        "Appearance: ink-stained fingers, grey braid",
        "Speaking style: clipped, formal",
        "Personality: precise, suspicious of magic",
        "Alignment: lawful neutral",
        "Home: Ironhold",
    ]


def test_profile_wins_over_attribute_of_the_same_name() -> None:
    prompt = _ctx({"personality": "from the file", "occupation": ["smith", "spy"]},
                  {"personality": "tuned by the DM", "emotional_state": "wary"})
    assert "Personality: tuned by the DM" in prompt
    assert "from the file" not in prompt
    assert "Occupation: smith, spy" in prompt
    assert prompt.index("Personality:") < prompt.index("Current mood: wary")


@pytest.mark.parametrize("command", ["load", "import"])
def test_a_bad_campaign_id_is_refused_by_name(command: str) -> None:
    path = DESIGN_FILE if command == "load" else DESIGN_FILE.with_name("entities.csv")
    result = runner.invoke(app, ["campaign", command, str(path), "-c", "Bad Id"])
    assert result.exit_code == 2, result.output
    assert "'Bad Id' is not a campaign id" in result.output
