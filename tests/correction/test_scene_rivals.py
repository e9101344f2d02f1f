"""A sound-alike fix to a name out of play yields to a scene name that holds the word's sound
(`correction/scene_rivals.py`): "Tiberius" heard as "Hi, Burias" is not written "Brais"."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Tiberius", "Brais", "Grog", "Keyleth"])
LINE = "Hi, Burias, can you dispel that shit?"
CONF = [0.28, 0.4, 0.97, 0.99, 0.98, 0.99, 0.89]


def test_a_name_out_of_play_yields_to_a_scene_name_of_the_same_sound() -> None:
    # PRS ("Burias") lies inside TPRS (Tiberius, said in the scene): the table means him
    assert correct(LINE, INDEX, CONF, scene=("Tiberius", "Grog")).text == LINE


def test_with_no_rival_in_the_scene_the_fix_stays() -> None:
    # near miss: the scene's names hold no such sound, so the word still becomes Brais
    assert correct(LINE, INDEX, CONF, scene=("Grog", "Keyleth")).text == (
        "Hi, Brais, can you dispel that shit?"
    )


def test_a_fix_to_a_scene_name_stays() -> None:
    # near miss: Brais is in play too, so the sound-alike is no guess against the scene
    assert correct(LINE, INDEX, CONF, scene=("Tiberius", "Brais")).text == (
        "Hi, Brais, can you dispel that shit?"
    )


def test_without_a_scene_stage_one_is_unchanged() -> None:
    assert correct(LINE, INDEX).text == "Hi, Brais, can you dispel that shit?"
