"""Who stays where, said with a relative "where" (issue 16, eighth pass): "Emberhold, ...
where Lady Kima has been held". With near misses that must read nothing. Pure functions over
plain entries."""

from __future__ import annotations

from tests.processing.test_extraction_roles import read, stated


def test_a_person_held_where_a_place_was_just_named_is_held_there() -> None:
    found = read("You're looking at Emberhold itself, the center of the duergar society, "
                 "supposedly where Lady Kima has been held.")
    fact = found[("kima", "held_in", "emberhold")]
    assert fact.attributes["pattern"] == "where" and fact.assertion == "stated"
    assert fact.status == "pending"  # "supposedly": what captives said, for the DM to sign
    assert read("You enter Emberhold, where Lady Kima has been held.")[
        ("kima", "held_in", "emberhold")].status == "canon"
    assert ("murghol", "lives_in", "kraghammer") in read(
        "You enter Kraghammer, where Murghol lives.")


def test_where_after_a_verb_a_question_or_a_hedge_reads_nothing() -> None:
    for text in ("You leave Emberhold, and nobody knows where Lady Kima has been held.",
                 "Where in Emberhold has Lady Kima been held?",
                 "You reach Emberhold, where they believe Lady Kima was.",
                 "You reach Emberhold, where Lady Kima could be held."):
        assert not {k for k in stated(read(text)) if k[1] in ("held_in", "lives_in")}, text
