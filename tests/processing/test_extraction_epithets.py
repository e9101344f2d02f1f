"""A capitalised epithet in apposition to a name is that name's alias, not an entity of its
own (issue 16): "Bahamut, the Platinum Dragon", "the Platinum Dragon, Bahamut". Near misses:
a lower-case epithet, a list, a place phrase before its clause. Pure functions over plain
entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.correction_targets import correction_targets
from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_nlp import entries


def _entities(*dm: str, world: list[Entity] | None = None) -> dict[str, list[str]]:
    result = extract_knowledge(entries([("MATT", t) for t in dm]), world or [])
    out = {e.name: list(e.aliases) for e in result.entities}
    for entity_id, aliases in result.new_aliases.items():
        out.setdefault(entity_id, []).extend(aliases)
    return out


def test_an_epithet_beside_a_name_is_its_alias_in_either_order() -> None:
    found = _entities("Kima is a paladin of Bahamut, the Platinum Dragon, who guards her.",
                      "The symbol of the Platinum Dragon shines.", "Bahamut is silent.")
    assert "Platinum Dragon" not in found and "Platinum Dragon" in found["Bahamut"]
    found = _entities("The Raven Queen, Matrona, watches the dead.", "Matrona waits.",
                      "The Raven Queen is silent.")
    assert "Raven Queen" not in found and "Raven Queen" in found["Matrona"]


def test_a_graph_name_takes_the_epithet_as_a_new_alias() -> None:
    world = [Entity("c1", "bahamut", "concept", "Bahamut")]
    found = _entities("Kima is a paladin of Bahamut, the Platinum Dragon of justice.",
                      "The Platinum Dragon is silent.", world=world)
    assert found.get("bahamut") == ["Platinum Dragon"] and "Platinum Dragon" not in found


def test_no_alias_from_a_common_noun_a_list_or_a_place_phrase() -> None:
    found = _entities("Grog, the barbarian, grins.", "Grog waits.")
    assert found.get("Grog", []) == []
    found = _entities("You see Kima, the Ranger Guild, and Scanlan at the gate.",
                      "The Ranger Guild waits. Kima waits. Kima nods.")
    assert "Ranger Guild" not in found.get("Kima", [])
    found = _entities("You meet Kima, the Silver Knight, and Scanlan at the gate.",
                      "The Silver Knight waits. Kima waits. Kima nods.")
    assert "Silver Knight" not in found.get("Kima", [])
    found = _entities("In the Greyspine Mountains, Kraghammer, the city, is deep.",
                      "The Greyspine Mountains are cold. Kraghammer is a city.")
    assert "Greyspine Mountains" not in found.get("Kraghammer", [])


def test_an_epithet_alias_feeds_the_corrector_only_when_it_recurs() -> None:
    result = extract_knowledge(entries([
        ("MATT", "Kima is a paladin of Bahamut, the Platinum Dragon, who guards her."),
        ("MATT", "Bahamut is silent."),
    ]), [])
    [bahamut] = [e for e in result.entities if e.name == "Bahamut"]
    assert bahamut.aliases == ["Platinum Dragon"] and bahamut.provenance == "extracted"
    once = {("bahamut", "Bahamut"): 2, ("bahamut", "Platinum Dragon"): 1}
    assert [e.aliases for e in correction_targets([bahamut], once)] == [[]]
    twice = {**once, ("bahamut", "Platinum Dragon"): 2}
    assert [e.aliases for e in correction_targets([bahamut], twice)] == [["Platinum Dragon"]]
