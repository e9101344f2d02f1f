"""Names the extractor used to miss (issue 16, eleventh pass): a one-word name only ever said
as "the X" is a place ("the Underdark"), or in the plural a family ("the Greyspines"); a name
only ever said with a lower-case head noun after it is named with it ("the Mithril mines");
"a -- bear named X" across the dash a picked-up sentence is joined with; one mention is
enough for a person introduced by kin or standing ("his uncle Kevdak"); "X becomes a bear"
types X. Each rule with a near miss that must read nothing. Pure functions over plain
entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS
from tests.processing.test_extraction_nlp import entries


def types(lines: list[tuple[str, str]], world: list[Entity] | None = None) -> dict[str, str]:
    result = extract_knowledge(entries(lines), world or [])
    return {e.name: e.type for e in result.entities}


def test_a_name_only_ever_said_with_the_is_a_place() -> None:
    # no locative cue ("into X") and no label from the parser: only "the" says it
    lines = [("MATT", "This is technically the crust of the Umbracrust."),
             ("MATT", "The Umbracrust is cold and quiet.")]
    assert types(lines).get("Umbracrust") == "location"


def test_a_family_said_with_the_is_a_faction() -> None:
    lines = [("MATT", "He says, \"The Vostrakes are no friends of mine.\""),
             ("MATT", "You go to meet the Vostrakes at dawn.")]
    assert types(lines).get("Vostrakes") == "faction"


def test_a_name_also_said_bare_is_no_place() -> None:
    # the same word without "the": a person's name, whatever the other mention says
    lines = [("MATT", "This is technically the crust of the Umbracrust."),
             ("MATT", "Umbracrust turns to you and grins.")]
    assert types(lines).get("Umbracrust") != "location"


def test_a_name_with_its_head_noun_is_named_with_it() -> None:
    lines = [("MATT", "She disappeared into the Korvash mines beneath the lower circle.")]
    assert types(lines) == {"Korvash mines": "location"}


def test_a_name_also_said_alone_keeps_its_own_name() -> None:
    lines = [("MATT", "She disappeared into the Korvash mines beneath the lower circle."),
             ("MATT", "Korvash nods at you. Korvash says, \"Go.\"")]
    found = types(lines)
    assert "Korvash mines" not in found
    assert found.get("Korvash") == "npc"


def test_a_known_name_with_a_head_noun_is_still_the_known_one() -> None:
    world = [Entity("c1", "umbracrust", "location", "Umbracrust")]
    lines = [("MATT", "You travel deeper into the Umbracrust caverns below.")]
    assert types(lines, world) == {}


BEAR = [("MATT", "Trinket is back with the party."), ("MATT", "Trinket growls at the door.")]


def test_named_reads_across_the_dash_of_a_picked_up_sentence() -> None:
    lines = [*CALLS, ("LAURA", "I play Vex'ahlia. And I have an amazing--"), ("SAM", "Ranger!"),
             ("LAURA", "-- companion bear named Trinket. He is the best."), *BEAR]
    assert types(lines).get("Trinket") == "creature"


def test_named_is_not_read_when_another_speaker_finishes_the_sentence() -> None:
    lines = [*CALLS, ("LAURA", "I play Vex'ahlia. And I have an amazing--"),
             ("SAM", "-- companion bear named Trinket. He is the best."), *BEAR]
    assert types(lines).get("Trinket") != "creature"


def test_a_person_introduced_by_kin_or_standing_once_is_a_person() -> None:
    lines = [("MATT", "He was banished by the herd leader, his uncle Vordak."),
             ("MATT", "It was not long before her father, Morrin, saw her gift."),
             ("MATT", "You were sent here by the arcanist Elsa Tamberlane.")]
    found = types(lines)
    assert found.get("Vordak") == "npc"
    assert found.get("Morrin") == "npc"
    assert found.get("Elsa Tamberlane") == "npc"


def test_a_name_said_once_without_kin_or_standing_is_nothing() -> None:
    # a bare name, and a comma after a noun with "the" (a call: "the guard, Morrin!")
    lines = [("MATT", "Vordak was there when it happened."),
             ("MATT", "You turn to the guard, Morrin, and nod.")]
    assert types(lines) == {}


def test_what_a_name_becomes_types_it() -> None:
    lines = [("MATT", "You release the spell. Mossfang becomes a bear again."),
             ("MATT", "Mossfang sniffs at the sacks of dried meat.")]
    assert types(lines).get("Mossfang") == "creature"


def test_a_guess_at_what_a_name_is_types_nothing() -> None:
    lines = [("MATT", "What if Mossfang is a bear?"),
             ("MATT", "Mossfang sniffs at the sacks of dried meat.")]
    assert types(lines).get("Mossfang") != "creature"
