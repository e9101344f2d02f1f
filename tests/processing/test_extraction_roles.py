"""Facts a noun or a borrowed subject carries (issue 16): kinship and standing (`roles`),
participles and second verbs (`implied_subject`). Each rule with a near miss that must read
nothing. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from tests.processing.test_extraction_addressee import CALLS, facts
from tests.processing.test_extraction_nlp import entries

WORLD = [
    Entity("c1", "keyleth", "player", "Keyleth"),
    Entity("c1", "kohren", "npc", "Kohren"),
    Entity("c1", "pike", "npc", "Pike"),
    Entity("c1", "wilhand", "npc", "Wilhand"),
    Entity("c1", "kima", "npc", "Lady Kima", ["Kima"]),
    Entity("c1", "bahamut", "concept", "Bahamut"),
    Entity("c1", "trinket", "creature", "Trinket"),
    Entity("c1", "vex", "player", "Vex'ahlia", ["Vex"]),
    Entity("c1", "vax", "player", "Vax'ildan"),
    Entity("c1", "grog", "player", "Grog"),
    Entity("c1", "kevdak", "npc", "Kevdak"),
    Entity("c1", "percy", "player", "Percy"),
    Entity("c1", "whitestone", "location", "Whitestone"),
    Entity("c1", "clarota", "npc", "Clarota"),
    Entity("c1", "emberhold", "location", "Emberhold"),
    Entity("c1", "murghol", "npc", "Murghol"),
    Entity("c1", "kraghammer", "location", "Kraghammer"),
    Entity("c1", "allura", "npc", "Allura Vysoren", ["Allura"]),
    Entity("c1", "badnews", "item", "Bad News"),
    Entity("c1", "nostoc", "npc", "Nostoc Greyspine", ["Nostoc"]),
    Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True}),
]


def read(*dm: str) -> dict[tuple[str, str, str], object]:
    return facts(extract_knowledge(entries([("MATT", t) for t in dm]), WORLD))


def stated(found: dict[tuple[str, str, str], object]) -> set[tuple[str, str, str]]:
    return {k for k in found if k[1] != "associated_with"}


def test_a_possessive_kin_noun_with_its_name_is_kinship() -> None:
    found = read("Sarenrae had other plans for Pike's great-great-grandfather, Wilhand.")
    fact = found[("wilhand", "relative_of", "pike")]
    assert fact.attributes["role"] == "grandfather" and fact.status == "canon"
    assert ("kohren", "parent_of", "keyleth") in read("Kohren is Keyleth's father.")


def test_her_father_is_the_father_of_the_person_the_narration_follows() -> None:
    found = read("Keyleth grew up in the mountains. In time the headmaster of the tribe, "
                 "her father, Kohren, saw her gift.")
    fact = found[("kohren", "parent_of", "keyleth")]
    assert fact.attributes["coreference"] == "narration" and fact.status == "pending"
    # "her" after a person named in the same sentence is that person's
    assert ("vax", "sibling_of", "vex") in read("Grog nods. Vex looks at her brother, Vax'ildan.")


def test_kin_with_no_one_to_belong_to_reads_nothing() -> None:
    # two people named before "her": whose father is not said; "their": a group
    assert not stated(read("Grog walks in. Kima and Pike look at her father, Kohren."))
    assert not [k for k in read("Kima and Pike greet their friend Kohren.") if k[1] == "friend_of"]
    # a kin noun without a name: nobody to relate
    assert not stated(read("Keyleth waits. Her father is late."))


def test_a_players_bear_named_in_their_own_words_is_theirs() -> None:
    lines = [*CALLS, ("LAURA", "My bear Trinket sleeps by the fire.")]
    fact = facts(extract_knowledge(entries(lines), WORLD))[("vex", "owns", "trinket")]
    assert fact.attributes["coreference"] == "speaker"
    lines = [*CALLS, ("LAURA", "My brother Trinket sleeps by the fire.")]  # kinds do not fit
    assert ("vex", "sibling_of", "trinket") not in facts(extract_knowledge(entries(lines), WORLD))


def test_a_copula_with_a_devotee_noun_reads_worship_past_an_aside() -> None:
    found = read("You recall that Lady Kima was, specifically, a paladin of Bahamut.")
    assert ("kima", "worships", "bahamut") in found
    # a devotee "of" a place is no worship
    assert not [k for k in read("Lady Kima was a paladin of Emberhold.") if k[1] == "worships"]


def test_a_participle_tells_what_was_done_to_the_clauses_subject() -> None:
    assert ("kevdak", "banished", "grog") in read(
        "Beaten and banished by his uncle Kevdak, Grog was left to die.")
    assert ("clarota", "rescued", "kima") in read("Kima, freed by Clarota, walked out.")
    assert ("percy", "comes_from", "whitestone") in read(
        "Born in Whitestone, Percy learned to build guns.")
    found = read("After killing Murghol, Grog left Emberhold.")
    assert ("grog", "killed", "murghol") in found and ("grog", "left", "emberhold") in found


def test_the_one_hired_goes_the_one_asked_is_not_said_to() -> None:
    found = read("So the party was hired to go into Kraghammer seeking Lady Kima.")
    assert ("vox", "travelled_to", "kraghammer") in found and ("vox", "seeking", "kima") in found
    found = read("Kima asked Grog to free Clarota.")
    assert not [k for k in found if k[1] == "rescued"]
    # a passive with nobody named as the doer stays unread; seeing someone is no deed
    assert not stated(read("Percy was taken to Whitestone.", "Seeing Kevdak, Grog ran."))


def test_prepositional_idioms_say_who_sent_whom_and_what_they_seek() -> None:
    found = read("The party had been travelling into the city of Kraghammer at the behest of "
                 "arcanist Allura Vysoren in search of a halfling paladin named Lady Kima.")
    assert ("allura", "sent", "vox") in found and ("vox", "seeking", "kima") in found
    assert ("vox", "travelled_to", "kraghammer") in found
    found = read("Kima looks at the map of Kraghammer in search of food.",
                 "Kima waits at the request of the guards.")
    assert not [k for k in found if k[1] in ("seeking", "sent")]


def test_a_path_taken_towards_a_place_is_travel_but_a_guide_rules_nobody() -> None:
    found = read("Keyleth waits. As she hiked down the mountain towards Whitestone, she rested.")
    assert ("keyleth", "travelled_to", "whitestone") in found
    assert ("grog", "travelled_to", "emberhold") in read("Grog walks into Emberhold.")
    found = read("Grog ran into Kima at the gate.", "Tiberius leads you guys to Kraghammer.")
    assert not [k for k in found if k[1] in ("travelled_to", "leader_of")]


def quoted(*lines: tuple[str, str]) -> dict[tuple[str, str, str], object]:
    return facts(extract_knowledge(entries(list(lines)), WORLD))


def test_an_npcs_my_in_a_quote_the_narration_gives_them_is_theirs() -> None:
    found = quoted(("MATT", "Kima comes over and says,"),
                   ("MATT", '"Under the words of my dear friend Allura, I came here."'))
    fact = found[("allura", "friend_of", "kima")]
    assert fact.attributes["coreference"] == "quote" and fact.status == "pending"
    # the same quote, introduced inside the turn
    found = quoted(("MATT", 'Kima steps up and goes, "Be calm. My friend Allura sent me."'))
    assert ("allura", "friend_of", "kima") in found


def test_she_says_is_the_one_npc_of_the_scene_called_she() -> None:
    # the session speaks of Kima as "she" (three times), of Clarota never so
    lines = [("MATT", "Kima draws her sword. Kima raises her shield. Kima turns her head."),
             ("MATT", "Clarota waits by the door."),
             ("SAM", "Hello?"),
             ("MATT", "She looks to you for a second and says,"),
             ("MATT", '"My friend Allura sent me here."')]
    assert ("allura", "friend_of", "kima") in quoted(*lines)
    # two NPCs of the scene called "she": nobody
    both = [("MATT", "Pike draws her mace. Pike raises her shield. Pike turns her head."),
            *lines]
    assert not [k for k in quoted(*both) if k[1] == "friend_of"]


def test_a_quote_with_no_one_or_two_introduced_has_no_speaker() -> None:
    found = quoted(("MATT", 'Kima and Clarota look at you and one says, "My friend Allura '
                            'sent me."'),
                   ("MATT", 'Kima nods. "My friend Allura sent me."'))
    assert not [k for k in found if k[1] == "friend_of"]
    # a quote the narration does not introduce, even right after Kima spoke
    found = quoted(("MATT", "Kima comes over and says,"), ("MATT", '"Well met."'),
                   ("MATT", "Clarota steps in front of Murghol."),
                   ("MATT", '"My friend Allura sent me."'))
    assert not [k for k in found if k[1] == "friend_of"]


def test_a_named_thing_said_to_be_someones_is_theirs() -> None:
    assert ("kima", "owns", "badnews") in read("Grog looks at Kima's Bad News.")
    found = read("Grog, you pick up the Bad News, your crazy gun.")
    assert found[("grog", "owns", "badnews")].attributes["coreference"] == "vocative"
    # a possessive on a thing with no name, or on a person: no possession
    assert not [k for k in read("Kima's sword strikes Grog's shield.", "Kima's Grog waits.")
                if k[1] == "owns"]


def test_your_thing_read_from_the_last_speaker_yields_to_a_name_in_the_sentence() -> None:
    lines = [*CALLS, ("TRAVIS", "Okay."),
             ("MATT", "Goblin side for Percy, setting up the Bad News, your crazy gun.")]
    found = facts(extract_knowledge(entries(lines), WORLD))
    assert not [k for k in found if k[1] == "owns"]  # not Grog's, whose player spoke last
    # the DM spoke after the table's chatter: TRAVIS is the one player who answered since
    lines = [*CALLS, ("MATT", "Go on."), ("TRAVIS", "Okay."),
             ("MATT", "You set up the Bad News, your crazy gun.")]
    found = facts(extract_knowledge(entries(lines), WORLD))
    assert found[("grog", "owns", "badnews")].attributes["coreference"] == "reply"


def test_they_right_after_the_party_is_the_party_and_goes_to_review() -> None:
    found = read("So the party arrived in Kraghammer. Upon arriving, they were then hired by "
                 "lord Nostoc to go into the mines. They found Kima in the dark.")
    hired = found[("nostoc", "quest_giver", "vox")]
    assert hired.attributes["coreference"] == "party_they" and hired.status == "pending"
    assert ("vox", "met", "kima") in found


def test_they_after_two_people_or_far_from_the_party_is_nobody() -> None:
    found = read("So the party arrived in Kraghammer. Grog and Kima argued. They found Clarota.",
                 "So the party arrived. It was late. The road was long. The sun set. They "
                 "found Kima.",
                 "The duergar gather. They found Kima in the dark.")
    assert not [k for k in found if k[1] == "met"]


RECAP = ("The road was long and the nights were cold and wet in the hills. " * 12
         + "So, a little overview for the story: the party has been sent to the city of "
         "Kraghammer by a good friend of theirs. Upon getting to Kraghammer, they were then "
         "hired by lord Nostoc to go into the mines.")


def test_the_dms_recap_before_the_story_starts_is_read() -> None:
    # the classifier takes the lines before "last we left off" for the pre-show
    lines = [("MATT", "Welcome, everyone, to the show tonight!"), ("MATT", RECAP),
             ("SAM", "Hooray."), ("MATT", "And so last we left off, you stand at the gate."),
             *[("MATT", "You wait at the gate.")] * 12]
    found = facts(extract_knowledge(entries(lines), WORLD))
    assert ("nostoc", "quest_giver", "vox") in found


def test_a_long_dm_turn_before_the_story_that_tells_no_party_story_stays_out() -> None:
    chatter = "We had a great week and the merch store is open, so go and have a look. " * 12
    lines = [("MATT", "Welcome, everyone!"),
             ("MATT", chatter + "Lord Nostoc hired them to go into the mines."),
             ("SAM", "Hooray."), ("MATT", "And so last we left off, you stand at the gate."),
             *[("MATT", "You wait at the gate.")] * 12]
    found = facts(extract_knowledge(entries(lines), WORLD))
    assert not [k for k in found if k[0] == "nostoc"]
