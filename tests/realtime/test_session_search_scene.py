"""The best windows widened into their scene (`session_search/scene.py`): which turns are
added, in what order, within what budget, and never a line the listener did not hear."""

from __future__ import annotations

from collections.abc import Generator
from datetime import UTC, datetime, timedelta
from typing import Any

from glyphoxa_pipelines.db.operations import execute, fetch_all
from realtime.hot_context import estimate_tokens
from realtime.session_search import scene

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _rows(query: str, params: tuple) -> Generator[Any, Any, list[dict]]:
    rows = yield fetch_all(query, params)
    return rows


def _run(query: str, params: tuple) -> Generator[Any, Any, None]:
    yield execute(query, params)


def _turn(i: int, text: str = "I roll.") -> dict:
    return {"id": i, "speaker_name": "Bo", "speaker_id": "bo", "text": text,
            "spoken_at": T0 + timedelta(seconds=i), "similarity": 0.1}


def test_widen_adds_the_nearest_turns_within_the_tokens_in_spoken_order() -> None:
    own = [_turn(10), _turn(11)]
    before = [_turn(9), _turn(8), _turn(7)]  # nearest first, as the statement returns them
    after = [_turn(12), _turn(13, "A very long speech about the city. " * 20), _turn(14)]
    cost = estimate_tokens("I roll.") + 1
    out = scene.widen({"c1": own, "c2": [_turn(40)]}, {"c1": (before, after)}, 2 * cost)
    assert [r["id"] for r in out["c1"]] == [8, 9, 10, 11, 12]  # 13 is too long to fit after 12
    assert [bool(r.get(scene.SCENE_MARK)) for r in out["c1"]] == [True, True, False, False, True]
    assert [r["id"] for r in out["c2"]] == [40]  # not among the windows widened
    assert "scene" not in own[0]  # the fetched rows are not changed in place


def test_a_long_turn_next_to_a_window_still_counts_and_windows_without_turns_stay_empty(
) -> None:
    long = _turn(5, "The dragon speaks at length about its hoard. " * 30)
    out = scene.widen({"c1": [_turn(6)], "c2": []}, {"c1": ([long], []), "c2": ([_turn(1)], [])},
                      10)
    assert [r["id"] for r in out["c1"]] == [5, 6]
    assert out["c2"] == []  # competes whole as its text, as before
    assert scene.within_tokens([], 10) == []


async def test_scene_turns_are_the_session_neighbours_and_only_what_the_listener_heard(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    svc = rt_service
    chunks = await svc.run(_rows(
        "SELECT c.id, c.session_id, c.first_entry_id, c.last_entry_id FROM chunks c"
        " WHERE c.campaign_id = %s ORDER BY c.session_id, c.seq", (rt_seed.campaign_id,)))
    lines = await svc.run(_rows(
        "SELECT id, session_id, text FROM session_entries WHERE campaign_id = %s"
        " ORDER BY session_id, spoken_at, id", (rt_seed.campaign_id,)))
    order = [r["id"] for r in lines]
    session_of = {r["id"]: r["session_id"] for r in lines}
    text = {r["id"]: r["text"] for r in lines}

    def around(c: dict) -> tuple[list[int], list[int]]:
        """The chunk's session's turns before it (nearest first) and after it."""
        a, b = order.index(c["first_entry_id"]), order.index(c["last_entry_id"])
        same = [i for i in order if session_of[i] == c["session_id"]]
        return ([i for i in reversed(same) if order.index(i) < a],
                [i for i in same if order.index(i) > b])

    # A chunk with turns on both sides in its own session.
    pick = next(c for c in chunks if all(around(c)))
    want_before, want_after = around(pick)
    vec = await svc.embedder.embed("the tunnels")
    # A budget of two turns each side (the statement sums the same costs `within_tokens` does).
    budget = {side: sum(estimate_tokens(text[i]) + 1 for i in ids[:2])
              for side, ids in (("before", want_before), ("after", want_after))}
    got = await svc.run(scene.scene_turns_op([pick["id"]], budget["before"], query_vector=vec,
                                             model=svc.embedder.model_id))
    before, after = got[pick["id"]]
    assert [r["id"] for r in before] == want_before[:2]  # nearest first
    if budget["after"] <= budget["before"]:
        assert [r["id"] for r in after][:2] == want_after[:2]
    got_after = await svc.run(scene.scene_turns_op([pick["id"]], budget["after"]))
    assert [r["id"] for r in got_after[pick["id"]][1]] == want_after[:2]
    assert all(isinstance(r["similarity"], float) for r in before + after)
    # The line just before the window was heard by another NPC only.
    await svc.run(_run("UPDATE session_entries SET witnesses = ARRAY['npc-other']"
                          " WHERE id = %s", (want_before[0],)))
    heard = want_before[1] if len(want_before) > 1 else None
    for listener, first in (("npc-me", heard), ("npc-other", want_before[0]),
                            (None, want_before[0])):
        got = await svc.run(scene.scene_turns_op([pick["id"]], budget["before"],
                                                 listener=listener))
        nearest = got[pick["id"]][0]
        assert (nearest[0]["id"] if nearest else None) == first, listener
        assert all(r["similarity"] is None for r in nearest)  # no query vector given
