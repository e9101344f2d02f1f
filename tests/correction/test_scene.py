"""The scene: names said in a session's last turns, as the corrector settled them."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction.scene import SPEAKERS_KEPT, SceneMemory, names_said

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


def test_a_speaker_keeps_the_names_they_said_after_the_table_moved_on() -> None:
    scene = SceneMemory(turns=2)
    scene.remember(["Grimjaw"], speaker="laura")
    scene.remember(["Pike"], speaker="matt")
    scene.remember([], speaker="matt")
    assert scene.names() == ("Pike",)
    assert scene.names("Tiberius", speaker="laura") == ("Tiberius", "Pike", "Grimjaw")
    # near miss: another speaker, or no speaker, does not get Laura's old names
    assert scene.names(speaker="matt") == ("Pike",)
    assert scene.names(speaker="sam") == ("Pike",)


MINX = NameIndex(["Minxy", "Grimjaw", "Pike", "Tiberius"])
MIXIE = "I go up to her, still in my mixie form."
MIXIE_CONF = [0.94, 0.99, 0.99, 0.99, 0.99, 0.98, 0.99, 0.99, 0.35, 0.99]


def session_scene() -> SceneMemory:
    """Marisha said Minxy early in the session; forty turns of other talk followed."""
    scene = SceneMemory()
    scene.remember(names_said(correct("Minxy purrs at me.", MINX), MINX), speaker="marisha")
    for _ in range(40):
        scene.remember(["Grimjaw"], speaker="matt")
    return scene


def test_a_doubted_word_becomes_a_name_its_speaker_said_earlier_in_the_session() -> None:
    scene = session_scene()
    result = correct(MIXIE, MINX, MIXIE_CONF, scene=scene.names(speaker="marisha"))
    assert result.text == "I go up to her, still in my Minxy form."


def test_the_same_word_from_another_speaker_stays() -> None:
    scene = session_scene()
    assert correct(MIXIE, MINX, MIXIE_CONF, scene=scene.names(speaker="matt")).text == MIXIE


def test_near_misses_stay_though_the_speaker_said_the_name() -> None:
    scene = session_scene().names(speaker="marisha")
    # an ordinary word that sounds like Minxy, doubted
    line = "In my mixing form."
    assert correct(line, MINX, [0.99, 0.99, 0.35, 0.99], scene=scene).text == line
    # the made-up word, but Whisper was sure of it
    sure = [0.99] * 8 + [0.97, 0.99]
    assert correct(MIXIE, MINX, sure, scene=scene).text == MIXIE


def test_a_session_keeps_the_names_of_its_latest_speakers_only() -> None:
    scene = SceneMemory(turns=1)
    for k in range(SPEAKERS_KEPT + 1):
        scene.remember([f"name{k}"], speaker=f"speaker{k}")
    scene.remember([], speaker="speaker0")
    assert scene.names(speaker="speaker0") == ()  # the first speaker went when one too many came
    assert scene.names(speaker="speaker1") == ("name1",)
