"""A gerund's own subject said in the object's form (issue 16, facts): "the council lent
support in me leaving Draconia" is the speaker's leaving. With a near miss that must read
nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, GRAPH, facts
from tests.processing.test_extraction_nlp import entries


def said(*lines: str) -> dict:
    table = [*CALLS, ("MATT", "The dwarf nods."), *(("TRAVIS", t) for t in lines)]
    return facts(extract_knowledge(entries(table), GRAPH))


def test_me_leaving_a_place_is_the_speakers_leaving() -> None:
    found = said("The council agreed to lend support in me leaving Emberhold on a mission.")
    fact = found[("grog", "left", "emberhold")]
    assert fact.attributes["coreference"] == "speaker"


def test_a_gerund_after_a_comma_or_a_noun_is_not_the_pronouns() -> None:
    found = said("The council spoke to me, leaving Emberhold to the dwarves.",
                 "The council lent support to the guards leaving Emberhold.")
    assert ("grog", "left", "emberhold") not in found
