"""Ordinary words Whisper was sure of become a scene name by context only at stage 1's bar
(`correction/sure_words.py`): "who's stone", said and heard, is not written Whitestone."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Whitestone", "Tiberius", "Stoneskin", "Grog", "Keyleth"])
SCENE = ("Whitestone", "Tiberius", "Grog")
LINE = "I only move 10 feet. So who's stone right now? Tiberius and wasn't aren't two people."
CONF = [0.91, 1.0, 0.57, 0.74, 0.97, 0.93, 0.76, 0.65, 0.98, 1.0, 0.7, 0.92, 0.96, 0.91, 0.79, 1.0]


def test_sure_ordinary_words_loosely_like_a_scene_name_stay() -> None:
    # both words ordinary English, both heard at better than even odds, the name only 0.81 near
    assert correct(LINE, INDEX, CONF, scene=SCENE).text == LINE


def test_the_same_words_doubted_become_the_name() -> None:
    # near miss: Whisper bet against what it wrote, so the scene's name is the likelier word
    doubted = [*CONF[:6], 0.3, 0.4, *CONF[8:]]
    assert correct(LINE, INDEX, doubted, scene=SCENE).text == LINE.replace(
        "who's stone", "Whitestone"
    )


def test_sure_ordinary_words_close_to_a_scene_name_become_it() -> None:
    # near miss: "stones can" is 0.96 near Stoneskin, past stage 1's bar for such words
    line = "Okay, stones can stay on, at which point the stone breaks."
    conf = [0.38, 0.64, 0.99, 0.51, 0.79, 0.99, 1.0, 1.0, 0.99, 0.98, 0.99]
    assert correct(line, INDEX, conf, scene=("Stoneskin", "Grog")).text == line.replace(
        "stones can", "Stoneskin"
    )


IFY = NameIndex(["Ify", "Keyleth", "Grog"])
IF_I = "If I say it so you can understand it, what's the point?"
IF_I_CONF = [0.59, 0.98, 1.0, 0.95, 0.7, 0.99, 0.99, 1.0, 0.99, 0.97, 1.0, 1.0]


def test_sure_function_words_never_become_a_name_however_exact() -> None:
    # "If I" sounds exactly like Ify (in play), but both words are among the most said
    assert correct(IF_I, IFY, IF_I_CONF, scene=("Ify", "Grog")).text == IF_I


def test_doubted_function_words_may_still_become_the_name() -> None:
    # near miss: Whisper bet against both words, so the name in play is the likelier reading
    doubted = [0.3, 0.4, *IF_I_CONF[2:]]
    assert correct(IF_I, IFY, doubted, scene=("Ify", "Grog")).text.startswith("Ify say it")
