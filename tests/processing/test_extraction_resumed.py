"""Facts across a sentence its speaker broke off and picked up after someone cut in
(`resumed`), and kin a person is said to have ("I have a bear named Trinket", `roles`)
(issue 16). Each rule with a near miss that must read nothing. Pure functions over plain
entries."""

from __future__ import annotations

from glyphoxa_pipelines.processing.extraction import extract_knowledge
from glyphoxa_pipelines.processing.extraction.name_spans import session_sentences
from glyphoxa_pipelines.processing.extraction.resumed import joined, resumed_turns
from tests.processing.test_extraction_addressee import CALLS, facts
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, read, stated


def kin(lines: list[tuple[str, str]]) -> set[tuple[str, str, str]]:
    return stated(facts(extract_knowledge(entries([*CALLS, *lines]), WORLD)))


def test_a_sentence_picked_up_after_a_cut_in_is_one_sentence() -> None:
    lines = [("LAURA", "I play Vex'ahlia. And I have an amazing--"), ("SAM", "Ranger!"),
             ("LAURA", "-- companion bear named Trinket. He is the best.")]
    assert resumed_turns(entries(lines)) == {0: 2}
    texts = [s.text for s in session_sentences(entries(lines))]
    assert texts == ["I play Vex'ahlia.", "And I have an amazing -- companion bear named Trinket.",
                     "Ranger!", "He is the best."]
    assert joined("so please excuse my--", "--challenged friends.") == (
        "so please excuse my -- challenged friends.")


def test_a_broken_off_sentence_nobody_picks_up_stays_two() -> None:
    # the speaker's next turn starts afresh; another speaker's dash is not theirs
    assert resumed_turns(entries([("LAURA", "And I have an amazing--"),
                                  ("LAURA", "Wait, what was that?")])) == {}
    assert resumed_turns(entries([("LAURA", "And I have an amazing--"),
                                  ("SAM", "-- companion bear named Trinket.")])) == {}
    # cut off after a phrase that could end: a fresh start, whose "you" is not "you guys"
    assert resumed_turns(entries([("MATT", "As you guys begin to wander off--"),
                                  ("LAURA", "Wait!"), ("MATT", "-- Vax, you vanish.")])) == {}
    # picked up too late: four other turns between
    late = [("LAURA", "And I have an amazing--"), *[("SAM", "Hm.")] * 4,
            ("LAURA", "-- companion bear named Trinket.")]
    assert resumed_turns(entries(late)) == {}


def test_the_kin_a_player_says_they_have_across_a_cut_in_is_theirs() -> None:
    found = kin([("LAURA", "I play Vex'ahlia. And I have an amazing--"), ("SAM", "Ranger!"),
                 ("LAURA", "-- companion bear named Trinket.")])
    assert ("vex", "owns", "trinket") in found
    # not picked up: the bear is in a sentence of its own, with nobody who has it
    assert ("vex", "owns", "trinket") not in kin([
        ("LAURA", "I play Vex'ahlia. And I have an amazing--"), ("SAM", "Ranger!"),
        ("LAURA", "A companion bear named Trinket.")])


def test_have_with_a_kin_noun_and_its_name_is_kinship() -> None:
    assert ("vax", "sibling_of", "vex") in read("Vex has a twin brother, Vax'ildan.")
    fact = facts(extract_knowledge(entries([*CALLS, ("LAURA", "I have a bear named Trinket.")]),
                                   WORLD))[("vex", "owns", "trinket")]
    assert fact.attributes["coreference"] == "speaker" and fact.status == "pending"


def test_have_denied_asked_or_wished_reads_nothing() -> None:
    for line in ("I don't have a bear named Trinket.", "Do I have a bear named Trinket?",
                 "I would have a bear named Trinket."):
        assert ("vex", "owns", "trinket") not in kin([("LAURA", line)]), line
    # the one who has it must be one: "Vex and Kima have a friend named Pike" says whose?
    assert not [k for k in read("Vex and Kima have a friend named Pike.") if k[1] == "friend_of"]
