"""The DM's second person about the party (issue 16, facts): where the party goes, who joins
it, what it is handed. Each rule with a near miss that must read nothing. Pure functions over
plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, GRAPH, facts
from tests.processing.test_extraction_nlp import entries

PARTY = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
WORLD = [*GRAPH, PARTY, Entity("c1", "clarota", "npc", "Clarota"),
         Entity("c1", "howl", "item", "Broken Howl")]


def read(*dm: str) -> dict[tuple[str, str, str], object]:
    return facts(extract_knowledge(entries([*CALLS, ("LAURA", "Okay."),
                                            *(("MATT", t) for t in dm)]), WORLD))


def test_you_all_make_your_way_to_a_place_is_where_the_party_went() -> None:
    found = read("You guys make your way to Emberhold.")
    fact = found[("vox", "travelled_to", "emberhold")]
    assert fact.attributes["coreference"] == "party" and fact.status == "pending"
    found = read("You all make it into Emberhold, the gate closing behind you.")
    assert ("vox", "travelled_to", "emberhold") in found


def test_making_a_deal_or_a_way_through_is_no_journey() -> None:
    found = read("You guys make a deal with Kima in Emberhold.",
                 "You all make your way through, past Kima.")
    assert not [k for k in found if k[1] == "travelled_to"]


def test_a_companion_joining_you_all_is_the_partys_ally() -> None:
    fact = read("Clarota joins you guys.")[("clarota", "allied_with", "vox")]
    assert fact.attributes["coreference"] == "party"


def test_joining_a_character_is_no_alliance() -> None:
    found = read("Clarota joins Grog at the edge.")
    assert not [k for k in found if k[1] in ("allied_with", "member_of")]


def test_a_named_thing_handed_to_you_is_yours() -> None:
    found = read("Grog, you step up. Kima gives you the Broken Howl.")
    gift = found[("kima", "gave_to", "grog")]
    assert gift.attributes["item"] == "Broken Howl" and gift.assertion == "stated"
    assert gift.attributes["coreference"] == "vocative" and gift.status == "canon"
    owns = found[("grog", "owns", "howl")]  # a gift may be lent: its keeping is inferred
    assert owns.assertion == "inferred" and owns.confidence < gift.confidence
    found = read("Kima hands the Broken Howl to you guys.")
    assert ("vox", "owns", "howl") in found and ("kima", "gave_to", "vox") in found


def test_a_nod_or_an_unnamed_thing_is_no_possession() -> None:
    found = read("Grog, you step up. Kima gives you a nod.",
                 "Grog, you wait. Kima gives it to you.",
                 "Grog, you wait. Kima can give you the Broken Howl.")
    assert not [k for k in found if k[1] in ("owns", "gave_to")]


def test_the_party_fights_and_kills() -> None:
    world_foe = Entity("c1", "murghol", "npc", "Murghol")
    lines = [*CALLS, ("LAURA", "Okay."), ("MATT", "You guys fight Murghol in the hall."),
             ("MATT", "You all kill Murghol.")]
    found = facts(extract_knowledge(entries(lines), [*WORLD, world_foe]))
    assert ("vox", "fought", "murghol") in found and ("vox", "killed", "murghol") in found


def test_the_party_the_dm_names_in_narration_is_the_marked_party() -> None:
    found = read("So the party travelled into Emberhold at dawn.")
    fact = found[("vox", "travelled_to", "emberhold")]
    assert fact.attributes["coreference"] == "the_party" and fact.status == "canon"


def test_a_party_at_a_place_or_the_partys_thing_is_not_the_party() -> None:
    found = read("A party travelled into Emberhold at dawn.",
                 "The party's wagon travelled into Emberhold.")
    assert not [k for k in found if k[0] == "vox"]
    no_party = [*CALLS, ("LAURA", "Okay."), ("MATT", "So the party travelled into Emberhold.")]
    assert not facts(extract_knowledge(entries(no_party), GRAPH))


def test_sent_on_a_mission_by_someone_in_search_of_someone() -> None:
    world = [*WORLD, Entity("c1", "allura", "npc", "Allura Vysoren", ["Allura"])]
    found = facts(extract_knowledge(entries([("MATT", (
        "So the party has been sent down on a mission by the arcanist Allura Vysoren in "
        "search of a halfling paladin named Lady Kima."))]), world))
    assert found[("allura", "sent", "vox")].status == "canon"
    assert ("vox", "seeking", "kima") in found


def test_an_active_deed_on_a_mission_has_no_agent_and_a_passive_no_doer() -> None:
    found = facts(extract_knowledge(entries([
        ("MATT", "Clarota fought on a mission by Kima."),
        ("MATT", "The party was taken to Kima.")]), WORLD))
    assert not [k for k in found if {k[0], k[2]} in ({"clarota", "kima"}, {"vox", "kima"})]
