"""The STT corpus speaks what players say: a transcriber's stage directions ("(clears throat)")
are dropped from a reference line before the voice reads it (`bench/build_stt_corpus`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.build_stt_corpus import drop_stage_directions, redo_stage_directions


def test_parenthesised_and_bracketed_directions_are_dropped() -> None:
    assert (
        drop_stage_directions("I did all the math. (clears throat) Vax weighs 155.")
        == "I did all the math. Vax weighs 155."
    )
    assert drop_stage_directions("It's all right, Scanlan. (all laugh)") == (
        "It's all right, Scanlan."
    )
    assert drop_stage_directions("Sure [inaudible], Grog.") == "Sure, Grog."
    # a direction inside a direction goes with it
    assert drop_stage_directions("Okay (Liam sings (badly) a song) go.") == "Okay go."


def test_a_line_without_a_direction_is_unchanged() -> None:
    # near miss: brackets' neighbours, an unclosed parenthesis and a smiley are speech
    for line in ("Vax - Vex, go!", "Wait :) what", "He said (and then"):
        assert drop_stage_directions(line) == line


def test_a_line_that_is_only_a_direction_becomes_empty() -> None:
    assert drop_stage_directions("(all laugh)") == ""


def write_corpus(folder: Path, rows: list[dict[str, object]]) -> None:
    folder.mkdir()
    (folder / "entities.json").write_text(
        json.dumps({"crd3": [["Scanlan", []]], "demo": []}), encoding="utf-8"
    )
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )


def line(line_id: str, split: str, reference: str, hypothesis: str) -> dict[str, object]:
    return {
        "id": line_id,
        "source": "crd3",
        "split": split,
        "length_scale": 1.0,
        "reference": reference,
        "hypothesis": hypothesis,
        "word_confidences": [],
        "names": [],
    }


def test_only_lines_with_a_direction_are_heard_again(tmp_path: Path) -> None:
    rows = [
        line("a", "tune", "Go, Scanlan. (all laugh)", "Go, Scanlan. Oh, laugh."),
        line("b", "heldout", "Go, Scanlan.", "Go, scan land."),
        line("c", "heldout", "(clears throat)", "Clares throat."),
    ]
    write_corpus(tmp_path / "old", rows)
    spoken: list[str] = []

    def hear(text: str, length_scale: float) -> tuple[str, list[float]]:
        spoken.append(text)
        return text.replace("Scanlan", "Scanland"), [0.9, 0.4]

    counts = redo_stage_directions(tmp_path / "old", tmp_path / "new", hear)
    assert spoken == ["Go, Scanlan."]
    assert counts == {
        "tune_redone": 1,
        "heldout_redone": 0,
        "tune_dropped": 0,
        "heldout_dropped": 1,
    }
    out = [json.loads(r) for r in (tmp_path / "new" / "corpus.jsonl").read_text().splitlines()]
    assert [r["id"] for r in out] == ["a", "b"]
    assert out[0]["hypothesis"] == "Go, Scanland."
    assert [(n["heard"], n["misheard"]) for n in out[0]["names"]] == [("Scanland", True)]
    assert out[1] == rows[1]  # a line without a direction keeps its stored transcript


def test_the_rebuild_never_overwrites(tmp_path: Path) -> None:
    write_corpus(tmp_path / "old", [])
    with pytest.raises(ValueError, match="the source itself"):
        redo_stage_directions(tmp_path / "old", tmp_path / "old", lambda t, s: (t, []))
