"""A "she" is not a father (issue 16, seventh pass): the narration's pronoun skips a person
the words call "father" or "Lord" and goes back to the last one named alone whose gender
does not clash. With a near miss. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, facts

WITH_TOWN = [*WORLD, Entity("c1", "stillben", "location", "Stillben")]
OPENING = ("Keyleth was raised with a deep love of nature. In time the headmaster of the tribe, "
           "her father, Kohren, saw her gifts. ")


def test_she_skips_the_father_and_is_the_daughter() -> None:
    text = OPENING + "She hiked down the mountain towards Stillben."
    found = facts(extract_knowledge(entries([("MATT", text)]), WITH_TOWN))
    assert ("keyleth", "travelled_to", "stillben") in found
    assert ("kohren", "travelled_to", "stillben") not in found


def test_he_after_the_father_is_the_father() -> None:
    text = OPENING + "He hiked down the mountain towards Stillben."
    found = facts(extract_knowledge(entries([("MATT", text)]), WITH_TOWN))
    assert ("kohren", "travelled_to", "stillben") in found
    assert ("keyleth", "travelled_to", "stillben") not in found
