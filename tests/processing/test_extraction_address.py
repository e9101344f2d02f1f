"""Speech to someone said with a gesture (issue 16, twelfth pass): "she looks up at Grog and
says", "I turn to Clarota, I'm like, ..." is `spoke_with`; a look alone, a point, or words
another says are not. And a "she" after the story turns to an unnamed "queen" is not the
last person named. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, facts
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, read, stated


def test_a_gesture_toward_someone_with_words_after_it_is_speech() -> None:
    assert ("nostoc", "spoke_with", "grog") in read("Nostoc looks at Grog and says, fine.")
    assert ("nostoc", "spoke_with", "grog") in read(
        "Nostoc turns towards Grog and goes, fine.")
    fact = read("Kima waits by the door. She looks up at Grog and says, go.")[
        ("kima", "spoke_with", "grog")]
    assert fact.attributes["coreference"] == "narration" and fact.status == "pending"
    lines = [*CALLS, ("LAURA", "I turn to Clarota, I'm like, that's our friend.")]
    assert ("vex", "spoke_with", "clarota") in facts(extract_knowledge(entries(lines), WORLD))


def test_a_look_a_point_or_another_speaker_is_no_speech() -> None:
    for text in ("Nostoc looks at Grog.",
                 "Nostoc looks at Grog, who says hello.",
                 "Nostoc points at Grog and says, him.",
                 "Nostoc turns to Grog and goes to the door."):
        assert not stated(read(text)), text


def test_she_after_the_story_turns_to_an_unnamed_queen_is_nobody() -> None:
    assert not stated(read("Kima waits by the door. The queen is angry. She looks up at Grog "
                           "and says, go."))
    # said in words the story leaves out (a turn's order is table talk)
    assert not stated(read("Kima waits by the door. It is now the queen's turn. She looks up "
                           "at Grog and says, go."))
