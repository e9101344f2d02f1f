""""The castle" after "the castle of Whitestone" in the same turn (issue 16, facts). Each rule
with a near miss that must read nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import facts
from tests.processing.test_extraction_nlp import entries

WORLD = [
    Entity("c1", "whitestone", "location", "Whitestone"),
    Entity("c1", "emon", "location", "Emon"),
    Entity("c1", "briarwood", "npc", "Briarwood", ["Briarwoods"]),
    Entity("c1", "kima", "npc", "Lady Kima", ["Kima"]),
]


def read(*turns: str) -> dict:
    return facts(extract_knowledge(entries([("MATT", t) for t in turns]), WORLD))


def test_the_castle_is_the_one_the_turn_named() -> None:
    found = read("Percy was born in the ancient castle of Whitestone. One night the Briarwoods "
                 "violently took control of the castle.")
    fact = found[("briarwood", "captured", "whitestone")]
    assert fact.attributes["coreference"] == "description" and fact.status == "pending"
    found = read("You meet a halfling named Kima. The Briarwoods attack the halfling.")
    assert ("briarwood", "attacked", "kima") in found


def test_two_castles_another_turn_or_another_thing_read_nothing() -> None:
    found = read("The castle of Whitestone stands north, the castle of Emon south. The "
                 "Briarwoods took control of the castle.")
    assert not [k for k in found if k[1] == "captured"]  # which castle: the turn named two
    found = read("Percy was born in the ancient castle of Whitestone.",
                 "The Briarwoods took control of the castle.")  # a new turn starts with none
    assert not [k for k in found if k[1] == "captured"]
    found = read("Percy was born in the castle of Whitestone. The Briarwoods took control "
                 "of their castle and of the castle of the north.")
    assert not [k for k in found if k[1] == "captured"]


def test_taking_control_of_a_place_is_capture_losing_it_is_not() -> None:
    assert ("briarwood", "captured", "whitestone") in read(
        "The Briarwoods seized control of Whitestone.")
    assert not [k for k in read("The Briarwoods lost control of Whitestone.")
                if k[1] == "captured"]
