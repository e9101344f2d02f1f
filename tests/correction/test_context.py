"""The context stage: real Whisper failure classes, each with a near miss that must stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphoxa_pipelines.correction import NameIndex, correct, tokenize
from glyphoxa_pipelines.correction.context import token_confidences

FIXTURES = Path(__file__).parent / "fixtures"

INDEX = NameIndex(
    [
        "Tiberius",
        "Trinket",
        "Clarota",
        ("Vex'ahlia", ["Vex"]),
        ("Vax'ildan", ["Vax"]),
        "Thessa Morn",
        "Scanlan",
        "Keyleth",
        "Grimthorn",
        "Scandel",
    ]
)


def sure(text: str, p: float = 0.95) -> list[float]:
    return [p] * len(text.split())


def unsure_at(text: str, word: str, p: float = 0.3) -> list[float]:
    return [p if w.strip(",.!?") == word else 0.95 for w in text.split()]


def fixed(text: str, conf: list[float] | None, scene: list[str] | None) -> str:
    return correct(text, INDEX, conf, scene=scene).text


# -- a made-up word with the name's exact Double Metaphone code, too far for stage 1


def test_capitalized_word_with_the_names_code_is_fixed_when_whisper_was_unsure() -> None:
    text = "Tabirias, do you want to drink this?"
    assert correct(text, INDEX).text == text  # stage 1 alone: capitalized, may be a new name
    assert fixed(text, unsure_at(text, "Tabirias"), None) == "Tiberius, do you want to drink this?"
    assert fixed(text, sure(text), ["Tiberius"]) == "Tiberius, do you want to drink this?"


def test_name_like_word_with_no_known_name_near_it_stays() -> None:
    text = "Zorvath, do you want to drink this?"
    assert fixed(text, unsure_at(text, "Zorvath,"), ["Tiberius", "Trinket"]) == text


def test_sure_made_up_word_outside_the_scene_stays() -> None:
    text = "Tabirias, do you want to drink this?"
    assert fixed(text, sure(text), ["Trinket"]) == text


# -- a name heard as an ordinary word


def test_ordinary_word_becomes_a_scene_name_only_when_whisper_was_unsure() -> None:
    text = "Okay, scandal is very happy."
    conf = unsure_at(text, "scandal")
    assert fixed(text, conf, ["Scandel"]) == "Okay, Scandel is very happy."
    assert fixed(text, conf, None) == text  # no scene: an unsure word is not enough
    assert fixed(text, sure(text), ["Scandel"]) == text  # sure: it was said


def test_ordinary_word_that_sounds_like_a_scene_name_stays_when_heard_clearly() -> None:
    text = "I tricked him into the cellar and we ate."
    assert fixed(text, unsure_at(text, "tricked"), ["Trinket", "Tiberius"]) == text


def test_b_for_v_is_a_mishearing_of_a_scene_name() -> None:
    text = "I agree with Bex on this one."
    assert fixed(text, unsure_at(text, "Bex"), ["Vex'ahlia"]) == "I agree with Vex on this one."
    assert fixed(text, sure(text), None) == text


# -- a multi-word name with one word heard right and the other as an English word


def test_multi_word_name_anchored_by_its_rare_word() -> None:
    text = "Then Thessa born walks in."
    assert correct(text, INDEX).text == text  # stage 1: "born" and "Morn" share no code
    assert fixed(text, unsure_at(text, "born"), None) == "Then Thessa Morn walks in."
    assert fixed(text, sure(text), ["Thessa Morn"]) == "Then Thessa Morn walks in."


def test_anchor_with_an_unlike_neighbour_stays() -> None:
    for text in ("Then Thessa went home.", "Then Thessa was born."):
        assert fixed(text, unsure_at(text, "went"), ["Thessa Morn"]) == text


# -- everyday speech and correctly heard names


def test_everyday_speech_with_unsure_words_and_a_scene_is_left_alone() -> None:
    text = "I went to the market yesterday and bought some fresh bread for the kids."
    conf = [0.4] * len(text.split())
    assert fixed(text, conf, ["Trinket", "Tiberius", "Scanlan", "Keyleth"]) == text


def test_a_name_heard_right_is_never_rewritten() -> None:
    text = "Grimthorn and Scanlan walk in."
    assert fixed(text, [0.2] * 5, ["Scanlan", "Keyleth", "Grimthorn"]) == text


def test_confidences_of_another_text_are_ignored() -> None:
    text = "Tabirias, do you want to drink this?"
    tokens = tokenize(text)
    assert token_confidences(text, tokens, [0.1, 0.2]) == [1.0] * len(tokens)
    assert fixed(text, [0.1, 0.2], None) == text


def test_token_confidences_follow_whitespace_words() -> None:
    text = "Vax'ildan's bow, ready"
    tokens = tokenize(text)
    assert token_confidences(text, tokens, [0.2, 0.9, 0.5]) == [0.2, 0.9, 0.5]


# -- a sample of the real speech-to-text corpus (piper speech, Whisper tiny.en transcripts)


def load_sample() -> tuple[list[dict], NameIndex, dict[str, str]]:
    rows = [
        json.loads(line)
        for line in (FIXTURES / "stt_sample.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    entities = json.loads((FIXTURES / "stt_entities.json").read_text(encoding="utf-8"))
    known = [(c, a) for c, a in entities["crd3"]] + [(c, a) for c, a in entities["demo"]]
    entity = {s: c for c, a in known for s in (c, *a)}
    return rows, NameIndex(known), entity


def test_real_transcripts_sample_gains_recall_without_damage() -> None:
    rows, index, entity = load_sample()
    misheard = fixed_names = 0
    for row in rows:
        hyp = row["hypothesis"]
        result = correct(hyp, index, row["word_confidences"], scene=row["scene"])
        if row["source"] == "locomo":
            assert result.corrections == [], hyp  # everyday speech: nothing to change
            continue
        for span in row["names"]:
            if not span["misheard"]:
                continue
            misheard += 1
            fixed_names += any(
                c.start < span["hyp_end"]
                and span["hyp_start"] < c.end
                and c.entity == entity[span["name"]]
                for c in result.corrections
            )
    baseline = sum(
        any(
            c.start < s["hyp_end"] and s["hyp_start"] < c.end
            for c in correct(r["hypothesis"], index).corrections
        )
        for r in rows
        for s in r["names"]
        if s["misheard"]
    )
    assert misheard >= 30
    assert fixed_names >= baseline + 5  # context earns recall stage 1 alone did not


@pytest.mark.parametrize("scene", [None, []])
def test_no_scene_and_no_confidences_is_stage_one(scene: list[str] | None) -> None:
    text = "Tabirias and Tricked walk in."
    assert correct(text, INDEX, None, scene=scene).text == correct(text, INDEX).text


# -- M for N, as B for V: the consonant pairs Whisper trades most


NASAL_INDEX = NameIndex(["Scanlan", "Minxy", ("Vax'ildan", ["Vax"]), "Machina", "Vox Machina"])


def test_m_for_n_in_a_made_up_word_of_a_name_in_play() -> None:
    text = "Alright, got some scamlin up there."
    conf = unsure_at(text, "scamlin", 0.6)
    fixed_text = "Alright, got some Scanlan up there."
    assert correct(text, NASAL_INDEX, conf, scene=["Scanlan"]).text == fixed_text
    assert correct(text, NASAL_INDEX, sure(text), scene=["Scanlan"]).text == fixed_text


def test_a_traded_consonant_is_not_enough_for_a_name_out_of_play() -> None:
    """Among thousands of names some made-up one is always a traded consonant away ("borrel"
    for a "Vrel"): outside the scene, Whisper's doubt alone needs the very code."""
    index = NameIndex(["Scanlan", "Vrel", "Minxy"])
    for text, word in (
        ("Alright, got some scamlin up there.", "scamlin"),
        ("It sounds like a lovely town, you borrel.", "borrel."),
    ):
        assert correct(text, index, unsure_at(text, word.rstrip("."), 0.4)).text == text


def test_m_for_n_in_an_ordinary_word_stays_without_the_scene() -> None:
    text = "They were scamming us up there."
    assert correct(text, NASAL_INDEX, unsure_at(text, "scamming", 0.3)).text == text


def test_b_for_v_in_the_spelling_of_a_party_name() -> None:
    text = "That ends its turn, top of the round backs."
    conf = unsure_at(text, "backs", 0.5)
    fixed_text = "That ends its turn, top of the round Vax."
    assert correct(text, NASAL_INDEX, conf, scene=["Vax'ildan"]).text == fixed_text
    assert correct(text, NASAL_INDEX, sure(text), scene=["Vax'ildan"]).text == text
    assert correct(text, NASAL_INDEX, conf).text == text  # an ordinary word needs the scene


# -- a name heard right as part of a longer name


def test_a_name_heard_right_anchors_the_longer_name_it_belongs_to() -> None:
    text = "Instead the name became Box Machina."
    conf = unsure_at(text, "Box", 0.4)
    assert correct(text, NASAL_INDEX).text == text  # stage 1: "Machina" is a name heard right
    assert correct(text, NASAL_INDEX, conf).text == "Instead the name became Vox Machina."


def test_a_name_heard_right_next_to_an_unlike_word_stays() -> None:
    for text in ("Instead the name became the Machina.", "He built a box for Machina."):
        conf = [0.4] * len(text.split())
        assert correct(text, NASAL_INDEX, conf, scene=["Vox Machina"]).text == text
    text = "Instead the name became Box Machina."
    assert correct(text, NASAL_INDEX, sure(text)).text == text  # neither signal
