"""The damage half of the STT corpus: CRD3 lines that name no known name, spoken with the scene
their table had (`bench/build_stt_corpus.plain_crd3_lines`)."""

from __future__ import annotations

import argparse

from bench.build_stt_corpus import name_pattern, plain_crd3_lines

LONG = "we walk down the corridor and look for a door that leads out of here now"


def turns() -> list[tuple[str, int, str, str]]:
    return [
        ("C1E001", 0, "MATT", "Scanlan and Grog walk in."),
        ("C1E001", 1, "SAM", LONG),
        ("C1E001", 2, "MATT", "Grog, " + LONG),  # names a name: not a plain line
        ("C1E001", 3, "LIAM", "okay sure"),  # too short to be worth its audio
        ("C1E001", 4, "TRAVIS", LONG + " (all laugh)"),
    ]


def pick(count: int) -> list[dict[str, object]]:
    args = argparse.Namespace(seed=13, crd3_plain_lines=count)
    return plain_crd3_lines(turns(), name_pattern(["Scanlan", "Grog"]), args)


def test_plain_lines_name_nobody_and_carry_the_tables_scene() -> None:
    rows = {row["id"]: row for row in pick(10)}
    assert set(rows) == {"crd3:C1E001:1", "crd3:C1E001:4"}
    assert rows["crd3:C1E001:1"]["scene"] == ["Grog", "Scanlan"]
    # spoken without the stage direction, as every CRD3 line is
    assert rows["crd3:C1E001:4"]["reference"] == LONG
    assert rows["crd3:C1E001:1"]["source"] == "crd3"


def test_a_larger_count_keeps_every_line_a_smaller_one_chose() -> None:
    assert len(pick(0)) == 0
    assert {r["id"] for r in pick(1)} <= {r["id"] for r in pick(2)}
    assert len(pick(2)) == 2
