"""'Previously on...' told in the story's terms: characters, the goal, the last scene."""

from __future__ import annotations

import re

from glyphoxa_pipelines.memory.models import SessionSummary
from glyphoxa_pipelines.processing.recaps import RECAP_VERSION, recap_from_summary, third_person

SCENES = [
    ["The archmage Allura offers the party a large reward should they find Lady Kima of Vord.",
     "You leave Emon on the long road north toward the dwarven city of Kraghammer."],
    ["At the gates of Kraghammer the guards study your papers before letting you in.",
     "Vex'ahlia buys a round of ale for every dwarf in the Iron Hearth tavern."],
    ["Lord Nostoc Greyspine agrees to open the sealed mine if you clear it of the creatures.",
     "Grog wrestles the champion Balgus in the brawling ring and wins the crowd."],
    ["Deep in the mine the tunnels are choked with strange crimson vines that pull at you.",
     "An ogre crashes down the quarry wall and falls lifeless at the feet of Percy."],
    ["At the bottom of the quarry a massive vine creature rises and wraps Scanlan in its "
     "tendrils, dragging him toward a dark fissure that leads deeper into the mountain."],
]


def story_summary() -> SessionSummary:
    paragraphs = [" ".join(p) for p in SCENES]
    points = [s for p in SCENES for s in p]
    return SessionSummary("s1", "c1", "\n\n".join(paragraphs), points, method="story-v1")


def test_recap_names_characters_goal_and_ends_on_the_last_scene() -> None:
    recap = recap_from_summary(
        story_summary(), campaign_name="Critical Role",
        characters=["Grog", "Vex'ahlia", "Scanlan", "Percy"],
        facts=["Kima of Vord is a paladin"],
    )
    text = recap.text
    assert recap.method == RECAP_VERSION
    assert text.startswith("Previously, on Critical Role…")
    assert "We return to Grog, Vex'ahlia, Scanlan and Percy." in text
    assert "find Lady Kima of Vord" in text  # the goal
    last = text.index("When we left them,")
    assert "vine creature rises and wraps Scanlan" in text[last:]  # the cliffhanger
    body = text.split("\n", 1)[1]
    assert 150 <= len(body.split()) <= 250
    # third person, whole sentences, nobody "declared" anything
    assert not re.search(r"\byou\b|\byour\b", body, re.I)
    assert "declared" not in body
    assert all(s.strip()[-1] in ".!?”\"…" for s in body.split("\n") if s.strip())
    assert recap_from_summary(story_summary(), campaign_name="Critical Role").text == (
        recap_from_summary(story_summary(), campaign_name="Critical Role").text)


def test_recap_drops_table_lines_and_stays_within_length() -> None:
    summary = story_summary()
    long = SessionSummary("s1", "c1", summary.summary,
                          ["ROOK: I swear I will find the Moonstone.", *summary.key_points * 3])
    recap = recap_from_summary(long)
    assert "ROOK" not in recap.text and "Rook" not in recap.text
    assert len(recap.text.split()) <= 250


def test_third_person_tells_subject_from_object() -> None:
    assert third_person("You see your reflection.") == "Our heroes see their reflection."
    assert third_person("The next morning you climb the hill.") == (
        "The next morning they climb the hill.")
    assert third_person("The guard hands you a key.") == "The guard hands them a key."
    assert third_person("He looks at you.") == "He looks at them."
    assert third_person("As you enter, the dwarf greets you.") == (
        "As they enter, the dwarf greets them.")
    assert third_person("The dragon attacked you and you fled.") == (
        "The dragon attacked them and they fled.")


def test_recap_reads_aloud_without_leaning_on_what_it_left_out() -> None:
    scenes = [
        ["Grimjaw hands Brannoc a heavy hammer wrapped in oilcloth in the Rusty Anvil.",
         "He forged it himself, he says, from ore dug out of the Thal Durin mines.",
         "Last time, you met Grimjaw at the Rusty Anvil and the wizard Eldrinax.",
         "Lady Vexmira invites you to dine at her manor on the hill above Ironhold."],
        ['Eldrinax says, "Ask her yourself, if you dare, in the Tower of Whispers."',
         "Vex, you pick up the trail of the Silver Widow toward the old barracks.",
         "The next morning you climb the hill to the Tower of Whispers in the rain."],
        ["We'll pick up next game as you head up the stairs into the barracks of the Watch."],
    ]
    summary = SessionSummary("s2", "c1", "\n\n".join(" ".join(p) for p in scenes),
                             [s for p in scenes for s in p], method="story-v2")
    body = recap_from_summary(summary).text.split("\n", 1)[1]
    assert "Grimjaw hands Brannoc a heavy hammer" in body
    assert "forged it himself" not in body  # "he" names nobody the listener heard of
    assert "Last time" not in body and "last time" not in body  # the session before
    assert '"' not in body and "Vex, they" not in body  # no quote, no DM talking to a player
    assert "Lady Vexmira invites them" in body  # a title keeps its capital
    assert "The next morning they climb the hill" in body  # its own transition
    assert "When we left them, our heroes head up the stairs into the barracks" in body


def test_you_before_a_verb_is_a_subject_even_after_a_plural() -> None:
    from glyphoxa_pipelines.processing.recaps import third_person

    assert third_person("The goblin corpses you come across have a wound.") == (
        "The goblin corpses they come across have a wound.")
    assert third_person("The guard hands you a sword.") == "The guard hands them a sword."
