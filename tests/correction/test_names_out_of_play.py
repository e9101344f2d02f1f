"""A name out of play comes from the context stage only as several words Whisper doubted
(`correction/names_out_of_play.py`): "Kiela" said for Keyleth is not written as an unrelated "Keill"
that nobody at the table said, nor "with Kila" as "Withgill"."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

INDEX = NameIndex(["Keyleth", "Keill", "Grog", "Scanlan", "Vox Machina"])
LINE = "I think Grog may have soiled himself a little. We should probably get Kiela on the books."
CONF = [0.95, 1.0, 0.68, 1.0, 1.0, 0.96, 0.77, 0.96, 1.0, 0.99, 1.0, 1.0, 1.0, 0.2, 0.9, 1.0, 0.98]


def test_a_doubted_word_is_not_written_as_a_name_out_of_play() -> None:
    # Keill is known but not in play; the word stays as heard rather than become a stranger
    assert correct(LINE, INDEX, CONF, scene=("Grog", "Keyleth")).text == LINE


def test_the_same_word_becomes_the_name_when_it_is_in_play() -> None:
    # near miss: the table has been talking about Keill, so the doubted word is theirs
    assert correct(LINE, INDEX, CONF, scene=("Grog", "Keill")).text == LINE.replace(
        "Kiela", "Keill"
    )


def test_without_a_scene_a_lone_doubted_word_is_no_name_either() -> None:
    # tenth pass: with no scene no name is in play; the eighth pass let doubt alone fix here
    assert correct(LINE, INDEX, CONF).text == LINE


# real (LoCoMo, tune, 3,000 names seed 6; 10,000): "Mmm, that looks delicious!", no scene
MEM = "And a mem that looks delicious. Is it lactose free by any chance?"
MEM_CONF = [0.4611, 0.3581, 0.6203, 0.3466, 0.9858, 0.9893, 0.9571, 0.9783, 0.7593, 0.8008]
MEM_CONF += [0.973, 0.9942, 0.9958]
MEMS = NameIndex(["Maem", "Keyleth", "Grog"])


def test_everyday_talk_with_no_scene_keeps_a_doubted_word() -> None:
    # base: "mem" (p 0.62) written Maem at 0.93, a name nobody said
    assert correct(MEM, MEMS, MEM_CONF).text == MEM


def test_the_same_doubted_word_becomes_the_name_in_play() -> None:
    # near miss: the same line with Maem in the scene
    assert correct(MEM, MEMS, MEM_CONF, scene=("Maem",)).text == MEM.replace("mem", "Maem")


def test_without_a_scene_a_name_heard_over_doubted_words_is_still_fixed() -> None:
    # near miss: several words, every one doubted ("Elder Nax" for Eldrinax)
    index = NameIndex(["Eldrinax", "Keyleth"])
    line = "We should ask Elder Nax about the dragon."
    conf = [0.95, 0.95, 0.95, 0.44, 0.43, 0.95, 0.95, 0.95]
    assert correct(line, index, conf).text == "We should ask Eldrinax about the dragon."


def test_a_name_heard_over_several_words_out_of_play_stays_fixed() -> None:
    # near miss: "Box Machina" is anchored by the name's own other word, not one near sound
    line = "instead the name became Box Machina. So that's the official team name."
    conf = [0.54, 0.92, 0.99, 0.98, 0.39, 0.56, 0.93, 0.99, 0.99, 0.99, 0.99, 0.99]
    out = correct(line, INDEX, conf, scene=("Grog", "Keyleth"))
    assert out.text == line.replace("Box Machina", "Vox Machina")
    assert [c.method for c in out.corrections] == ["context"]


WITH = NameIndex(["Keyleth", "Withgill", "Scanlan", "Pike", "Grog"])
ALONG = "at which point, both Scanlan and PICO into a free fall along with Kila."
ALONG_CONF = [0.72, 0.98, 1.0, 0.96, 0.62, 0.99, 0.6, 0.69, 0.99, 0.98, 0.87, 0.92, 0.99, 0.59]


def test_a_sure_word_glued_to_a_doubted_one_is_no_name_out_of_play() -> None:
    # Whisper was sure of "with" (0.99): it was said; "Withgill" rests on "Kila" alone
    assert correct(ALONG, WITH, ALONG_CONF, scene=("Scanlan", "Pike", "Grog")).text == ALONG


def test_the_same_window_all_doubted_or_in_play_becomes_the_name() -> None:
    # near misses: every word doubted (a name heard split), or Withgill in play
    doubted = [*ALONG_CONF[:12], 0.45, 0.59]
    fixed = ALONG.replace("with Kila", "Withgill")
    assert correct(ALONG, WITH, doubted, scene=("Scanlan", "Pike", "Grog")).text == fixed
    assert correct(ALONG, WITH, ALONG_CONF, scene=("Scanlan", "Withgill")).text == fixed


def test_without_a_scene_a_lone_word_with_the_names_long_code_is_still_fixed() -> None:
    # near miss (the class): "Tabirias" shares Tiberius's whole code, TPRS (4 sounds)
    index = NameIndex(["Tiberius", "Maem", "Keyleth"])
    line = "Tabirias, do you want to drink this?"
    conf = [0.3, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]
    assert correct(line, index, conf).text == line.replace("Tabirias", "Tiberius")
