"""Names the story gives to things (issue 16, seventh pass): "they call this the X" names a
rite or a journey, never a person, so it is no NPC that blocks the pronouns after it. Each
rule with a near miss. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, facts

WITH_TOWN = [*WORLD, Entity("c1", "stillben", "location", "Stillben")]
# one recorded introduction: the pronoun reaches across its sentences, not across turns
ODYSSEY = (
    "Keyleth must leave the tribe on a journey. They call this the Aramente, or Noble Odyssey. "
    "As she hiked down the mountain towards Stillben, she meditated on the task ahead. "
    "Part of the Aramente is proving yourself a strong warrior."
)


def test_a_name_given_to_this_is_a_thing_and_its_twin_too() -> None:
    result = extract_knowledge(entries([("MATT", ODYSSEY)]), WITH_TOWN)
    types = {e.name: e.type for e in result.entities}
    assert types.get("Aramente") == "concept"
    assert types.get("Noble Odyssey") == "concept"
    # no longer a second person next to Keyleth: "she" hiked is Keyleth
    found = facts(result)
    assert ("keyleth", "travelled_to", "stillben") in found


def test_a_person_called_by_name_is_no_thing() -> None:
    lines = ["They call him Brannoc, or Old Brannoc.", "Brannoc says hello to Keyleth.",
             "Brannoc nods at Keyleth.", "Brannoc smiles."]
    result = extract_knowledge(entries([("MATT", " ".join(lines))]), WITH_TOWN)
    types = {e.name: e.type for e in result.entities}
    assert types.get("Brannoc") == "npc"
