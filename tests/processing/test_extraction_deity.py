"""The god one serves, said with a noun and a possessor (issue 16, eighth pass): "Bahamut is
her deity" is worship by the person "her" stands for. With near misses that must read
nothing. Pure functions over plain entries."""

from __future__ import annotations

from tests.processing.test_extraction_roles import read, stated


def test_her_deity_after_the_one_person_named_is_that_persons_worship() -> None:
    found = read("The party was hired to find an individual named Lady Kima, and she is a "
                 "halfling paladin. The platinum dragon Bahamut is her deity.")
    fact = found[("kima", "worships", "bahamut")]
    assert fact.attributes["coreference"] == "narration" and fact.status == "pending"
    assert ("pike", "worships", "bahamut") not in found


def test_a_named_possessor_with_god_in_apposition_is_worship() -> None:
    assert ("pike", "worships", "bahamut") in read("Pike kneels before her god, Bahamut.")


def test_a_god_of_nobody_or_a_person_called_god_reads_no_worship() -> None:
    # "oh my god" names nobody; "your god" with no name is no fact; a person is no god
    for text in ("Oh my god, Grog, this is amazing.",
                 "We are going to kill your god, Kima shouts.",
                 "Grog is her god now, Pike laughs."):
        assert not {k for k in stated(read(text)) if k[1] == "worships"}, text

