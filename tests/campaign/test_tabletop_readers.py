"""Foundry, Roll20 and CSV readers: what they read, HTML as text, and bad files named by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from glyphoxa_pipelines.campaign.tabletop.detect import detect_format, read_world_file
from glyphoxa_pipelines.campaign.tabletop.html_text import html_to_text
from glyphoxa_pipelines.campaign.tabletop.world import TabletopFileError

FIXTURES = Path(__file__).parent / "fixtures"


def _by_name(path: Path) -> dict[str, object]:
    world, _ = read_world_file(path)
    return {e.name: e for e in world.entities}


def test_html_becomes_text() -> None:
    html = ("<h1>Title</h1><p>One &amp; <b>two</b></p><style>p{}</style><script>x()</script>"
            "<ul><li>a</li><li>b</li></ul><p>See @UUID[Actor.x]{Brannoc} and @Check[dex]</p>")
    assert html_to_text(html) == "Title\nOne & two\na\nb\nSee Brannoc and"


def test_formats_are_told_by_content() -> None:
    assert detect_format((FIXTURES / "foundry_world.json").read_text()) == "foundry"
    assert detect_format((FIXTURES / "roll20_export.json").read_text()) == "roll20"
    assert detect_format((FIXTURES / "entities.csv").read_text()) == "csv"
    assert detect_format((FIXTURES / "design_campaign.yaml").read_text()) == "yaml"


def test_foundry_world() -> None:
    world, _ = read_world_file(FIXTURES / "foundry_world.json")
    ents = {e.name: e for e in world.entities}
    assert {n: e.type for n, e in ents.items()} == {
        "Ledger of Debts": "item",
        "Thessaly Vorn": "npc",
        "Brannoc": "player",
        "The Drowned Bell": "concept",
        "Ironhold Archive": "location",
    }
    thessaly = ents["Thessaly Vorn"]
    assert thessaly.attributes == {
        "alignment": "Lawful Neutral",
        "race": "Human",
        "description": "Keeper of the Ironhold records & maps.\nDistrusts Brannoc.",
    }
    assert thessaly.aliases == ["The Archivist"]
    assert ents["The Drowned Bell"].attributes["description"] == "Legend\nIt rings before storms."
    assert ents["Ironhold Archive"].aliases == ["The Archive"]
    assert {(f.source_id, f.rel_type, f.target_id) for f in world.facts} == {
        ("thessaly-vorn", "owns", "ledger-of-debts"),  # the dagger is no world item: no fact
        ("thessaly-vorn", "located_at", "ironhold-archive"),
    }


def test_roll20_export_keeps_gm_notes_apart() -> None:
    ents = _by_name(FIXTURES / "roll20_export.json")
    ossa = ents["Mother Ossa"]
    assert ossa.type == "npc" and ents["Kiri"].type == "player"  # type: ignore[attr-defined]
    assert ossa.attributes == {  # type: ignore[attr-defined]
        "alignment": "Neutral Evil",
        "personality": "Warm in public, cold in private",
        "occupation": "Matron",
        "description": "Runs the orphanage on Gull Street.",
    }
    assert ossa.dm_notes == "Secretly the smugglers' fence."  # type: ignore[attr-defined]
    letter = ents["Letter to the Harbourmaster"]
    assert letter.type == "concept"  # type: ignore[attr-defined]
    assert "Written by Ossa" not in str(letter.attributes)  # type: ignore[attr-defined]
    assert letter.dm_notes == "Written by Ossa."  # type: ignore[attr-defined]


def test_csv_sheet() -> None:
    ents = _by_name(FIXTURES / "entities.csv")
    eld = ents["Eldrinax"]
    assert eld.type == "npc"  # type: ignore[attr-defined]
    assert eld.aliases == ["The Old Wizard", "Eld"]  # type: ignore[attr-defined]
    assert eld.attributes == {  # type: ignore[attr-defined]
        "occupation": "hermit",
        "alignment": "chaotic neutral",
        "description": "Paranoid wizard,\nspeaks in riddles",
    }
    assert eld.dm_notes == "Knows where the bell is"  # type: ignore[attr-defined]
    assert ents["Ironhold"].attributes == {"description": "Dwarven mining city"}  # type: ignore[attr-defined]


def test_csv_semicolons(tmp_path: Path) -> None:
    f = tmp_path / "s.csv"
    f.write_text("name;type;home\nVex;npc;Whitestone\n")
    world, _ = read_world_file(f)
    assert world.entities[0].attributes == {"home": "Whitestone"}


@pytest.mark.parametrize(
    ("name", "content", "fmt", "expected"),
    [
        ("bad.json", '{"actors": [\n  {"name": "A"},\n  oops\n]}', "foundry",
         "bad.json:3: invalid JSON"),
        ("deep.json", '{"actors": ' + "[" * 100_000 + "]" * 100_000 + "}", "foundry",
         "deep.json: invalid JSON: nested too deeply"),
        ("noname.json", '{"actors": [{"name": "A"}, {"type": "npc"}]}', "foundry",
         "noname.json: actors[1]: an entry without a name"),
        ("list.json", '{"characters": 5}', "roll20", "list.json: characters: expected a list"),
        ("rows.csv", "name,type\nA,npc\nB,npc,extra\n", "csv", "rows.csv:3: 3 cells"),
        ("multi.csv", 'name,type,description\nA,npc,"two\nlines"\nB,9npc,x\n', "csv",
         "multi.csv:4: type '9npc' must start with a letter"),
        ("header.csv", "title,kind\nA,npc\n", "csv", "header.csv:1: the header needs"),
        ("long.csv", "name,type\n" + "N" * 300 + ",npc\n", "csv", "long.csv:2: name is 300"),
        ("empty.json", "{}", "foundry", "empty.json: no entities found"),
    ],
)
def test_bad_files_name_file_and_line(
    tmp_path: Path, name: str, content: str, fmt: str, expected: str
) -> None:
    f = tmp_path / name
    f.write_text(content)
    with pytest.raises(TabletopFileError) as err:
        read_world_file(f, fmt)
    assert str(err.value).startswith(str(tmp_path / expected)), str(err.value)


def test_a_huge_file_is_refused_by_size(tmp_path: Path) -> None:
    f = tmp_path / "huge.json"
    with f.open("wb") as out:
        out.truncate(65 * 1024 * 1024)
    with pytest.raises(TabletopFileError, match="the limit is"):
        read_world_file(f, "foundry")
