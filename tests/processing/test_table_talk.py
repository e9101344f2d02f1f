"""In-game vs table talk, on lines written for the purpose and on a real CRD3 episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_pipelines.processing.table_talk import (
    TableContext,
    TableLine,
    TalkKind,
    classify_sentence,
    classify_transcript,
    in_game_sentences,
)

CTX = TableContext.build(
    dm_speakers=["MATT"],
    cast=["LAURA", "SAM", "TRAVIS", "Laura"],
    world_names=["Grog", "Vex'ahlia", "Kraghammer", "Lady Kima"],
)

TABLE = [
    ("SAM", "I rolled a natural 20 on that."),
    ("MATT", "Roll initiative."),
    ("LAURA", "Is it my turn?"),
    ("MATT", "That's 14 points of fire damage."),
    ("MATT", "Make a perception check."),
    ("LAURA", "Do I have advantage on that?"),
    ("MATT", "We're going to take a quick break."),
    ("MATT", "This episode is brought to you by Wyrmwood, go check out their website."),
    ("MATT", "We won't be playing next week because of the convention."),
    ("SAM", "Is my mic working? The audio keeps cutting out."),
    ("TRAVIS", "Laura, pass me the chips."),
    ("LAURA", "Oh no."),
    ("MATT", "What do you do?"),
    ("LAURA", "Okay, still 14."),
    ("SAM", "(laughter)"),
]
STORY = [
    ("MATT", "You arrive at the gates of Kraghammer as the sun sets.", TalkKind.NARRATION),
    ("MATT", "The dwarf slams his tankard down and glares at the party.", TalkKind.NARRATION),
    ("MATT", '"I have not seen Lady Kima in weeks," he says.', TalkKind.IN_CHARACTER),
    ("MATT", "I am the keeper of this gate, and you shall not pass.", TalkKind.IN_CHARACTER),
    ("TRAVIS", "I grab the goblin by the throat and lift him off the ground.",
     TalkKind.IN_CHARACTER),
    ("LAURA", "We will find Lady Kima, I swear it.", TalkKind.IN_CHARACTER),
    ("MATT", "Grog, the mine cart rattles down into the dark.", TalkKind.NARRATION),
]


@pytest.mark.parametrize(("speaker", "text"), TABLE)
def test_table_talk_is_outside_the_story(speaker: str, text: str) -> None:
    assert classify_sentence(text, speaker, CTX) is TalkKind.TABLE_TALK


@pytest.mark.parametrize(("speaker", "text", "kind"), STORY)
def test_story_lines_are_in_game(speaker: str, text: str, kind: TalkKind) -> None:
    got = classify_sentence(text, speaker, CTX)
    assert got is kind and got.in_game


def test_cast_names_mark_table_talk_but_world_names_win() -> None:
    assert classify_sentence("Laura wants to go to the inn.", "SAM", CTX) is TalkKind.TABLE_TALK
    # a speaker label that is also an in-game name belongs to the world
    ctx = TableContext.build(dm_speakers=["DM"], cast=["Grog"], world_names=["Grog"])
    assert ctx.mentions_world("Grog swings his axe.") and not ctx.mentions_cast("Grog")
    # possessives still count as the name
    assert CTX.mentions_world("Grog's axe shatters.")


def test_roles_decide_system_and_npc_lines() -> None:
    assert classify_sentence("The guard opens the gate.", "bot", CTX, "system") is (
        TalkKind.TABLE_TALK)
    assert classify_sentence("Welcome, travellers.", "Sildar", CTX, "npc") is (
        TalkKind.IN_CHARACTER)


def test_transcript_state_pre_show_break_and_sign_off() -> None:
    lines = [
        TableLine("SAM", "Hi, I'm Sam and I play a gnome who sings a lot.", "player"),
        TableLine("MATT", "Welcome everyone to our weekly adventure!", "dm"),
        TableLine("LAURA", "The coolest ranger ever sits right here.", "player"),
        TableLine("MATT", "Last we left off, you had entered the city of Kraghammer.", "dm"),
        TableLine("TRAVIS", "I order a cask of ale from the barkeep.", "player"),
        TableLine("MATT", "All right, let's take a quick break here.", "dm"),
        TableLine("SAM", "The new figures look amazing tonight.", "player"),
        TableLine("MATT", "And welcome back.", "dm"),
        TableLine("MATT", "The barkeep slides the cask across the bar toward Grog.", "dm"),
    ] + [TableLine("MATT", "The torches flicker in the long hall.", "dm")] * 40 + [
        TableLine("MATT", "And that's where we'll end tonight.", "dm"),
        TableLine("LAURA", "That one fight went on so long my legs fell asleep.", "player"),
    ]
    kinds = {}
    for s in classify_transcript(lines):
        kinds.setdefault(s.line_index, set()).add(s.kind)
    assert kinds[0] == kinds[1] == kinds[2] == {TalkKind.TABLE_TALK}  # pre-show
    assert TalkKind.NARRATION in kinds[3]
    assert kinds[4] == {TalkKind.IN_CHARACTER}
    assert kinds[6] == {TalkKind.TABLE_TALK}  # during the break
    assert kinds[8] == {TalkKind.NARRATION}
    assert kinds[len(lines) - 1] == {TalkKind.TABLE_TALK}  # after the sign-off
    story = in_game_sentences(lines)
    assert story and all(s.kind.in_game for s in story)
    assert "I order a cask of ale from the barkeep." in [s.text for s in story]


def test_context_from_lines_takes_cast_from_speakers() -> None:
    lines = [TableLine("MATT", "You enter the hall.", "dm"),
             TableLine("LAURA, SAM", "We follow.", "player"),
             TableLine("ALL", "Yes!", "player")]
    ctx = TableContext.from_lines(lines, world_names=["Grog"])
    assert ctx.dm_speakers == {"matt"}
    assert {"matt", "laura", "sam"} <= ctx.cast and "all" not in ctx.cast
    # no role given: the most talkative speaker is the DM
    ctx2 = TableContext.from_lines([TableLine("A", "one two three four"), TableLine("B", "hi")])
    assert ctx2.dm_speakers == {"a"}


def test_real_episode_pre_show_and_story(shared_data: Path) -> None:
    path = shared_data / "crd3" / "cleaned" / "C1E001.json"
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path}")
    turns = json.loads(path.read_text())["TURNS"]
    lines = [TableLine(", ".join(t["NAMES"]), " ".join(t["UTTERANCES"]),
                       "dm" if t["NAMES"] == ["MATT"] else "player") for t in turns]
    classified = classify_transcript(lines)
    by_text = {s.text: s.kind for s in classified}
    # the pre-recorded character videos and the cast's introductions come before the story
    assert by_text["I'm playing Vex'ahlia."] is TalkKind.TABLE_TALK
    assert all(s.kind is TalkKind.TABLE_TALK for s in classified if "826LA" in s.text)
    assert by_text["You were ambushed by a group of roaming barbarian goliaths."] is (
        TalkKind.NARRATION)
    share = sum(s.kind is TalkKind.TABLE_TALK for s in classified) / len(classified)
    assert 0.2 < share < 0.6
