"""L3: entities, facts, traversal, visibility, isolation."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    InvalidInputError,
    KnowledgeGraph,
    NotFoundError,
    NpcProfile,
    Relationship,
)


def _graph(db: Database, cid: str) -> KnowledgeGraph:
    """a -> b -> c -> d -> e chain, plus a cycle c -> a, and a side branch b -> loc."""
    g = KnowledgeGraph(db)
    for eid, typ in [("a", "npc"), ("b", "npc"), ("c", "faction"), ("d", "npc"), ("e", "item")]:
        g.add_entity(Entity(cid, eid, typ, eid.upper()))
    g.add_entity(Entity(cid, "loc", "location", "Ironhold"))
    for s, t, r in [
        ("a", "b", "knows"),
        ("b", "c", "member_of"),
        ("c", "d", "employs"),
        ("d", "e", "owns"),
        ("c", "a", "hunts"),
        ("b", "loc", "lives_in"),
    ]:
        g.add_relationship(Relationship(cid, s, t, r))
    return g


def test_entity_crud_and_upsert_replaces(db: Database, campaign_id: str) -> None:
    g = KnowledgeGraph(db)
    e = g.add_entity(
        Entity(campaign_id, "", "npc", "Vex'ahlia", aliases=["Vex"], attributes={"a": 1})
    )
    assert e.id == "vexahlia"
    assert g.get_entity(campaign_id, "vexahlia") == e
    replaced = g.add_entity(
        Entity(campaign_id, "vexahlia", "npc", "Vex'ahlia", attributes={"b": 2})
    )
    assert replaced.attributes == {"b": 2} and replaced.aliases == []
    merged = g.update_entity(campaign_id, "vexahlia", attributes={"c": 3}, aliases=["Vex"])
    assert merged.attributes == {"b": 2, "c": 3} and merged.aliases == ["Vex"]
    dropped = g.update_entity(campaign_id, "vexahlia", remove_attributes=["b"])
    assert dropped.attributes == {"c": 3}
    g.add_entity(Entity(campaign_id, "found", "npc", "Found", provenance="extracted"))
    assert g.update_entity(campaign_id, "found", attributes={"x": 1}).provenance == "dm"
    assert g.resolve(campaign_id, "VEX").id == "vexahlia"
    assert g.resolve(campaign_id, "nobody") is None
    assert g.delete_entity(campaign_id, "vexahlia") is True
    assert g.delete_entity(campaign_id, "vexahlia") is False  # absent: not an error
    assert g.get_entity(campaign_id, "vexahlia") is None
    with pytest.raises(NotFoundError):
        g.update_entity(campaign_id, "vexahlia", name="x")
    with pytest.raises(InvalidInputError, match="empty"):
        g.add_entity(Entity(campaign_id, "x", "npc", "  "))
    with pytest.raises(NotFoundError, match="unknown campaign"):
        g.add_entity(Entity("no-campaign", "x", "npc", "X"))


def test_find_entities(db: Database, campaign_id: str) -> None:
    g = KnowledgeGraph(db)
    g.add_entity(
        Entity(
            campaign_id, "", "npc", "Grimjaw", aliases=["Ironfist"], attributes={"race": "dwarf"}
        )
    )
    g.add_entity(Entity(campaign_id, "", "location", "Ironhold", attributes={"kind": "city"}))
    g.add_entity(Entity(campaign_id, "", "npc", "Eldrinax", attributes={"race": "elf"}))
    assert [e.name for e in g.find_entities(campaign_id, type="npc")] == ["Eldrinax", "Grimjaw"]
    names = {e.name for e in g.find_entities(campaign_id, name="IRON")}
    assert names == {"Ironhold", "Grimjaw"}  # name or alias, case-insensitive
    assert [e.name for e in g.find_entities(campaign_id, attributes={"race": "elf"})] == [
        "Eldrinax"
    ]
    assert g.find_entities(campaign_id, name="100%_") == []
    assert g.find_entities(campaign_id, type="quest") == []


def test_relationships_get_filter_delete(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    out_b = g.get_relationships(campaign_id, "b")
    assert [(r.rel_type, r.target_id) for r in out_b] == [("lives_in", "loc"), ("member_of", "c")]
    into_a = g.get_relationships(campaign_id, "a", direction="in")
    assert [(r.source_id, r.rel_type) for r in into_a] == [("c", "hunts")]
    both = g.get_relationships(campaign_id, "c", direction="both", rel_types=["employs", "hunts"])
    assert {r.rel_type for r in both} == {"employs", "hunts"}
    assert len(g.get_relationships(campaign_id, "c", direction="both", limit=1)) == 1
    # upsert replaces the current fact instead of duplicating it
    again = g.add_relationship(Relationship(campaign_id, "a", "b", "knows", confidence=0.8))
    assert [r.confidence for r in g.get_relationships(campaign_id, "a")] == [pytest.approx(0.8)]
    assert g.delete_relationship(campaign_id, again.id) is True
    assert g.delete_relationship(campaign_id, again.id) is False
    assert g.get_relationships(campaign_id, "a") == []
    assert g.get_relationships(campaign_id, "nobody") == []
    with pytest.raises(NotFoundError, match="unknown entity 'ghost'"):
        g.add_relationship(Relationship(campaign_id, "a", "ghost", "knows"))


def test_temporal_validity_keeps_history(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    old = g.get_relationships(campaign_id, "b", rel_types=["lives_in"])[0]
    g.add_entity(Entity(campaign_id, "port", "location", "Port Damali"))
    new = g.add_relationship(Relationship(campaign_id, "b", "port", "lives_in"))
    assert g.invalidate_relationship(campaign_id, old.id, by=new.id) is True
    assert g.invalidate_relationship(campaign_id, old.id) is False
    now = g.get_relationships(campaign_id, "b", rel_types=["lives_in"])
    assert [r.target_id for r in now] == ["port"]
    then = g.get_relationships(campaign_id, "b", rel_types=["lives_in"], at=old.valid_from)
    assert [r.target_id for r in then] == ["loc"]
    # a new current fact with the old key is allowed once the old one is invalidated
    g.add_relationship(Relationship(campaign_id, "b", "loc", "lives_in"))


def test_review_queue_and_status(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    pending = g.add_relationship(
        Relationship(
            campaign_id,
            "d",
            "loc",
            "visited",
            confidence=0.4,
            status="pending",
            provenance="extracted",
        )
    )
    assert pending.id in [f.relationship.id for f in g.review_queue(campaign_id)]
    assert g.get_relationships(campaign_id, "d", rel_types=["visited"]) == []
    confirmed = g.set_fact_status(campaign_id, pending.id, "canon", dm_confirmed=True)
    assert confirmed.dm_confirmed and confirmed.status == "canon"
    assert len(g.get_relationships(campaign_id, "d", rel_types=["visited"])) == 1
    # pipeline writes never overwrite a confirmed fact
    g.add_relationship(
        Relationship(campaign_id, "d", "loc", "visited", confidence=0.1, provenance="extracted"),
        protect_confirmed=True,
    )
    assert g.get_relationship(campaign_id, pending.id).confidence == pytest.approx(0.4)
    g.set_fact_status(campaign_id, pending.id, "rejected")
    assert g.get_relationships(campaign_id, "d", rel_types=["visited"], include_pending=True) == []
    with pytest.raises(NotFoundError):
        g.set_fact_status(campaign_id, 10**9, "canon")


@pytest.mark.parametrize(
    ("depth", "expected"),
    [(1, {"b", "c"}), (2, {"b", "c", "d", "loc"}), (3, {"b", "c", "d", "loc", "e"})],
)
def test_neighbors_by_depth(db: Database, campaign_id: str, depth: int, expected: set[str]) -> None:
    g = _graph(db, campaign_id)
    sub = g.neighbors(campaign_id, "a", depth=depth)
    assert {e.id for e in sub.entities} == expected  # the a<-c cycle does not loop forever
    assert "a" not in {e.id for e in sub.entities}
    assert sub.facts == []  # facts only on request
    with_facts = g.neighbors(campaign_id, "a", depth=depth, include_facts=True)
    ids = expected | {"a"}
    assert with_facts.facts and all(
        f.relationship.source_id in ids and f.relationship.target_id in ids
        for f in with_facts.facts
    )


def test_neighbors_type_filters_and_max_nodes(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    only_npcs = g.neighbors(campaign_id, "a", depth=3, node_types=["npc"])
    assert {e.id for e in only_npcs.entities} == {"b", "d"}  # reached through the faction c
    via_knows = g.neighbors(campaign_id, "a", depth=3, rel_types=["knows", "lives_in"])
    assert {e.id for e in via_knows.entities} == {"b", "loc"}
    capped = g.neighbors(campaign_id, "a", depth=3, max_nodes=2)
    assert len(capped.entities) == 2
    assert [e.id for e in capped.entities] == ["b", "c"]  # nearest first
    assert g.neighbors(campaign_id, "a", depth=0).entities == []
    assert g.neighbors(campaign_id, "nobody", depth=2).entities == []


def test_find_path_shortest_with_cycles(db: Database, campaign_id: str) -> None:
    g = _graph(db, campaign_id)
    path = g.find_path(campaign_id, "a", "e")
    # a <-hunts- c -employs-> d -owns-> e is 3 hops, shorter than via b (4 hops)
    assert [(r.source_id, r.rel_type, r.target_id) for r in path] == [
        ("c", "hunts", "a"),
        ("c", "employs", "d"),
        ("d", "owns", "e"),
    ]
    assert g.find_path(campaign_id, "a", "e", max_depth=2) == []
    assert len(g.find_path(campaign_id, "loc", "a")) == 2
    assert g.find_path(campaign_id, "a", "a") == []
    g.add_entity(Entity(campaign_id, "island", "location", "Island"))
    assert g.find_path(campaign_id, "a", "island") == []
    assert [
        r.rel_type
        for r in g.find_path(
            campaign_id, "a", "e", rel_types=["knows", "member_of", "employs", "owns"]
        )
    ] == ["knows", "member_of", "employs", "owns"]


def _secrets(db: Database, cid: str) -> KnowledgeGraph:
    g = KnowledgeGraph(db)
    for eid in ("vexmira", "eldrinax", "grimjaw", "hask"):
        g.add_entity(Entity(cid, eid, "npc", eid.title()))
    g.add_entity(Entity(cid, "king", "event", "The King's Death"))
    g.add_entity(Entity(cid, "crown", "item", "Crown"))
    g.upsert_npc_profile(
        NpcProfile(
            cid, "vexmira", personality="calculating", secret_knowledge=["poisoned the king"]
        )
    )
    g.add_relationship(Relationship(cid, "vexmira", "king", "caused", visibility="secret"))
    g.add_relationship(
        Relationship(
            cid, "eldrinax", "crown", "hides_shard_of", visibility="secret", known_by=["grimjaw"]
        )
    )
    g.add_relationship(Relationship(cid, "grimjaw", "eldrinax", "distrusts"))
    return g


def test_secret_facts_reach_only_those_who_know(db: Database, campaign_id: str) -> None:
    g = _secrets(db, campaign_id)
    vex = g.identity_snapshot(campaign_id, "vexmira")
    assert [(f.relationship.rel_type, f.secret) for f in vex.facts] == [("caused", True)]
    assert "SECRET" in vex.facts[0].sentence()
    assert vex.profile is not None and vex.profile.secret_knowledge == ["poisoned the king"]
    grim = g.identity_snapshot(campaign_id, "grimjaw")
    assert {f.relationship.rel_type for f in grim.facts} == {"distrusts", "hides_shard_of"}
    hask = g.identity_snapshot(campaign_id, "hask")
    assert hask.facts == [] and hask.profile is None
    for npc in ("hask", "grimjaw", "eldrinax"):
        seen = g.visible_subgraph(campaign_id, npc, depth=3)
        assert "caused" not in {f.relationship.rel_type for f in seen.facts}
        assert "king" not in {e.id for e in seen.entities}
    hask_view = g.neighbors(campaign_id, "crown", depth=2, npc_id="hask")
    assert hask_view.entities == []  # the only edge to the crown is a secret Hask does not know
    assert g.get_relationships(campaign_id, "vexmira", npc_id="hask") == []
    assert g.find_path(campaign_id, "hask", "king", npc_id="hask") == []
    # the DM (no npc) sees everything
    assert {e.id for e in g.neighbors(campaign_id, "crown", depth=1).entities} == {"eldrinax"}
    # marking a fact public makes it visible at once
    rel = g.get_relationships(campaign_id, "vexmira")[0]
    g.set_visibility(campaign_id, rel.id, "public")
    assert [f.relationship.rel_type for f in g.identity_snapshot(campaign_id, "vexmira").facts] == [
        "caused"
    ]
    assert g.get_relationships(campaign_id, "vexmira", npc_id="hask")[0].rel_type == "caused"
    with pytest.raises(NotFoundError, match="unknown NPC"):
        g.identity_snapshot(campaign_id, "nobody")


def test_same_ids_in_two_campaigns_never_mix(db: Database, campaign_id: str) -> None:
    other = campaign_id + "-other"
    CampaignStore(db).upsert(Campaign(other, "Other"))
    g = KnowledgeGraph(db)
    g.add_entity(Entity(campaign_id, "hero", "player", "Hero One"))
    g.add_entity(Entity(other, "hero", "player", "Hero Two"))
    g.add_entity(Entity(campaign_id, "town", "location", "Town One"))
    g.add_entity(Entity(other, "town", "location", "Town Two"))
    g.add_relationship(Relationship(campaign_id, "hero", "town", "lives_in"))
    assert g.get_entity(campaign_id, "hero").name == "Hero One"
    assert g.get_entity(other, "hero").name == "Hero Two"
    assert g.get_relationships(other, "hero") == []
    assert g.neighbors(other, "hero", depth=3).entities == []
    assert g.find_path(other, "hero", "town") == []
    assert [e.name for e in g.find_entities(other)] == ["Town Two", "Hero Two"]  # type, name
    g.delete_entity(other, "hero")
    assert g.get_entity(campaign_id, "hero") is not None


def test_resolve_prefers_id_then_name_then_alias(db, campaign_id: str) -> None:  # type: ignore[no-untyped-def]
    g = KnowledgeGraph(db)
    g.add_entity(Entity(campaign_id, "grog", "npc", "Grog Strongjaw", aliases=["The Big Guy"]))
    g.add_entity(Entity(campaign_id, "big-guy", "npc", "The Big Guy"))  # a name beats an alias
    g.add_entity(Entity(campaign_id, "pike", "npc", "grog"))  # an id beats a name
    g.add_entity(Entity(campaign_id, "scanlan", "npc", "Scanlan", aliases=["Bard", "SHORTHALT"]))
    assert g.resolve(campaign_id, "the big GUY").id == "big-guy"
    assert g.resolve(campaign_id, "grog").id == "grog"
    assert g.resolve(campaign_id, "GROG STRONGJAW").id == "grog"
    assert g.resolve(campaign_id, "shorthalt").id == "scanlan"
    assert g.resolve(campaign_id, "Shorthal") is None  # whole alias only
    other = campaign_id + "-other"
    CampaignStore(db).upsert(Campaign(other, "Other"))
    assert KnowledgeGraph(db).resolve(other, "shorthalt") is None  # never across campaigns
