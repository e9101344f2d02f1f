"""The STT corpus's labels: which transcript words were heard for each name of a reference
line (`bench/build_stt_corpus.align_names`), and relabelling a stored corpus (`--realign`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.build_stt_corpus import align_names, name_pattern, realign

PATTERN = name_pattern(["Sundry", "Vax", "Keyleth"])


def heard(reference: str, hypothesis: str) -> list[tuple[str, str, bool]]:
    return [
        (s["name"], s["heard"], s["misheard"]) for s in align_names(reference, hypothesis, PATTERN)
    ]


def test_a_spoken_ampersand_is_a_neighbour_heard_right() -> None:
    # before, "&" was no token: the "and" the voice said for it was put into the name
    assert heard("I like Geek & Sundry games.", "I like Geek and Sundry games.") == [
        ("Sundry", "Sundry", False)
    ]


def test_a_name_misheard_beside_an_ampersand_keeps_only_its_own_words() -> None:
    assert heard("I like Geek & Sundry games.", "I like Geek and Sunday games.") == [
        ("Sundry", "Sunday", True)
    ]


def test_other_spoken_and_silent_marks_align() -> None:
    assert heard("The sword / Vax took it.", "The sword slash Vax took it.") == [
        ("Vax", "Vax", False)
    ]
    assert heard("The sword / Vax took it.", "The sword slash backs took it.") == [
        ("Vax", "backs", True)
    ]
    # a dash is not spoken: the words on either side of it are neighbours
    assert heard("Look - Keyleth is here.", "Look, kill it is here.") == [
        ("Keyleth", "kill it", True)
    ]


def test_a_mark_heard_as_another_word_leaves_a_name_heard_right_known() -> None:
    assert heard("I like Geek & Sundry games.", "I like geek in sundry games.") == [
        ("Sundry", "sundry", False)
    ]


def test_a_mark_heard_as_another_word_beside_a_misheard_name_is_not_guessed() -> None:
    # "in Sunday" or "Sunday": which transcript words stand for the name cannot be told
    assert heard("I like Geek & Sundry games.", "I like geek in Sunday games.") == []


def test_a_mark_the_transcript_wrote_is_not_heard_for_the_name() -> None:
    assert heard("I like Geek Sundry games.", "I like Geek & Sundry games.") == [
        ("Sundry", "Sundry", False)
    ]


def row(line_id: str, split: str, reference: str, hypothesis: str) -> dict[str, Any]:
    old = [{"name": "Sundry", "hyp_start": 7, "hyp_end": 17, "heard": "x", "misheard": True}]
    return {
        "id": line_id,
        "source": "crd3",
        "split": split,
        "reference": reference,
        "hypothesis": hypothesis,
        "names": old,
    }


def test_realign_relabels_into_a_new_folder_from_the_stored_transcripts(tmp_path: Path) -> None:
    source = tmp_path / "old"
    source.mkdir()
    (source / "entities.json").write_text(
        json.dumps({"crd3": [["Sundry", []]], "demo": []}), encoding="utf-8"
    )
    rows = [
        row("a", "tune", "Geek & Sundry rocks.", "Geek and Sundry rocks."),
        row("b", "heldout", "Geek & Sundry rocks.", "Geek and Sunday rocks."),
    ]
    (source / "corpus.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    before = (source / "corpus.jsonl").read_text(encoding="utf-8")
    changed = realign(source, tmp_path / "new")
    assert changed == {"tune": 1, "heldout": 1}
    assert (source / "corpus.jsonl").read_text(encoding="utf-8") == before
    out = [json.loads(r) for r in (tmp_path / "new" / "corpus.jsonl").read_text().splitlines()]
    assert [[(n["heard"], n["misheard"]) for n in r["names"]] for r in out] == [
        [("Sundry", False)],
        [("Sunday", True)],
    ]
    assert [r["hypothesis"] for r in out] == [r["hypothesis"] for r in rows]


def test_realign_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "entities.json").write_text(json.dumps({"crd3": [], "demo": []}))
    (tmp_path / "corpus.jsonl").write_text("")
    with pytest.raises(ValueError, match="the source itself"):
        realign(tmp_path, tmp_path)
    with pytest.raises(ValueError, match="already holds a corpus.jsonl"):
        realign(tmp_path / "other", tmp_path)
