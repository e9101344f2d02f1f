"""ALLIED_WITH / HOSTILE_TO hold both ways: one stored row, found from either end, and the
mirror statement updates it instead of adding a second fact."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph, Relationship


def _graph(db: Database, cid: str) -> KnowledgeGraph:
    g = KnowledgeGraph(db)
    for eid in ("vorn", "grimjaw", "hask"):
        g.add_entity(Entity(cid, eid, "npc", eid.title()))
    return g


@pytest.mark.parametrize("rel_type", ["allied_with", "hostile_to", "enemy_of"])
def test_a_symmetric_fact_reads_from_either_end(
    db: Database, campaign_id: str, rel_type: str
) -> None:
    g = _graph(db, campaign_id)
    g.add_relationship(Relationship(campaign_id, "vorn", "grimjaw", rel_type))
    out_of_grimjaw = g.get_relationships(campaign_id, "grimjaw", direction="out")
    into_vorn = g.get_relationships(campaign_id, "vorn", direction="in")
    assert [r.rel_type for r in out_of_grimjaw] == [rel_type]
    assert [r.rel_type for r in into_vorn] == [rel_type]


def test_an_asymmetric_fact_reads_one_way_only(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    g.add_relationship(Relationship(campaign_id, "vorn", "grimjaw", "employed_by"))
    assert g.get_relationships(campaign_id, "grimjaw", direction="out") == []
    assert g.get_relationships(campaign_id, "vorn", direction="in") == []


def test_the_mirror_statement_updates_the_one_row(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    first = g.add_relationship(Relationship(campaign_id, "vorn", "hask", "hostile_to"))
    again = g.add_relationship(
        Relationship(campaign_id, "hask", "vorn", "hostile_to", confidence=0.6)
    )
    assert again.id == first.id and again.confidence == pytest.approx(0.6)
    both = g.get_relationships(campaign_id, "hask", direction="both")
    assert len(both) == 1
