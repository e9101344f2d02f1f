"""Presence as plain data: lines grouped into the DM's spans, and an edit's own checks (no
database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from glyphoxa_pipelines.memory import InvalidInputError, NewEntry
from glyphoxa_pipelines.memory.presence import PresenceEdit, spans, witnesses_of
from realtime.recent_utterances import RecentUtterances, heard_offline

T0 = datetime(2026, 5, 1, 19, 0, tzinfo=UTC)


def _line(i: int, witnesses: list[str] | None, told: list[str] | None = None) -> dict[str, Any]:
    return {"id": 100 + i, "spoken_at": T0 + timedelta(seconds=i), "witnesses": witnesses,
            "told": told or []}


def test_spans_group_equal_presence_in_order() -> None:
    rows = [_line(0, None), _line(1, None), _line(2, ["b", "a"]), _line(3, ["a", "b"]),
            _line(4, ["a", "b"], ["c"]), _line(5, None)]
    got = [(s.first_entry_id, s.last_entry_id, s.lines, s.public, s.witnesses, s.told)
           for s in spans(rows)]
    assert got == [
        (100, 101, 2, True, [], []),
        (102, 103, 2, False, ["a", "b"], []),  # order within the array does not split a span
        (104, 104, 1, False, ["a", "b"], ["c"]),
        (105, 105, 1, True, [], []),  # public again later: its own span, not merged back
    ]
    assert spans(rows)[1].first_at == T0 + timedelta(seconds=2)
    assert spans(rows)[1].last_at == T0 + timedelta(seconds=3)


def test_spans_tell_recorded_nobody_from_public() -> None:
    got = spans([_line(0, []), _line(1, None)])
    assert [(s.public, s.witnesses) for s in got] == [(False, []), (True, [])]
    assert spans([]) == []


@pytest.mark.parametrize(("edit", "says"), [
    (PresenceEdit(), "names no NPC"),
    (PresenceEdit(present=(" ",)), "blank NPC id"),
    (PresenceEdit(present=("a",), absent=("a", "b")), "a: both present and absent"),
    (PresenceEdit(told=("a",), untold=("a",)), "both told and untold"),
    (PresenceEdit(present=("a",), public=True), "not both"),
    (PresenceEdit(first_entry_id=9, last_entry_id=3, told=("a",)), "is after"),
])
def test_edit_checks_name_the_problem(edit: PresenceEdit, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        edit.check()


def test_valid_edits_pass() -> None:
    PresenceEdit(public=True).check()
    PresenceEdit(public=False, present=("a",), absent=("b",), told=("c",)).check()
    assert PresenceEdit(present=("a",), told=("a", "b")).npcs() == ["a", "b"]


@pytest.mark.parametrize(("scene", "role", "speaker", "npc", "want"), [
    ({}, "player", "ana", None, None),  # no presence recorded: public
    ({"present": "alda"}, "player", "ana", None, None),  # not a list: recorded nothing
    ({"present": []}, "player", "ana", None, []),
    ({"present": ["bren", "alda"]}, "dm", "matt", None, ["alda", "bren"]),
    ({"present": ["bren"]}, "player", "ana", "alda", ["alda", "bren"]),  # addressed
    ({"present": ["bren"]}, "npc", "cora", "cora", ["bren", "cora"]),  # spoke
    ({"present": ["bren"]}, "player", "cora", None, ["bren"]),  # a player's id is no NPC's
    ({"present": ["bren", "bren", " "]}, "npc", "", "", ["bren"]),
])
def test_witnesses_of_a_line(scene: dict[str, Any], role: str, speaker: str,
                             npc: str | None, want: list[str] | None) -> None:
    assert witnesses_of(scene, role, speaker, npc) == want


def test_degraded_context_adds_only_lines_the_npc_heard_by_its_last_scene() -> None:
    ring = RecentUtterances(10)
    ring.remember("s", [
        NewEntry("k1", "The vault password is blue heron.", "ana", "Ana", "player"),
        NewEntry("k2", "Alda, can you hear me?", "ana", "Ana", "player", npc_id="alda"),
    ])
    lines = list(ring.of("s"))
    scene = {"present": ["bren"]}
    assert [heard_offline(r, "alda", scene) for r in lines] == [False, True]
    assert [heard_offline(r, "bren", scene) for r in lines] == [True, True]
    assert [heard_offline(r, "alda", {}) for r in lines] == [True, True]  # public
