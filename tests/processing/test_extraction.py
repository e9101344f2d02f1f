from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from glyphoxa_pipelines.campaign.transcript_import import import_transcript
from glyphoxa_pipelines.memory.models import Entity, Entry, Relationship
from glyphoxa_pipelines.processing.extraction import (
    EntityResolver,
    contradictions,
    extract_knowledge,
    extract_knowledge_llm,
    split_descriptor,
)
from glyphoxa_pipelines.providers.llm import ChatLLM

START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
EXISTING = [
    Entity(campaign_id="c1", id="npc-eldrinax", type="npc", name="Eldrinax"),
    Entity(campaign_id="c1", id="loc-thornwall", type="location", name="Thornwall"),
    Entity(campaign_id="c1", id="god-sarenrae", type="npc", name="Sarenrae"),
    Entity(campaign_id="c1", id="loc-tyrex", type="location", name="Ty'rex"),
]
SCRIPT = [
    ("DM", "You enter the village of Thornwall at dusk. The old wizard Eldrinax greets you."),
    ("Mira", "Good evening. We are looking for the Silver Guard."),
    ("DM", "Captain Mara Vell is the leader of the Silver Guard. Mara Vell lives in Thornwall."),
    ("Rook", "Where is Captain Mara Vell now?"),
    ("DM", "Years ago, Lord Varkas betrayed the Silver Guard. Now Lord Varkas is hunting "
           "Eldrinax."),
    ("DM", "Eldrinax gave the Moonstone Amulet to Mara Vell before the siege."),
    ("Mira", "So Mara Vell never lived in Greyhollow? I thought Mara Vell never lived in "
             "Greyhollow, or did she?"),
    ("DM", "Eldrinax nods. \"Lord Varkas killed my brother Orrin.\""),
    ("Rook", "We should ask Eldrinax about Lord Varkas and the Moonstone Amulet."),
    ("DM", "Captain Mara Vell of Thornwall, who's the sworn paladin of Sarenrae, nods."),
]


def script_entries() -> list[Entry]:
    return [
        Entry(
            id=n + 1, campaign_id="c1", session_id="s1", idempotency_key=f"k{n}",
            speaker_id=s.lower(), speaker_name=s, speaker_role="dm" if s == "DM" else "player",
            raw_text=t, text=t, npc_id=None, spoken_at=START + timedelta(seconds=10 * n),
            duration_s=5.0,
        )
        for n, (s, t) in enumerate(SCRIPT)
    ]


def facts_by_names(result, existing=EXISTING) -> set[tuple[str, str, str]]:
    names = {e.id: e.name for e in [*existing, *result.entities]}
    return {(names[r.source_id], r.rel_type, names[r.target_id]) for r in result.relationships}


def test_finds_known_facts_in_a_written_transcript() -> None:
    result = extract_knowledge(script_entries(), EXISTING)
    new = {e.name: e for e in result.entities}
    assert new["Mara Vell"].type == "npc"
    assert new["Silver Guard"].type == "faction"
    assert new["Moonstone Amulet"].type == "item"
    # the title is an attribute, not another name (a corrector would capitalize "lord")
    assert new["Varkas"].type == "npc" and new["Varkas"].attributes["title"] == "Lord"
    assert "Lord Varkas" not in new["Varkas"].aliases
    facts = facts_by_names(result)
    assert ("Mara Vell", "leader_of", "Silver Guard") in facts
    assert ("Mara Vell", "lives_in", "Thornwall") in facts
    assert ("Varkas", "betrayed", "Silver Guard") in facts
    assert ("Varkas", "hunting", "Eldrinax") in facts
    assert ("Eldrinax", "gave_to", "Mara Vell") in facts
    assert ("Mara Vell", "owns", "Moonstone Amulet") in facts
    assert ("Mara Vell", "worships", "Sarenrae") in facts  # across "of Thornwall"
    assert not any(f[1] == "lives_in" and f[2] == "Greyhollow" for f in facts)  # negated
    for r in result.relationships:
        assert r.session_id == "s1" and r.provenance == "extracted"
        assert r.evidence and r.observed_at is not None
        assert r.status == ("canon" if r.confidence >= 0.7 else "pending")
    gave = next(r for r in result.relationships if r.rel_type == "gave_to")
    assert gave.evidence == "Eldrinax gave the Moonstone Amulet to Mara Vell before the siege."
    assert gave.attributes["item"] == "Moonstone Amulet" and gave.assertion == "stated"
    owns = next(r for r in result.relationships if r.rel_type == "owns")
    assert owns.assertion == "inferred" and owns.confidence < gave.confidence
    # every fact references an entity that exists
    ids = {e.id for e in [*EXISTING, *result.entities]}
    assert all(r.source_id in ids and r.target_id in ids for r in result.relationships)


def test_the_old_wizard_eldrinax_is_the_existing_eldrinax() -> None:
    result = extract_knowledge(script_entries(), EXISTING)
    assert not [e for e in result.entities if "eldrinax" in e.name.lower()]
    hits = [r for r in result.resolutions if r.entity_id == "npc-eldrinax"]
    assert hits and all(r.existing for r in hits)
    resolver = EntityResolver(EXISTING)
    for surface in ["the old wizard Eldrinax", "Eldrinax's", "ELDRINAX", "Eldrinaks",
                    "Archmage Eldrinax"]:
        hit = resolver.resolve(surface)
        assert hit is not None and hit.entity_id == "npc-eldrinax", surface
    assert resolver.resolve("Tirex").entity_id == "loc-tyrex"  # apostrophes are spelling
    assert resolver.resolve("Varkas") is None
    assert resolver.resolve("Thornfield") is None  # similar, but a different place
    assert split_descriptor("the old wizard Eldrinax") == ("old wizard", "", "Eldrinax")


def test_resolution_across_sessions_uses_aliases_and_phonetics() -> None:
    first = extract_knowledge(script_entries(), EXISTING)
    graph = [*EXISTING, *first.entities]
    later = [Entry(
        id=100, campaign_id="c1", session_id="s2", idempotency_key="x", speaker_id="dm",
        speaker_name="DM", speaker_role="dm", raw_text="", npc_id=None, duration_s=3.0,
        spoken_at=START + timedelta(days=7),
        text="Lord Varcas and Captain Vell meet again. Vell rules Thornwall now. "
             "Lord Varcas and Captain Vell argue.",
    )]
    second = extract_knowledge(later, graph, session_id="s2")
    assert second.entities == []  # nothing new: Varcas ~ Varkas, Vell ~ Mara Vell
    facts = facts_by_names(second, graph)
    assert ("Mara Vell", "leader_of", "Thornwall") in facts


def test_contradictions_for_functional_and_exclusive_relations() -> None:
    def rel(src, rel_type, dst, day, **kw) -> Relationship:
        return Relationship(campaign_id="c1", source_id=src, target_id=dst, rel_type=rel_type,
                            observed_at=START + timedelta(days=day), provenance="extracted", **kw)

    old_home = rel("mara", "lives_in", "thornwall", 0)
    dm_home = Relationship(campaign_id="c1", source_id="rook", target_id="thornwall",
                           rel_type="lives_in", dm_confirmed=True, observed_at=START)
    ally = rel("mara", "allied_with", "varkas", 0)
    ruler = rel("varkas", "leader_of", "greyhollow", 0)
    gone = rel("mara", "lives_in", "oldtown", 0, invalidated_at=START)
    new = [
        rel("mara", "lives_in", "greyhollow", 3),
        rel("rook", "lives_in", "greyhollow", 3),
        rel("varkas", "enemy_of", "mara", 3),
        rel("mara", "leader_of", "greyhollow", 3),
        rel("mara", "lives_in", "thornwall", -5),  # older news changes nothing
    ]
    found = contradictions([old_home, dm_home, ally, ruler, gone], new)
    pairs = {(c.old.source_id, c.old.rel_type, c.old.target_id, c.protected) for c in found}
    assert pairs == {
        ("mara", "lives_in", "thornwall", False),
        ("rook", "lives_in", "thornwall", True),
        ("mara", "allied_with", "varkas", False),
        ("varkas", "leader_of", "greyhollow", False),
    }


def test_real_crd3_episode_finds_real_facts(crd3_episode) -> None:
    entries = import_transcript(crd3_episode).as_entries("cr", "c1e001")
    result = extract_knowledge(entries, [])
    by_name = {e.name: e for e in result.entities}
    assert by_name["Kraghammer"].type == "location"
    assert by_name["Emon"].type == "location"
    assert by_name["Nostoc Greyspine"].type == "npc"
    # the characters the players answer to (and introduce themselves as) are the party
    assert by_name["Grog"].type == by_name["Tiberius Stormwind"].type == "player"
    assert by_name["Grog"].attributes["played_by"] == "TRAVIS"
    assert by_name["Gradim Greyspine"].type == "npc"
    assert "Greyspine Manor" in by_name and "House Thunderbrand" in by_name
    players = {"MATT", "LAURA", "SAM", "TRAVIS", "MARISHA", "ORION", "LIAM", "TALIESIN"}
    assert not {e.name.upper() for e in result.entities} & players
    facts = facts_by_names(result, [])
    assert ("Ty'rex", "located_in", "Draconia") in facts
    assert ("Vax'ildan", "sibling_of", "Vex'ahlia") in facts
    assert 20 <= len(result.entities) <= 80  # precision over volume
    assert all(r.evidence for r in result.relationships)


def test_llm_extractor_uses_the_same_resolution(openai_stub) -> None:
    answer = {
        "entities": [
            {"name": "the old wizard Eldrinax", "type": "npc", "aliases": []},
            {"name": "Mara Vell", "type": "npc", "aliases": ["Captain Vell"]},
            {"name": "Silver Guard", "type": "faction"},
        ],
        "relationships": [
            {"source": "Mara Vell", "type": "leader of", "target": "Silver Guard",
             "evidence": "Captain Mara Vell is the leader of the Silver Guard.",
             "confidence": 0.9, "assertion": "stated"},
            {"source": "Eldrinax", "type": "allied_with", "target": "Captain Vell",
             "evidence": "", "confidence": 0.5, "assertion": "inferred"},
        ],
    }
    openai_stub.chat = lambda body: "Here you go:\n```json\n" + json.dumps(answer) + "\n```"
    llm = ChatLLM(model="stub-model", base_url=openai_stub.base_url, api_key="test")
    result = extract_knowledge_llm(script_entries(), EXISTING, llm)
    assert {e.name for e in result.entities} == {"Mara Vell", "Silver Guard"}
    facts = facts_by_names(result)
    assert ("Mara Vell", "leader_of", "Silver Guard") in facts
    assert {("Eldrinax", "allied_with", "Mara Vell"), ("Mara Vell", "allied_with", "Eldrinax")} & facts
    lead = next(r for r in result.relationships if r.rel_type == "leader_of")
    assert lead.status == "canon" and lead.observed_at == START + timedelta(seconds=20)
    weak = next(r for r in result.relationships if r.rel_type == "allied_with")
    assert weak.status == "pending" and weak.assertion == "inferred"
    path, body = openai_stub.requests[0]
    assert path.endswith("/chat/completions") and body["model"] == "stub-model"
    assert "Eldrinax" in body["messages"][1]["content"]
    schema = body["response_format"]["json_schema"]["schema"]  # structured outputs
    assert body["response_format"]["type"] == "json_schema"
    assert schema["required"] == ["entities", "relationships"]


def test_llm_extractor_sends_no_table_talk(openai_stub) -> None:
    openai_stub.chat = lambda body: json.dumps({"entities": [], "relationships": []})
    plug = Entry(
        id=99, campaign_id="c1", session_id="s1", idempotency_key="plug", speaker_id="dm",
        speaker_name="DM", speaker_role="dm", npc_id=None, duration_s=2.0,
        raw_text="Thanks to our sponsor Dice Hoard, check them out!",
        text="Thanks to our sponsor Dice Hoard, check them out!",
        spoken_at=START + timedelta(seconds=200),
    )
    llm = ChatLLM(model="stub", base_url=openai_stub.base_url, api_key="test")
    extract_knowledge_llm([*script_entries(), plug], EXISTING, llm)
    sent = " ".join(body["messages"][1]["content"] for _, body in openai_stub.requests)
    assert "Thornwall" in sent and "Dice Hoard" not in sent


def test_llm_extractor_survives_unparseable_answers(openai_stub) -> None:
    openai_stub.chat = lambda body: "I cannot help with that."
    llm = ChatLLM(model="stub", base_url=openai_stub.base_url, api_key="test")
    result = extract_knowledge_llm(script_entries(), EXISTING, llm)
    assert result.entities == [] and result.relationships == []
    assert len(openai_stub.requests) == 2  # one re-ask, then give up


def test_npc_speakers_are_in_world_players_are_not() -> None:
    def line(n: int, speaker: str, role: str, text: str) -> Entry:
        return Entry(
            id=n, campaign_id="c1", session_id="s9", idempotency_key=f"n{n}",
            speaker_id=speaker.lower(), speaker_name=speaker, speaker_role=role,  # type: ignore[arg-type]
            raw_text=text, text=text, npc_id=None, spoken_at=START + timedelta(seconds=n),
            duration_s=2.0,
        )

    entries = [
        line(1, "Vexmira", "npc", "Welcome, friends. I hear you ask about the crown."),
        line(2, "DM", "dm", "Captain Hask, who serves Vexmira, counts a purse of silver."),
        line(3, "Mira", "player", "Vexmira smiles. Captain Hask serves Vexmira, then."),
        line(4, "DM", "dm", "Captain Hask serves Mira in the tavern."),
    ]
    found = facts_by_names(extract_knowledge(entries, EXISTING))
    assert ("Hask", "serves", "Vexmira") in found  # an NPC who speaks is still in-world
    assert not any("Mira" in (s, t) for s, _, t in found)  # a player at the table is not


def test_extracted_ids_follow_the_stores_id_rule() -> None:
    """An extracted "Vax'ildan" gets the id a DM-made one would (`vaxildan`), and a name
    already taken gets a suffix instead of another entity's id."""
    def line(n: int, text: str) -> Entry:
        return Entry(
            id=n, campaign_id="c1", session_id="s9", idempotency_key=f"i{n}", speaker_id="dm",
            speaker_name="DM", speaker_role="dm", raw_text=text, text=text, npc_id=None,
            spoken_at=START + timedelta(seconds=n), duration_s=2.0,
        )

    entries = [line(n, "Lord Vax'ildan of Whitestone waits by the Stone's Pillow.")
               for n in range(3)]
    taken = Entity(campaign_id="c1", id="whitestone", type="item", name="White Stone Idol")
    ids = {e.name: e.id for e in extract_knowledge(entries, [taken]).entities}
    assert ids["Vax'ildan"] == "vaxildan"
    assert ids["Whitestone"] == "whitestone-2"


def test_empty_input() -> None:
    result = extract_knowledge([], EXISTING)
    assert result.entities == [] and result.relationships == []


class _TableEmbedder:
    """A deterministic stand-in embedder: known phrases share a direction."""

    model_id, dimension, max_tokens = "table", 2, 256
    vectors = {"eldrinax": [1.0, 0.0], "grey sage": [0.96, 0.28], "thornwall": [0.0, 1.0],
               "sarenrae": [-1.0, 0.0], "ty'rex": [0.0, -1.0]}

    def embed(self, texts: list[str]):
        import numpy as np

        return np.asarray([self.vectors.get(t.lower(), [-0.6, -0.8]) for t in texts],
                          dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2


def test_embedding_similarity_is_the_last_resort() -> None:
    plain = EntityResolver(EXISTING)
    assert plain.resolve("the Grey Sage") is None
    resolver = EntityResolver(EXISTING, embedder=_TableEmbedder())
    hit = resolver.resolve("the Grey Sage")
    assert hit is not None and hit.entity_id == "npc-eldrinax" and hit.method == "embedding"
    assert resolver.resolve("Eldrinax").method == "exact"  # cheaper matches first
    assert resolver.resolve("Quillon") is None
