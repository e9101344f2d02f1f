"""Facts in shapes the verb reader missed (issue 16, twelfth pass): a relative clause's
subject ("Nostoc, who rules Kraghammer", "Nostoc is the one that rules Kraghammer") and a
move into a place out of sight or in a rush ("she disappeared into the Mithril mines"), a kin
noun set beside a name ("Allura, Kima's friend"). Each rule with a near miss that must read
nothing. Pure functions over plain entries."""

from __future__ import annotations

from tests.processing.test_extraction_roles import read, stated


def test_a_relative_pronoun_subject_is_the_noun_it_follows() -> None:
    assert ("nostoc", "leader_of", "kraghammer") in read(
        "Nostoc Greyspine, who rules Kraghammer, nods.")
    assert ("nostoc", "leader_of", "kraghammer") in read(
        "Nostoc is the one that rules Kraghammer.")


def test_a_relative_clause_denied_or_hung_far_from_its_noun_reads_nothing() -> None:
    assert ("nostoc", "leader_of", "kraghammer") not in read(
        "Nostoc is not the one that rules Kraghammer.")
    # the parser hangs a later "who" on an earlier name, across the sentence's own verb
    found = read("Nostoc was kidnapped by the queen mage before she could be slain, who then "
                 "also ruled Kraghammer.")
    assert ("nostoc", "leader_of", "kraghammer") not in found
    # the relative pronoun as an object is nobody's subject
    assert ("kraghammer", "leader_of", "nostoc") not in read(
        "Kraghammer is the city that Nostoc rules.")


def test_a_move_into_a_place_out_of_sight_or_in_a_rush_is_travel() -> None:
    assert ("kima", "travelled_to", "emberhold") in read("Kima disappeared into Emberhold.")
    assert ("grog", "travelled_to", "kraghammer") in read(
        "Grog, you charge into Kraghammer.")
    fact = read("Kima waits. Then she sneaks into Emberhold.")[
        ("kima", "travelled_to", "emberhold")]
    assert fact.attributes["coreference"] == "narration" and fact.status == "pending"


def test_a_move_into_a_person_or_a_plan_to_move_reads_no_travel() -> None:
    assert not stated(read("Kima disappears into the crowd."))
    assert not [k for k in read("Grog charges into Kima.") if k[1] == "travelled_to"]
    assert not [k for k in read("Kima could sneak into Emberhold.") if k[1] == "travelled_to"]
    assert not [k for k in read("Kima rushes to Emberhold's gate.") if k[1] == "travelled_to"]


def test_a_kin_noun_set_beside_a_name_is_that_names_kin() -> None:
    assert ("allura", "friend_of", "kima") in read("Allura Vysoren, Kima's friend, nods.")
    assert ("vax", "sibling_of", "vex") in read("Vax'ildan, Vex's twin brother, nods.")


def test_a_kin_noun_beside_a_name_with_no_other_owner_reads_nothing() -> None:
    # no possessor: whose friend is not said; "her" right after the name is not another's
    assert not stated(read("Kima waits. Allura Vysoren, the friend, nods."))
    assert not stated(read("Kima waits. Vax'ildan, her brother, nods."))
    # the noun stands beside a thing, not a name
    assert not stated(read("Allura Vysoren holds the letter, Kima's friend's gift."))
