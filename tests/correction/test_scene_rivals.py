"""A sound-alike fix to a name out of play yields to a scene name that holds the word's sound
(`correction/scene_rivals.py`): "Tiberius" heard as "Hi, Burias" is not written "Brais"."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct
from glyphoxa_pipelines.correction.phonetic import find_corrections
from glyphoxa_pipelines.correction.scene_rivals import scene_of, yield_to_scene

INDEX = NameIndex(["Tiberius", "Brais", "Grog", "Keyleth"])
LINE = "Hi, Burias, can you dispel that shit?"
CONF = [0.28, 0.4, 0.97, 0.99, 0.98, 0.99, 0.89]


def test_a_name_out_of_play_yields_to_a_scene_name_of_the_same_sound() -> None:
    # PRS ("Burias") lies inside TPRS (Tiberius, said in the scene): the table means him
    assert correct(LINE, INDEX, CONF, scene=("Tiberius", "Grog")).text == LINE


def test_with_no_rival_in_the_scene_the_fix_stays() -> None:
    # near miss: the scene's names hold no such sound, so this guard keeps Brais (the tenth
    # pass's `names_out_of_play.sounded_in_play_only` then drops it: PRS is a short code)
    stage1, settled = find_corrections(LINE, INDEX)
    kept, _ = yield_to_scene(stage1, settled, INDEX, ("Grog", "Keyleth"))
    assert [c.replacement for c in kept] == ["Brais"]
    assert correct(LINE, INDEX, CONF, scene=("Grog", "Keyleth")).text == LINE


def test_a_fix_to_a_scene_name_stays() -> None:
    # near miss: Brais is in play too, so the sound-alike is no guess against the scene
    assert correct(LINE, INDEX, CONF, scene=("Tiberius", "Brais")).text == (
        "Hi, Brais, can you dispel that shit?"
    )


def test_without_a_scene_stage_one_is_unchanged() -> None:
    assert correct(LINE, INDEX).text == "Hi, Brais, can you dispel that shit?"


TRADED = NameIndex(["Vex'ahlia", "Brialiax", "Grog", "Keyleth"])
BIX = "Bixalia, you know the underdark. Are there any critters crawling around in that pit?"
BIX_CONF = [0.52, 0.98, 1.0, 0.62, 0.52, 0.98, 1.0, 1.0, 0.98, 1.0, 0.6, 0.99, 0.99, 0.99]


def test_a_scene_name_heard_with_a_traded_consonant_is_a_rival() -> None:
    # "Bixalia" (PKSL) is Vex'ahlia (FKSL) with B for V, the pair Whisper trades most: the
    # table means her, not the stranger Brialiax whose spelling is near
    out = correct(BIX, TRADED, BIX_CONF, scene=("Vex'ahlia", "Grog"))
    assert "Brialiax" not in out.text


def test_a_traded_sound_with_no_rival_in_the_scene_keeps_the_fix() -> None:
    # near miss: nobody in play sounds like it, so stage 1's fix stands
    out = correct(BIX, TRADED, BIX_CONF, scene=("Grog", "Keyleth"))
    assert out.text.startswith("Brialiax,")


def test_a_scene_is_resolved_once_with_its_codes_folded() -> None:
    """A scene given as a list or a tuple is the same scene, kept once (issue 13, latency),
    and its codes come folded as a heard word's are (B as V, M as N)."""
    index = NameIndex(["Vex'ahlia", "Mordenkainen", "Grog"])
    entities, codes = scene_of(index, ["Vex'ahlia", "Mordenkainen"])
    assert entities == {"Vex'ahlia", "Mordenkainen"}
    scene = ["Vex'ahlia", "Mordenkainen"]
    assert scene_of(index, tuple(scene)) is scene_of(index, scene)
    assert all("P" not in code and "M" not in code for code in codes)  # folded away
    assert any(code.startswith("FKS") for code in codes)  # Vex'ahlia
    assert scene_of(index, ["Grog"])[0] == {"Grog"}
