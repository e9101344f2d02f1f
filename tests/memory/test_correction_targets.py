"""The correction-target rule: which extracted names the corrector may rewrite words into."""

from __future__ import annotations

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph, SessionStore
from glyphoxa_pipelines.memory.correction_targets import (
    correction_entities_op,
    correction_targets,
    is_name_form,
)
from glyphoxa_pipelines.memory.models import Chunk
from glyphoxa_pipelines.memory.semantic_index import SemanticIndex


def _extracted(eid: str, name: str, *aliases: str) -> Entity:
    return Entity("c", eid, "npc", name, list(aliases), provenance="extracted", session_id="s1")


def test_possessives_and_plurals_are_never_names() -> None:
    assert not is_name_form("Trinket's")
    assert not is_name_form("Grog’s")
    assert not is_name_form("Trinkets")
    assert not is_name_form("Goblins")
    for name in ("Trinket", "Vax'ildan", "Kraghammer", "Tiberius", "Nostoc Greyspine", "Vex"):
        assert is_name_form(name), name


def test_an_extracted_spelling_needs_two_sessions_or_the_dm() -> None:
    seen = {("grog", "Grog"): 3, ("grog", "Grogg"): 1, ("tibs", "Tiberius"): 1}
    dm_made = Entity("c", "kima", "npc", "Lady Kima", ["Kima", "Kima's"])
    targets = correction_targets(
        [
            _extracted("grog", "Grog", "Grogg"),
            _extracted("tibs", "Tiberius"),
            _extracted("trinket", "Trinket's"),
            dm_made,
        ],
        seen,
    )
    by_id = {e.id: e for e in targets}
    assert set(by_id) == {"grog", "kima"}
    assert (by_id["grog"].name, by_id["grog"].aliases) == ("Grog", [])
    assert (by_id["kima"].name, by_id["kima"].aliases) == ("Lady Kima", ["Kima"])


def test_a_name_the_table_also_writes_as_a_word_needs_the_dm() -> None:
    seen = {("t", "Trinket"): 5, ("t", "trinket"): 1}
    assert correction_targets([_extracted("t", "Trinket")], seen) == []
    dm_made = Entity("c", "t", "creature", "Trinket")
    assert [e.name for e in correction_targets([dm_made], seen)] == ["Trinket"]


def test_an_alias_seen_often_stands_in_for_a_name_seen_once() -> None:
    [entity] = correction_targets([_extracted("v", "Vaxildan", "Vax")], {("v", "Vax"): 2})
    assert (entity.name, entity.aliases) == ("Vax", [])


def test_the_loader_counts_sessions_from_tagged_chunks(db: Database, campaign_id: str) -> None:
    graph = KnowledgeGraph(db)
    s1, s2, s3 = (SessionStore(db).start_session(campaign_id).id for _ in range(3))
    for eid, name in (("trinket", "Trinkle"), ("orrin", "Orrin"), ("pike", "Pike")):
        graph.add_entity(
            Entity(campaign_id, eid, "npc", name, provenance="extracted", session_id=s1)
        )
    chunks = {
        s1: "Trinkle growls. Orrin waves. Pike smiles.",
        s2: "Trinkle sniffs the air. Pike lifts a pike.",
        s3: "You hear trinkles rattle.",  # tagged by a loose matcher, but not the spelling
    }
    index = SemanticIndex(db)
    for sid, text in chunks.items():
        index.replace_session_chunks(
            sid,
            [Chunk(f"{sid}#0", campaign_id, sid, 0, text, entity_ids=["trinket", "orrin", "pike"])],
        )
    names = {e.name for e in db.run(correction_entities_op(campaign_id))}
    assert names == {"Trinkle"}  # two sessions; Orrin was seen in one, "a pike" is a word
