"""A quote that names its own speaker ("My name is Clarota.", `self_naming`): the quote is
that NPC's, who spoke with the character it answered (issue 16, twelfth pass). Each rule
with a near miss that must read nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, facts
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD


def found(lines: list[tuple[str, str]]) -> dict[tuple[str, str, str], object]:
    return facts(extract_knowledge(entries([*CALLS, *lines]), WORLD))


def test_a_quote_that_names_its_speaker_is_that_npcs_reply() -> None:
    fact = found([("MATT", "A figure steps out."), ("TRAVIS", "Who are you?"),
                  ("MATT", '"My name is Clarota."')])[
        ("clarota", "spoke_with", "grog")]
    assert fact.attributes["coreference"] == "reply" and fact.status == "pending"
    # the name said after a pause, as its own sentence
    assert ("clarota", "spoke_with", "grog") in found([
        ("TRAVIS", "Speak."), ("MATT", '"We shall talk." '), ("TRAVIS", "Good."),
        ("MATT", '"My name... Clarota."')])


def test_the_quotes_i_is_the_npc_and_a_name_question_says_who_asked() -> None:
    result = found([("TRAVIS", "Hello."), ("LAURA", "What was your name, again?"),
                    ("MATT", 'The dwarf looks at you, goes, "My name is Clarota. I serve '
                             'Lady Kima."')])
    assert ("clarota", "spoke_with", "vex") in result
    assert ("clarota", "serves", "kima") in result


def test_a_name_that_is_not_the_speakers_reads_nothing() -> None:
    result = found([("MATT", "A figure steps out."), ("TRAVIS", "Who?"),
                    ("MATT", '"I am Clarota\'s friend. I serve Lady Kima."')])
    assert ("clarota", "serves", "kima") not in result
    assert not [k for k in result if k[1] == "spoke_with"]
    # two players spoke before the DM: whom the NPC answers is not said
    assert not [k for k in found([("MATT", "A figure steps out."), ("TRAVIS", "Hi."),
                                  ("LAURA", "Hello there."),
                                  ("MATT", '"My name is Clarota."')]) if k[1] == "spoke_with"]
    # a player's own words name no NPC speaker
    assert not [k for k in found([("MATT", "A figure steps out."), ("LAURA", "Who?"),
                                  ("TRAVIS", '"My name is Clarota."')])
                if k[1] == "spoke_with"]
