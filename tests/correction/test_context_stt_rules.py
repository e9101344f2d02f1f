"""Context-stage rules read off the real-STT corpus's tune half, each with a near miss that
must stay unchanged; and the scan's word-to-confidence mapping the stage relies on."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.correction import NameIndex, correct, tokenize
from glyphoxa_pipelines.correction.context import token_confidences
from glyphoxa_pipelines.correction.phonetic import Scan

INDEX = NameIndex(
    [
        "Trinket",
        "Keyleth",
        ("Vax'ildan", ["Vax"]),
        "Vox Machina",
        "Grog",
    ]
)
PARTY = ["Keyleth", "Trinket", "Vax'ildan", "Vox Machina"]


def confidences(text: str, unsure: set[str], p: float = 0.2) -> list[float]:
    return [p if w.strip(",.!?") in unsure else 0.95 for w in text.split()]


def fixed(text: str, unsure: set[str], scene: list[str] | None) -> str:
    return correct(text, INDEX, confidences(text, unsure), scene=scene).text


# -- a name's last sound written as a function word ("kill it" for Keyleth)


@pytest.mark.parametrize(
    ("text", "doubted", "expected"),
    [
        ("Try it, do it, kill it, go.", {"kill", "it"}, "Try it, do it, Keyleth, go."),
        ("get drink it out and I pull.", {"drink"}, "get Trinket out and I pull."),
    ],
)
def test_name_heard_with_a_function_word_tail_is_fixed_in_play_when_doubted(
    text: str, doubted: set[str], expected: str
) -> None:
    assert correct(text, INDEX).text == text  # stage 1 alone keeps ordinary words
    assert fixed(text, doubted, PARTY) == expected


def test_function_word_tail_said_with_confidence_stays() -> None:
    text = "Try it, do it, kill it, go."
    assert fixed(text, set(), PARTY) == text


def test_function_word_tail_stays_for_a_name_out_of_play() -> None:
    text = "Try it, do it, kill it, go."
    assert fixed(text, {"kill", "it"}, ["Grog"]) == text


def test_function_word_tail_needs_the_content_word_doubted() -> None:
    # Whisper unsure only of "it": "drink" was said
    text = "get drink it out and I pull."
    assert fixed(text, {"it"}, PARTY) == text


# -- a multi-word name of the scene heard word by word as other words of its sounds


def test_multi_word_scene_name_heard_as_words_of_its_sounds() -> None:
    text = "It recognizes the box machinist slash brotherhood."
    assert correct(text, INDEX).text == text
    assert (
        fixed(text, {"machinist", "slash"}, PARTY)
        == "It recognizes the Vox Machina slash brotherhood."
    )


def test_words_of_the_same_sounds_spelled_far_from_the_name_stay() -> None:
    # "bucks" codes like "Vox" once B is V, but is spelled nothing like it
    text = "It recognizes the bucks machinist slash brotherhood."
    assert fixed(text, {"bucks", "machinist", "slash"}, PARTY) == text


def test_words_of_a_multi_word_name_stay_out_of_play_or_said_clearly() -> None:
    text = "It recognizes the box machinist slash brotherhood."
    assert fixed(text, {"machinist"}, ["Grog"]) == text
    assert fixed(text, set(), PARTY) == text


# -- names heard as two words or merged (stage 1, no context needed)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Vax ildan goes first.", "Vax'ildan goes first."),
        ("Vaxildan goes first.", "Vax'ildan goes first."),
    ],
)
def test_name_heard_split_or_merged(text: str, expected: str) -> None:
    assert correct(text, INDEX).text == expected


def test_split_words_that_only_begin_like_a_name_stay() -> None:
    text = "Vax ill done that before."
    assert correct(text, INDEX, confidences(text, {"ill"}), scene=PARTY).text == text


# -- the scan maps tokens to Whisper's whitespace words as the reference mapping does


@pytest.mark.parametrize(
    "text",
    [
        "-- a partially hooded Clarota steps forward",
        "Well...  Trinket,   go!\nNow - then.",
        "Grimjaw's hammer, #Grog @Keyleth and 9-to-5.",
        "  leading spaces and a trailing one ",
    ],
)
def test_scan_chunks_agree_with_token_confidences(text: str) -> None:
    conf = [round(0.01 * k, 2) for k in range(len(text.split()))]
    scan = Scan(text)
    assert [conf[k] for k in scan.chunk] == token_confidences(text, tokenize(text), conf)


# -- a name heard a sound short ("Kila" for Keyleth)


def test_doubted_made_up_word_a_sound_short_of_a_scene_name() -> None:
    text = "No, like next to Kiela, like near."
    assert correct(text, INDEX).text == text
    assert fixed(text, {"Kiela"}, PARTY) == "No, like next to Keyleth, like near."


def test_a_sound_short_needs_doubt_the_scene_and_an_unlisted_word() -> None:
    text = "No, like next to Kiela, like near."
    lower = "No, like next to kiela, like near."
    assert fixed(lower, set(), PARTY) == lower  # Whisper sure of it, written lower case
    assert fixed(text, {"Kiela"}, ["Grog"]) == text  # Keyleth out of play
    ordinary = "No, I will call you near."  # "call" codes KL too, but is ordinary English
    assert fixed(ordinary, {"call"}, PARTY) == ordinary


# -- a code one edit off, Whisper sure: a word of its own


def test_sure_word_one_code_edit_from_a_scene_name_stays() -> None:
    text = "Trings of gnome blood are flung across the room."
    assert fixed(text, set(), PARTY) == text


# -- an ordinary word Whisper capitalized mid-sentence, as it writes names


def test_ordinary_word_capitalized_mid_sentence_may_be_a_scene_name() -> None:
    text = "Okay, Tricked is very happy."
    assert fixed(text, {"Tricked"}, PARTY) == "Okay, Trinket is very happy."


def test_ordinary_word_in_lower_case_or_said_clearly_stays() -> None:
    lower = "Okay, tricked is very happy."
    assert fixed(lower, {"tricked"}, PARTY) == lower
    text = "Okay, Tricked is very happy."
    assert fixed(text, set(), PARTY) == text
