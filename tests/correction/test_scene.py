"""The scene: names said in a session's last turns, as the corrector settled them."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction.scene import SceneMemory, names_said

INDEX = NameIndex(["Grimjaw", ("Vex'ahlia", ["Vex"]), "Thessa Morn", "Pike", "Scandel", "Tiberius"])


def test_names_said_holds_exact_names_aliases_and_corrections() -> None:
    result = correct("Then Thessa Morn and Grimjaw's friend met vex.", INDEX)
    assert names_said(result, INDEX) == ["Vex'ahlia", "Thessa Morn", "Grimjaw"]


def test_an_ordinary_word_name_counts_only_as_written() -> None:
    assert names_said(correct("He caught a pike.", INDEX), INDEX) == []
    assert names_said(correct("Ask Pike.", INDEX), INDEX) == ["Pike"]


def test_scene_forgets_the_oldest_turns() -> None:
    scene = SceneMemory(turns=2)
    scene.remember(["Grimjaw"])
    scene.remember([])
    assert scene.names() == ("Grimjaw",)
    scene.remember(["Pike", "Grimjaw"])
    assert scene.names("Tiberius", None) == ("Tiberius", "Pike", "Grimjaw")
    scene.remember([])
    assert scene.names() == ("Pike", "Grimjaw")


def test_a_scene_of_no_turns_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one turn"):
        SceneMemory(turns=0)


def test_the_scene_lets_a_mishearing_of_a_name_in_play_through() -> None:
    """What the transcript writer does turn after turn: the second line's unsure "scandal"
    becomes Scandel only once Scandel was said."""
    scene = SceneMemory()
    line = "Okay, scandal is very happy."
    conf = [0.95, 0.3, 0.95, 0.95, 0.95]
    assert correct(line, INDEX, conf, scene=scene.names()).text == line
    scene.remember(names_said(correct("Scandel walks in.", INDEX), INDEX))
    assert correct(line, INDEX, conf, scene=scene.names()).text == "Okay, Scandel is very happy."
