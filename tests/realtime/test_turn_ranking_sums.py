"""The turn model computed the fast way is the model as written: each score is the bias plus
the weighted features summed in their order, lifted by the better neighbour; each neighbour
feature is the maximum over the adjacent candidate turns (pure: no database)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from realtime import turn_ranking as tr
from realtime.session_search.legs import read_words


def _candidates() -> tuple[dict[int, dict[str, Any]], dict[int, int],
                           dict[int, tuple[int | None, int | None]]]:
    when = datetime(2025, 1, 6, 19, 0, tzinfo=UTC)
    texts = ["Mira found the silver key in the crypt", "I roll", "Nat 20",
             "the key opens the vault under the temple", "we sleep at the inn",
             "Bo says the vault is guarded", "a dragon sleeps in the mountains"]
    sims: list[float | None] = [0.61, 0.12, None, 0.55, 0.20, 0.48, 0.33]
    rows = {i: {"id": i, "speaker_name": "Mira" if i % 3 == 0 else "Bo", "text": t,
                "similarity": s, "spoken_at": when}
            for i, (t, s) in enumerate(zip(texts, sims, strict=True), start=1)}
    origin = {1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 2, 7: 3}
    # 1-2-3 a run, 4-5 a run, 6 alone, 7 linked to a turn that is not a candidate.
    links = {1: (None, 2), 2: (1, 3), 3: (2, None), 4: (None, 5), 5: (4, None),
             6: (None, None), 7: (99, None)}
    return rows, origin, links


def test_scores_are_the_weighted_features_summed_in_order_then_lifted() -> None:
    rows, origin, links = _candidates()
    for query in ("what did Mira find in the crypt?", "where is the vault key",
                  "what happened on 6 January 2025?"):
        features = tr.turn_features(rows, origin, links, query)
        own = {i: tr.TURN_BIAS + sum(tr.TURN_WEIGHTS[k] * v for k, v in f.items())
               for i, f in features.items()}
        want = tr.lift_neighbours(own, links, tr.NEIGHBOUR_LIFT)
        assert tr.turn_scores(rows, origin, links, query) == want  # bit for bit
        assert len(set(want.values())) > 1


def test_neighbour_features_are_the_best_adjacent_candidate_turns() -> None:
    rows, origin, links = _candidates()
    f = tr.turn_features(rows, origin, links, "the silver key of the vault")
    for name, own in (("neighbour_words", "words"), ("neighbour_words_rank", "words_rank"),
                      ("neighbour_similarity_rank", "similarity_rank")):
        assert f[2][name] == max(f[1][own], f[3][own])  # two neighbours
        assert f[1][name] == f[2][own] and f[5][name] == f[4][own]  # one
        assert f[6][name] == 0.0 and f[7][name] == 0.0  # none, or not a candidate
    assert f[4]["words"] > 0 and f[2]["neighbour_words"] > 0


def test_read_words_fills_the_turn_models_cache_for_both_fetch_shapes() -> None:
    tr.terms.cache_clear()
    turn = {"text": "the lantern of Vell burns blue"}
    scene = {"text": "Vell's lantern went dark"}
    read_words({"c1": [turn]})
    read_words({"c1": ([scene], [])})
    before = tr.terms.cache_info().hits
    assert tr.terms(turn["text"]) == {"lantern", "vell", "burn", "blue"}
    tr.terms(scene["text"])
    assert tr.terms.cache_info().hits == before + 2
