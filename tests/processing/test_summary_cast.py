"""Who plays whom, and players' words retold as their characters' deeds (for summaries)."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.processing.cast import infer_characters
from glyphoxa_pipelines.processing.retelling import (
    retell_address,
    retell_declaration,
    retell_vocative,
    third_person_verb,
)
from glyphoxa_pipelines.processing.table_talk import TableLine


def test_self_introductions_and_the_dm_calling_on_players() -> None:
    lines = [
        TableLine("LAURA", "Hi, I'm Laura and I'm playing Vex'ahlia, the ranger.", "player"),
        TableLine("SAM", "My character is Scanlan, a gnome bard.", "player"),
        TableLine("TRAVIS", "Hey everyone.", "player"),
        TableLine("MATT", "Last we left off, you were in Kraghammer.", "dm"),
    ]
    for _ in range(6):  # the DM calls on Travis's character after Travis speaks
        lines += [TableLine("TRAVIS", "I smash the door.", "player"),
                  TableLine("MATT", "Grog, the door splinters under your axe.", "dm"),
                  TableLine("LAURA", "Nice.", "player"),
                  TableLine("MATT", "Vex, the hall behind you is quiet.", "dm")]
    mapping = infer_characters(lines)
    assert mapping["LAURA"] == "Vex'ahlia"  # her own word, though the DM says "Vex"
    assert mapping["TRAVIS"] == "Grog"
    assert "SAM" not in mapping  # Scanlan never appears in the DM's story: not a character yet
    assert "MATT" not in mapping


def test_no_guess_without_evidence() -> None:
    lines = [TableLine("MATT", "You enter the hall.", "dm"),
             TableLine("SAM", "I look around.", "player")]
    assert infer_characters(lines) == {}


@pytest.mark.parametrize(("said", "retold"), [
    ("I drag her to her feet.", "Vax drags her to her feet."),
    ("Okay, I reach for the sword.", "Vax reaches for the sword."),
    ("I'm going to assist her with my dagger.", "Vax is going to assist her with their dagger."),
    ("I try to pick the lock on the chest.", "Vax tries to pick the lock on the chest."),
    ("I think we should go.", None),  # an opinion, not a deed
    ("We grab a table.", None),  # the party, not the character
    ("I walk up to the guard and show him the letter.", None),  # a verb we would not inflect
    ("I attack.", None),  # too little to retell
    ("I tell you what.", None),
    ("I don't know what else to ask her.", None),  # was "Vax dons't know ..."
])
def test_first_person_deeds(said: str, retold: str | None) -> None:
    assert retell_declaration(said, "Vax") == retold


@pytest.mark.parametrize(("said", "retold"), [
    ("You pull the blade from the maw.", "Grog pulls the blade from the maw."),
    ("You swing your axe into the ogre.", "Grog swings their axe into the ogre."),
    ("You're standing at the edge of the cliff.", "Grog is standing at the edge of the cliff."),
    ("You took the map from the table.", "Grog took the map from the table."),
    ("You guys make your way down.", None),  # the whole party
    ("You pull back and hear a snap.", None),  # second verb
    ("You see that you are alone.", None),  # more "you" than we can retell
])
def test_the_dm_answer_to_one_player(said: str, retold: str | None) -> None:
    assert retell_address(said, "Grog") == retold


def test_verbs() -> None:
    assert [third_person_verb(v) for v in ["reach", "try", "go", "have", "pray", "walked"]] == [
        "reaches", "tries", "goes", "has", "prays", "walked"]


@pytest.mark.parametrize(("said", "retold"), [
    ("Vex, you pick up a strange scent.", "Vex picks up a strange scent."),
    ("Tiberius, Vax, you guys walk across the bridge.", "Tiberius and Vax walk across the bridge."),
    ("Vex and Grog, you two climb the rope to the ledge.", "Vex and Grog climb the rope to the ledge."),
    ("Sam, you roll a d20 for it.", None),  # a player, not a character
    ("Grog, you see that you are alone.", None),  # more "you" than we can retell
    ("Vex, you guys head out.", None),  # one name, several people
])
def test_the_dm_naming_whom_you_means(said: str, retold: str | None) -> None:
    assert retell_vocative(said, lambda name: name != "Sam") == retold


def test_the_campaigns_party_fills_in_and_the_session_wins() -> None:
    from glyphoxa_pipelines.processing.summaries import known_party

    campaign = {"LAURA": "Vex'ahlia", "TRAVIS": "Grog"}
    session = {"LAURA": "Vex", "SAM": "Scanlan"}
    assert known_party(campaign, session) == {"LAURA": "Vex", "TRAVIS": "Grog", "SAM": "Scanlan"}
    assert known_party(None, session) == session
