"""Two spellings of one place across sessions (issue 16, eighth pass): CRD3's C1E001 writes
"Stilben", later episodes "Stillben". The resolver joins them (same sound, one letter apart),
the fact lands on the graph's entity and the new spelling is reported as its alias, which is
what `bench/knowledge.py` now scores with. A different place near in spelling stays apart.
Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, facts

GRAPH = [*WORLD, Entity("c1", "stilben", "location", "Stilben")]


def test_a_second_spelling_of_a_known_place_is_that_place_with_an_alias() -> None:
    result = extract_knowledge(entries([
        ("MATT", "Keyleth hiked down the mountain towards Stillben."),
        ("MATT", "Stillben is a quiet town. Keyleth rested in Stillben."),
    ]), GRAPH)
    assert ("keyleth", "travelled_to", "stilben") in facts(result)
    assert result.new_aliases.get("stilben") == ["Stillben"]
    assert not [e for e in result.entities if e.name == "Stillben"]


def test_a_different_place_near_in_spelling_is_not_joined() -> None:
    result = extract_knowledge(entries([
        ("MATT", "Keyleth hiked down the mountain towards Stonebend."),
        ("MATT", "Stonebend is a quiet town. Keyleth rested in Stonebend."),
    ]), GRAPH)
    assert "stilben" not in result.new_aliases
    assert ("keyleth", "travelled_to", "stilben") not in facts(result)
