"""The voice bench's corpus lines: the split and the scene come from the corpus, and only
lines that name someone are spoken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.voice_bench.lines import corpus_entities, corpus_lines


def _corpus(tmp_path: Path) -> Path:
    rows = [
        {"id": "crd3:a", "source": "crd3", "reference": "Grog swings.", "scene": ["Grog"],
         "split": "heldout", "length_scale": 1.0, "names": [{"name": "Grog"}]},
        {"id": "crd3:b", "source": "crd3", "reference": "Nothing here.", "scene": ["Grog"],
         "split": "heldout", "length_scale": 1.0, "names": []},
        {"id": "locomo:c", "source": "locomo", "reference": "Hi Caroline.", "scene": [],
         "split": "heldout", "length_scale": 1.0, "names": [{"name": "Caroline"}]},
        {"id": "crd3:d", "source": "crd3", "reference": "Pike heals Vax.",
         "scene": ["Pike", "Vax'ildan", "Grimjaw"], "split": "heldout", "length_scale": 1.2,
         "names": [{"name": "Pike"}]},
        {"id": "crd3:e", "source": "crd3", "reference": "Scanlan sings.", "scene": ["Scanlan"],
         "split": "tune", "length_scale": 0.85, "names": [{"name": "Scanlan"}]},
    ]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_corpus_lines_take_one_split_with_names_in_order(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    held = corpus_lines(corpus, "heldout", 10)
    assert [x.line_id for x in held] == ["crd3:a", "crd3:d"]
    assert held[1].rate == 1.2 and held[1].scene == ("Pike", "Vax'ildan", "Grimjaw")
    assert [x.line_id for x in corpus_lines(corpus, "heldout", 10, skip=1)] == ["crd3:d"]
    assert [x.line_id for x in corpus_lines(corpus, "tune", 10)] == ["crd3:e"]


def test_corpus_entities_add_only_unknown_names(tmp_path: Path) -> None:
    lines = corpus_lines(_corpus(tmp_path), "heldout", 10)
    added = corpus_entities(lines, {"grimjaw"})
    assert [e["name"] for e in added] == ["Grog", "Pike", "Vax'ildan"]


def test_bad_split_and_missing_corpus_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="split"):
        corpus_lines(_corpus(tmp_path), "train", 3)
    with pytest.raises(FileNotFoundError, match="no STT corpus"):
        corpus_lines(tmp_path / "absent.jsonl", "tune", 3)
