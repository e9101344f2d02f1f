"""The DM's recap of the party's story (issue 16, sixth pass): its "they" before and after
"the party", "found their way to X", a place said through a plural noun ("the dungeons of
X"); eighth pass: a short recap line among the show's opening words, a find set as a task.
Each rule with a near miss that must read nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import facts
from tests.processing.test_extraction_nlp import entries
from tests.processing.test_extraction_roles import WORLD, read, stated

FILLER = "The caverns were dark and the nights were long and cold beneath the mountain. " * 10


def test_they_in_a_recap_before_the_party_is_named_is_the_party() -> None:
    found = read("So they went seeking Kima beneath the city. After much fighting, they "
                 "managed to find their way to a fortress called Emberhold. They stormed the "
                 "throne room and managed to slay King Murghol. " + FILLER
                 + "The party then had to make a heated escape.")
    slain = found[("vox", "killed", "murghol")]
    assert slain.attributes["coreference"] == "party_they" and slain.status == "pending"
    assert ("vox", "travelled_to", "emberhold") in found


def test_they_in_a_recap_next_to_two_people_or_in_a_long_turn_without_the_party() -> None:
    # two people named just before: "they" may be those two
    found = read("Grog and Kima argued by the gate. They managed to slay King Murghol. "
                 + FILLER + "The party then had to make a heated escape.")
    assert not [k for k in found if k[1] == "killed"]
    # a long turn that never says "the party ...": no recap, "they" is nobody
    found = read("So they went into the deep. They managed to slay King Murghol. " + FILLER)
    assert not [k for k in found if k[1] == "killed"]


def test_finding_ones_way_to_a_place_is_travel() -> None:
    assert ("grog", "travelled_to", "emberhold") in read(
        "Grog finds his way to Emberhold.")
    # "find it in X" is no journey, and "find a way to X" with no one doing it is none
    assert not [k for k in read("Grog finds it in Emberhold.", "A way to Emberhold is found.")
                if k[1] == "travelled_to"]


def test_a_place_named_through_a_plural_place_noun_is_a_location() -> None:
    lines = ["Kima is held in the dungeons of Belmora.", "Belmora is where Kima waits.",
             "Belmora.", "Grog mutters about Belmora."]
    found = {e.name: e.type for e in
             extract_knowledge(entries([("MATT", t) for t in lines]), WORLD).entities}
    assert found.get("Belmora") == "location"
    # "the streets of X" says where, not what X is: no description from it
    lines = ["Kima walks the streets of Belmora.", "Belmora is loud.", "Belmora.",
             "Grog mutters about Belmora."]
    made = extract_knowledge(entries([("MATT", t) for t in lines]), WORLD).entities
    assert all(e.attributes.get("description") != "street" for e in made)


def test_the_one_sent_to_a_place_went_there() -> None:
    found = read("So the party has been sent to the city of Kraghammer by a friend.",
                 "Grog was sent into Emberhold by Allura.")
    assert ("vox", "travelled_to", "kraghammer") in found
    assert ("grog", "travelled_to", "emberhold") in found


def test_the_sender_did_not_go() -> None:
    found = read("Allura sent Grog to Kraghammer.")
    assert ("allura", "sent", "grog") in found
    assert not [k for k in found if k[1] == "travelled_to"]


def test_the_party_members_are_not_the_party() -> None:
    # "some of the party members": a part of the company, and the next "they" may be them
    found = read("Grog waits. Some of the party members are stone. They found Kima.")
    assert not [k for k in found if k[1] == "met"]
    assert ("vox", "met", "kima") in read("Grog waits. The party is tired. They found Kima.")


def test_a_find_set_as_a_task_is_seeking_not_meeting() -> None:
    found = stated(read("The party was hired to find Lady Kima."))
    assert ("vox", "seeking", "kima") in found
    assert ("vox", "met", "kima") not in found
    # near miss: the finding itself is a meeting
    found = stated(read("The party found Lady Kima in the cell."))
    assert ("vox", "met", "kima") in found and ("vox", "seeking", "kima") not in found


SHOW_OPENING = ("Welcome, everyone. So we're a bunch of voice actors who play Dungeons & "
                "Dragons, and this is our campaign. ")
# the DM's "last we left off" three turns later: what comes before it is the show's opening
STORY_STARTS = [("MATT", "So, last we left off, you stood at the gate of the fortress."),
                ("LAURA", "I look around."), ("MATT", "The gate is shut."),
                ("TRAVIS", "I knock."), ("MATT", "Nobody answers."), ("LAURA", "Okay.")]


def opening(text: str) -> dict[tuple[str, str, str], object]:
    return facts(extract_knowledge(entries([("MATT", SHOW_OPENING + text), *STORY_STARTS]),
                                   WORLD))


def test_a_short_recap_among_the_shows_opening_words_is_read() -> None:
    found = opening("To give you a heads-up on the story so far, the party was hired to find "
                    "an individual named Lady Kima, and she is a halfling paladin. The platinum "
                    "dragon Bahamut is her deity.")
    assert ("vox", "seeking", "kima") in found
    assert ("kima", "worships", "bahamut") in found
    # "the party managed to ..." tells the story too
    found = opening("For those who just joined us, the party managed to make their way to "
                    "Kraghammer. They were looking for Lady Kima of Vord.")
    assert ("vox", "travelled_to", "kraghammer") in found


def test_a_short_opening_line_that_tells_no_party_story_stays_out() -> None:
    # near miss: the same opening, names said about the show, no "the party was / had ..."
    found = opening("Lady Kima is a halfling paladin on our poster. The platinum dragon "
                    "Bahamut is her deity.")
    assert not stated(found)
