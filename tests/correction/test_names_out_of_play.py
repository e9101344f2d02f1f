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


# stage 1 (tenth pass, `sounded_in_play_only`): real tune lines, 10,000 and 6,000 names
DUSH = "Nice, audio isn't working there going to watch something else. Thanks, Dush."
DUSH_CONF = [0.6992, 0.684, 0.9338, 0.9846, 0.5493, 0.6023, 0.9963, 0.9832, 0.9909, 0.9986]
DUSH_CONF += [0.9887, 0.3996]
STAGE1 = NameIndex(["Dysh", "Taliesin", "Stathru", "Grog", "Keyleth", "Pike", "Vax"])
TABLE = ("Grog", "Keyleth", "Pike", "Vax")


def test_a_short_code_is_no_name_out_of_play_for_stage_one_either() -> None:
    # base: "Dush" (table talk, "Thanks, Doug." or the like) written Dysh, TX, out of play
    assert correct(DUSH, STAGE1, DUSH_CONF, scene=TABLE).text == DUSH


def test_the_same_short_code_is_fixed_in_play_or_with_no_scene() -> None:
    # near misses: Dysh said in the scene; no scene known (stage 1 as the synthetic bench
    # runs it)
    fixed = DUSH.replace("Dush", "Dysh")
    assert correct(DUSH, STAGE1, DUSH_CONF, scene=(*TABLE, "Dysh")).text == fixed
    assert correct(DUSH, STAGE1).text == fixed


def test_a_long_code_out_of_play_is_still_fixed_by_stage_one() -> None:
    # near miss, real (CRD3, tune): "Talison" for Taliesin, TLSN, a name nobody at the table
    # had said
    line = "I did all the math. Vax weighs 155. Pike weighs 75. Talison weighs 190."
    conf = [0.8984, 0.9805, 0.9899, 0.9877, 0.9954, 0.6697, 0.154, 0.9707, 0.4919, 0.6604]
    conf += [0.9945, 0.4837, 0.9951, 0.9729]
    out = correct(line, STAGE1, conf, scene=TABLE)
    assert out.text == line.replace("Talison", "Taliesin")
    assert [c.method for c in out.corrections] == ["phonetic"]


STAY = "Keep going and stay true to yourself. You got this."


def test_sure_words_fused_into_a_name_out_of_play_stay() -> None:
    # real (LoCoMo, tune, 6,000 names): "stay true" (p 0.99, 1.0) written Stathru
    conf = [0.98] * len(STAY.split())
    assert correct(STAY, STAGE1, conf, scene=TABLE).text == STAY


def test_doubted_words_fused_into_a_name_are_still_fixed() -> None:
    # near miss: every word of the window doubted (a name heard split), or the name in play
    conf = [0.98, 0.98, 0.98, 0.4, 0.4, 0.98, 0.98, 0.98, 0.98, 0.98]
    fixed = STAY.replace("stay true", "Stathru")
    assert correct(STAY, STAGE1, conf, scene=TABLE).text == fixed
    assert correct(STAY, STAGE1, [0.98] * 10, scene=(*TABLE, "Stathru")).text == fixed
