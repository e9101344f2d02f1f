"""An ordinary word Whisper gave less than even odds, with the very code of a name in play
(`correction/doubted_words.py`): "clarity" for Clarota."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Clarota", "Keyleth", "Grog", "Perce"])
LINE = "Brings us so clarity now gets its action."


def conf(clarity: float) -> list[float]:
    return [0.73, 0.53, 0.8, clarity, 0.8, 0.81, 0.94, 0.99]


def test_a_doubted_ordinary_word_becomes_the_scene_name_of_its_code() -> None:
    result = correct(LINE, INDEX, conf(0.18), scene=("Clarota", "Grog"))
    assert result.text == "Brings us so Clarota now gets its action."
    assert [c.method for c in result.corrections] == ["context"]


def test_merely_doubted_it_stays() -> None:
    assert correct(LINE, INDEX, conf(0.6), scene=("Clarota", "Grog")).text == LINE


def test_the_name_out_of_play_it_stays() -> None:
    assert correct(LINE, INDEX, conf(0.18), scene=("Grog",)).text == LINE


def test_an_ordinary_word_of_a_near_code_stays() -> None:
    # "clarify" (KLRF) is a sound off Clarota (KLRT): one edit is not the very code
    line = "Brings us so clarify now gets its action."
    assert correct(line, INDEX, conf(0.18), scene=("Clarota", "Grog")).text == line


def test_a_name_like_word_with_no_name_near_it_stays() -> None:
    line = "Brings us so charity now gets its action."
    assert correct(line, INDEX, conf(0.1), scene=("Clarota", "Grog", "Keyleth")).text == line


def test_a_frequent_word_of_the_very_code_stays() -> None:
    # "price" is PRS like Perce and spelled near it, but said far more often than misheard
    line = "We paid the price for it."
    assert correct(line, INDEX, [0.9, 0.9, 0.9, 0.1, 0.9, 0.9], scene=("Perce",)).text == line
