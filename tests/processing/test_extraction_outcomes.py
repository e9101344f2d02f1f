"""A deed's outcome as the DM narrates it (issue 16, seventh pass): a head taken off is a
killing, and a long DM turn right after one player declares their own action narrates that
player's deed. Each rule with a near miss. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, GRAPH, facts
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import read

KING = [*GRAPH, Entity("c1", "murghol", "npc", "King Murghol", ["Murghol"])]
PARTY = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
# a long turn: over the narration threshold, nobody called by name
OUTCOME = ("So. As you say that, the blade vibrates to the sound of your voice, like the echoing "
           "of a song behind yours in almost a chorus out of nowhere. " * 4
           + "As you do, you bring the blade around with a flourish and take Murghol's head off "
           "his shoulders.")


def test_a_head_taken_off_is_a_killing() -> None:
    assert ("kevdak", "killed", "grog") in read("Kevdak takes Grog's head off his shoulders.")
    assert ("kevdak", "killed", "grog") in read("Kevdak lopped off Grog's head.")


def test_a_hat_taken_off_is_no_killing() -> None:
    assert not [k for k in read("Kevdak takes Grog's hat off his head.",
                                "Kevdak takes off Grog's head of hair.")
                if k[1] == "killed"]


def test_a_long_turn_after_one_players_declared_deed_is_that_players() -> None:
    lines = [*CALLS, ("MATT", "How do you want to do this?"),
             ("TRAVIS", "I draw back the blade and I lop it off."), ("MATT", OUTCOME)]
    fact = facts(extract_knowledge(entries(lines), [*KING, PARTY]))[("grog", "killed", "murghol")]
    assert fact.attributes["coreference"] == "reply" and fact.status == "pending"


def test_a_long_turn_after_talk_is_the_partys() -> None:
    lines = [*CALLS, ("MATT", "How do you want to do this?"),
             ("TRAVIS", "Whatever you think is cool."), ("MATT", OUTCOME)]
    found = facts(extract_knowledge(entries(lines), [*KING, PARTY]))
    assert ("vox", "killed", "murghol") in found
    assert ("grog", "killed", "murghol") not in found
