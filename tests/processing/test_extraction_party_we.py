"""A player's in-character "we" is the party (issue 16, facts): what the players tell an NPC
about their errand ("Lord Greyspine himself sent us") is the party's. Each rule with a near
miss that must read nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, GRAPH, facts
from tests.processing.test_extraction_nlp import entries

PARTY = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
NOSTOC = Entity("c1", "nostoc", "npc", "Lord Nostoc", ["Nostoc"])
WORLD = [*GRAPH, PARTY, NOSTOC]


def said(speaker: str, *lines: str, world: list[Entity] = WORLD) -> dict:
    table = [*CALLS, ("MATT", "The dwarf looks at you."), *((speaker, t) for t in lines)]
    return facts(extract_knowledge(entries(table), world))


def test_who_sent_us_and_whom_we_seek_are_the_partys() -> None:
    found = said("LAURA", "Lord Nostoc himself sent us.")
    fact = found[("nostoc", "sent", "vox")]
    assert fact.attributes["coreference"] == "party_we" and fact.status == "pending"
    found = said("TRAVIS", "Mostly we are looking for Lady Kima, if I recall.")
    assert found[("vox", "seeking", "kima")].attributes["coreference"] == "party_we"


def test_a_plan_a_question_or_a_quote_is_no_deed_of_the_party() -> None:
    found = said("LAURA", "I don't think we should try to go down and find Nostoc.",
                 "Did Nostoc send us?", "We could look for Kima.")
    assert not [k for k in found if "vox" in (k[0], k[2])]


def test_no_party_or_no_character_reads_nothing() -> None:
    found = said("LAURA", "Lord Nostoc himself sent us.", world=[*GRAPH, NOSTOC])
    assert not [k for k in found if k[0] == "nostoc"]  # no party declared: "us" is nobody
    found = said("ASHLEY", "Lord Nostoc himself sent us.")  # a voice with no character known
    assert ("nostoc", "sent", "vox") not in found


def test_the_errand_we_were_charged_with_is_a_search() -> None:
    found = said("LAURA", "But we've been charged to find Lady Kima.")
    assert found[("vox", "seeking", "kima")].attributes["coreference"] == "party_we"
    found = facts(extract_knowledge(entries([("MATT", "Grog was sent to find Lady Kima.")]),
                                    WORLD))
    assert ("grog", "seeking", "kima") in found


def test_an_errand_to_kill_is_not_yet_a_killing() -> None:
    found = facts(extract_knowledge(entries([("MATT", "Grog was sent to kill Lady Kima.")]),
                                    WORLD))
    assert not [k for k in found if k[0] == "grog" and k[2] == "kima"]
