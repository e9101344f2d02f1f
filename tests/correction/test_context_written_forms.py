"""Context-stage rules about how Whisper wrote a name it heard (issue 13, fourth pass): read
off the real-STT corpus's tune half, each with near misses that must stay unchanged."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Keyleth", "Grog", "Elder", "Eldrinax", "Hieris", "Brennan", "Vexmira"])


def confidences(text: str, unsure: set[str], p: float = 0.4) -> list[float]:
    return [p if w.strip(",.!?") in unsure else 0.98 for w in text.split()]


def fixed(text: str, unsure: set[str], scene: list[str]) -> str:
    return correct(text, INDEX, confidences(text, unsure), scene=scene).text


# -- a name a sound short, written capitalized mid-sentence though Whisper was sure of it


def test_capitalized_word_a_sound_short_of_a_scene_name_is_fixed_when_sure() -> None:
    text = "No, like next to Kila, like near."
    assert correct(text, INDEX).text == text  # stage 1 alone keeps it
    assert fixed(text, set(), ["Keyleth"]) == "No, like next to Keyleth, like near."


def test_sure_word_a_sound_short_stays_lower_case_or_out_of_play() -> None:
    lower = "No, like next to kila, like near."
    assert fixed(lower, set(), ["Keyleth"]) == lower
    text = "No, like next to Kila, like near."
    assert fixed(text, set(), ["Grog"]) == text
    first = "Kila, like near."  # capitalized as any sentence's first word: no sign of a name
    assert fixed(first, set(), ["Keyleth"]) == first


# -- a one-word name heard as words, one of them a name that is also an ordinary word


def test_name_heard_over_an_ordinary_word_name_when_doubted() -> None:
    text = "Elder Nax agrees to help the party."
    assert correct(text, INDEX).text == text  # "Elder" is a name heard right to stage 1
    assert fixed(text, {"Elder", "Nax"}, []) == "Eldrinax agrees to help the party."


def test_ordinary_word_name_stays_said_clearly_or_beside_another_sound() -> None:
    text = "Elder Nax agrees to help the party."
    assert fixed(text, set(), ["Eldrinax"]) == text  # Whisper sure of both words
    other = "Elder Brennan agrees to help the party."  # both names, no one name's code
    assert fixed(other, {"Elder", "Brennan"}, ["Eldrinax"]) == other
    named = "Grog Nax agrees to help the party."  # "Grog" is no ordinary word: it was said
    assert fixed(named, {"Grog", "Nax"}, ["Eldrinax"]) == named


# -- a name Whisper split with a comma, both halves doubted


def test_scene_name_split_by_a_comma_is_joined_when_both_halves_are_doubted() -> None:
    text = "Thank you. Hi, Russ. Thank you."
    assert correct(text, INDEX).text == text
    assert fixed(text, {"Hi", "Russ"}, ["Hieris"]) == "Thank you. Hieris. Thank you."


def test_comma_stays_out_of_play_or_with_a_sure_half() -> None:
    text = "Thank you. Hi, Russ. Thank you."
    assert fixed(text, {"Hi", "Russ"}, ["Grog"]) == text
    assert fixed(text, {"Russ"}, ["Hieris"]) == text
    stop = "Thank you. Hi. Russ. Thank you."  # a full stop is the speaker's own pause
    assert fixed(stop, {"Hi", "Russ"}, ["Hieris"]) == stop


# -- a V-name's first sound heard as "the"


def test_v_name_whose_first_sound_was_heard_as_the() -> None:
    text = "Through a window you glimpse a guard who serves the Exmirror, counting silver."
    assert correct(text, INDEX).text == text
    assert (
        fixed(text, {"the", "Exmirror"}, ["Vexmira"])
        == "Through a window you glimpse a guard who serves Vexmira, counting silver."
    )


def test_the_stays_before_english_a_sure_word_or_out_of_play() -> None:
    text = "Through a window you glimpse a guard who serves the Exmirror, counting silver."
    assert fixed(text, {"the", "Exmirror"}, ["Grog"]) == text  # no V-name in play
    assert fixed(text, set(), ["Vexmira"]) == text  # Whisper sure of "Exmirror"
    english = "The priests who serve the Exodus, counting silver."  # an English word
    assert fixed(english, {"the", "Exodus"}, ["Vexmira"]) == english
