"""Backstories and second verbs (issue 16, sixth pass): a second verb in its own voice, a
birth to a people, a name the story cues although the tagger calls it a date. Each rule with
a near miss that must read nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from glyphoxa_pipelines.processing.extraction.nlp import blank_asides
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, read, stated

TRIBE = [*WORLD, Entity("c1", "airtribe", "faction", "Air Tribe")]


def test_a_second_verb_after_a_passive_is_the_subjects_own_deed() -> None:
    # "was found ... and accompanied": Grog did the accompanying
    found = read("Grog was found in the tavern and accompanied Kima to the gate.")
    assert ("grog", "travelled_with", "kima") in found


def test_a_second_past_participle_keeps_the_passive() -> None:
    # "was beaten and exiled by Kevdak": Kevdak did both, to Grog
    assert ("kevdak", "banished", "grog") in read("Grog was beaten and exiled by Kevdak.")
    # no doer named: nothing, and never Grog as the one who carried
    found = stated(read("Grog was found and carried to Kraghammer."))
    assert not found


def test_born_to_a_people_is_where_one_comes_from() -> None:
    found = facts_of("Born to the Air Tribe, Keyleth was raised with a love of nature.")
    assert ("keyleth", "comes_from", "airtribe") in found


def test_born_to_a_family_or_a_person_is_no_origin() -> None:
    assert not stated(facts_of("Born to a noble family, Keyleth was raised in the hills."))
    assert not [k for k in facts_of("Born to Kohren, Keyleth was raised with care.")
                if k[1] == "comes_from"]


def facts_of(*dm: str) -> dict[tuple[str, str, str], object]:
    result = extract_knowledge(entries([("MATT", t) for t in dm]), TRIBE)
    return {(r.source_id, r.rel_type, r.target_id): r for r in result.relationships}


SARENRAE = [
    "Sarenrae, the goddess of healing, smiles on Pike.",
    "Pike prays to Sarenrae, the goddess of redemption.",
    "The temple of the goddess Sarenrae stands in Kraghammer.",
]


def test_a_name_the_story_cues_is_kept_although_the_tagger_reads_a_date() -> None:
    result = extract_knowledge(entries([("MATT", t) for t in SARENRAE]), WORLD)
    names = {e.name: e.type for e in result.entities}
    assert names.get("Sarenrae") == "concept"


def test_a_date_without_cues_stays_out() -> None:
    lines = ["On Tuesday, Pike walks to Kraghammer.", "Tuesday is cold.",
             "By Tuesday, Grog is hungry."]
    result = extract_knowledge(entries([("MATT", t) for t in lines]), WORLD)
    assert "Tuesday" not in {e.name for e in result.entities}


def test_a_stage_direction_is_blanked_for_the_parser() -> None:
    text = "(soft chuckle) Born to the Air Tribe, Keyleth was raised with a love of nature."
    assert blank_asides(text) == " " * 14 + text[14:]  # offsets kept
    assert ("keyleth", "comes_from", "airtribe") in facts_of(text)


def test_an_aside_that_names_someone_is_kept() -> None:
    for text in ("(as Tiberius) I've been practicing.", "(SFX) Grog swings."):
        assert blank_asides(text) == text


PEOPLES = [*TRIBE, Entity("c1", "ashari", "faction", "Ashari")]


def test_a_peoples_branch_of_its_people_is_part_of_it() -> None:
    result = extract_knowledge(
        entries([("MATT", "Keyleth grew up with the Air Tribe of the Ashari people.")]), PEOPLES)
    found = {(r.source_id, r.rel_type, r.target_id): r for r in result.relationships}
    assert found[("airtribe", "member_of", "ashari")].status == "pending"


def test_a_place_or_a_person_of_a_people_is_not_a_branch() -> None:
    result = extract_knowledge(entries([
        ("MATT", "Kraghammer of the Ashari stands tall. Grog of the Ashari nods.")]), PEOPLES)
    assert not [r for r in result.relationships
                if r.rel_type == "member_of" and r.source_id != "grog"]
