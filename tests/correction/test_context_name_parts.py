"""A one-word name heard as a shorter name it begins with and a word for the rest (issue 13,
fifth pass): "Vex Alia" for Vex'ahlia. The first part is a name heard right, so the window
walk keeps it; the pair is read as the longer name only with the very code, the name in play,
and the second word doubted or no English."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Vex", "Vex'ahlia", "Vax", "Vax'ildan", "Grog", "Keyleth"])


def confidences(text: str, unsure: set[str], p: float = 0.4) -> list[float]:
    return [p if w.strip(",.!?") in unsure else 0.98 for w in text.split()]


def fixed(text: str, unsure: set[str], scene: list[str]) -> str:
    return correct(text, INDEX, confidences(text, unsure), scene=scene).text


def test_name_heard_as_its_first_part_and_a_doubted_word() -> None:
    text = "We hand it to Vex Alia and go."
    assert correct(text, INDEX).text == text  # stage 1 alone keeps "Vex" as said
    assert fixed(text, {"Alia"}, ["Vex'ahlia"]) == "We hand it to Vex'ahlia and go."


def test_name_heard_as_its_first_part_and_a_made_up_word_said_clearly() -> None:
    text = "I turn to Vax Ildan and nod."
    assert fixed(text, set(), ["Vax'ildan"]) == "I turn to Vax'ildan and nod."


def test_first_part_and_a_word_that_stay() -> None:
    # a function word after the name, or an ordinary word after it said clearly
    both = "I turn to Vex and Alia and nod."
    assert fixed(both, {"Alia"}, ["Vex'ahlia"]) == both
    ally = "We trust Vex ally or not."
    assert fixed(ally, set(), ["Vex'ahlia"]) == ally
    # another sound after the name ("Vax hill" has no L-D-N), or the longer name out of play
    hill = "I turn to Vax hill and nod."
    assert fixed(hill, {"hill"}, ["Vax'ildan"]) == hill
    alia = "We hand it to Vex Alia and go."
    assert fixed(alia, {"Alia"}, ["Grog", "Vex"]) == alia
    # a comma between them is the speaker's pause: two people
    comma = "We hand it to Vex, Alia and go."
    assert fixed(comma, {"Alia"}, ["Vex'ahlia"]) == comma
