"""The pure parts of `memory.search_sessions`: rank fusion and turn-level packing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from glyphoxa_pipelines.memory.models import Chunk, ChunkHit
from realtime import session_search as ss
from realtime.hot_context import estimate_tokens
from realtime.session_search.packing import Scorer, packing_order
from realtime.tools.results import iso_minute, reader_tokens

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _turn(i: int, text: str, speaker: str = "Mira") -> dict:
    return {"id": i, "speaker_name": speaker, "speaker_id": speaker.lower(), "text": text,
            "spoken_at": T0 + timedelta(seconds=10 * i)}


def _hit(cid: str, seq: int, method: str = "vector", session: str = "s1") -> ChunkHit:
    return ChunkHit(Chunk(cid, "c", session, seq, "", first_entry_id=seq, last_entry_id=seq),
                    0.1, method)  # type: ignore[arg-type]


def _filler(i: int) -> dict:
    return _turn(i, f"We keep walking along the road, nothing much happens here ({i}).", "Bo")


def test_rrf_fuses_ranks_and_keeps_methods() -> None:
    a, b, c = _hit("s1#0", 0), _hit("s1#1", 1), _hit("s1#2", 2, "fulltext")
    fused = ss.rrf([[a, b], [c, b]])
    assert [h.chunk.id for h, _, _ in fused][0] == "s1#1"  # in both lists
    assert fused[0][2] == ["vector", "vector"]


def test_answer_next_to_the_matching_turn_is_packed_with_it_as_one_passage() -> None:
    window = [_turn(3, "Where did you hide the silver key?", "Bo"),
              _turn(4, "Under the third floorboard of the mill."),
              _filler(5), _filler(6)]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"])]
    budget = ss.citation_chars("s1") // 4 + estimate_tokens(
        "\n".join(f"{t['speaker_name']}: {t['text']}" for t in window[:2])) + 10
    out = ss.passages(hits, {"s1#0": window}, "where is the silver key", budget)
    assert out[0]["source"]["entry_ids"] == [3, 4]  # the answer rides along, one citation
    assert out[0]["text"].startswith("Bo: Where did you hide")  # each line names its speaker
    assert out[0]["source"]["session_id"] == "s1"
    assert sum(reader_tokens(r) for r in out) <= budget


def test_the_budget_counts_the_answer_as_the_model_reads_it() -> None:
    # Quotes and line breaks are escaped in the JSON the model reads, and every key, id and
    # time is read too: all of it is paid from the budget, not the text alone.
    window = [_turn(i, f'"The dragon {i}," she said, "sleeps under the ash."') for i in range(40)]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"])]
    for budget in (60, 150, 400):
        out = ss.passages(hits, {"s1#0": window}, "dragon ash", budget)
        sent = json.dumps(out, ensure_ascii=False, default=str)
        assert out and estimate_tokens(sent) <= budget
        text_only = sum(estimate_tokens(r["text"]) for r in out)
        assert estimate_tokens(sent) > text_only * 1.1  # the overhead is real, and counted
    assert set(out[0]) == {"text", "score", "source"}
    assert set(out[0]["source"]) == {"session_id", "when", "entry_ids"}


def test_an_answer_marked_for_a_missing_keyword_leg_still_fits_its_budget() -> None:
    # The mark is added to every result after packing: the packing pays for it first.
    w1 = [_turn(i, f"The dragon {i} sleeps under the mountain of ash.") for i in range(30)]
    w2 = [_turn(i, f"The dragon {i} wakes in the old crypt.", "Bo") for i in range(40, 70)]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"]), (_hit("s2#0", 0, session="s2"), 0.04,
                                                   ["vector"])]
    over = 0
    for budget in (80, 200, 500):
        assert ss.budget_for(budget, 2, "ok") == budget
        marked = ss.mark_missing(
            ss.passages(hits, {"s1#0": w1, "s2#0": w2}, "dragon",
                        ss.budget_for(budget, 2, "timeout"), limit=2), "timeout")
        assert marked and all(r["degraded"] == ss.FULLTEXT_MISSING for r in marked)
        assert sum(reader_tokens(r) for r in marked) <= budget
        unpaid = ss.mark_missing(ss.passages(hits, {"s1#0": w1, "s2#0": w2}, "dragon",
                                             budget, limit=2), "timeout")
        over += sum(reader_tokens(r) for r in unpaid) > budget
    assert over >= 1  # why the packing must pay (unpaid, a full answer passes its budget)


def test_packing_respects_the_budget_and_shows_each_turn_once() -> None:
    w1 = [_turn(i, f"The dragon {i} sleeps under the mountain of ash.") for i in range(10)]
    w2 = w1[5:] + [_turn(i, f"The dragon {i} wakes.") for i in range(10, 15)]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"]), (_hit("s1#1", 1), 0.04, ["fulltext"])]
    out = ss.passages(hits, {"s1#0": w1, "s1#1": w2}, "dragon mountain", 150)
    shown = [i for r in out for i in r["source"]["entry_ids"]]
    assert len(shown) == len(set(shown)) and shown
    assert sum(reader_tokens(r) for r in out) <= 150
    for r in out:  # spoken order; a gap line wherever turns were skipped
        ids = r["source"]["entry_ids"]
        assert ids == sorted(ids)
        gaps = sum(1 for a, b in zip(ids, ids[1:], strict=False) if b != a + 1)
        assert r["text"].split("\n").count(ss.GAP) == gaps


def test_one_result_per_session_with_skipped_turns_marked() -> None:
    early = [_turn(1, "We reach the old mill."), _turn(2, "The miller hides a silver key."),
             _filler(3), _filler(4)]
    late = [_filler(20), _turn(21, "Bo: the silver key opens the crypt.", "Bo"), _filler(22)]
    other = [_turn(40, "A silver key glints in the river.", "Ana")]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"]), (_hit("s1#5", 5), 0.04, ["vector"]),
            (_hit("s2#0", 0, session="s2"), 0.03, ["fulltext"])]
    turns = {"s1#0": early, "s1#5": late, "s2#0": other}
    out = ss.passages(hits, turns, "silver key",
                      60 + (ss.citation_chars("s1") + ss.citation_chars("s2")) // 4)
    by_session = {r["source"]["session_id"]: r for r in out}
    assert set(by_session) == {"s1", "s2"} and len(out) == 2
    s1 = by_session["s1"]
    assert 2 in s1["source"]["entry_ids"] and 21 in s1["source"]["entry_ids"]
    assert s1["source"]["entry_ids"] == sorted(s1["source"]["entry_ids"])
    assert ss.GAP in s1["text"].split("\n")  # 2 and 21 are not neighbours
    # Its first turn's time (turn 2, at 00:00:20), to the minute: turn 21 is at 00:03:30.
    assert s1["source"]["when"] == "2024-01-01T00:00Z"


def test_a_citation_time_is_utc_to_the_minute() -> None:
    assert iso_minute(datetime(2023, 7, 20, 22, 56, 30, tzinfo=timezone(timedelta(hours=2)))
                      ) == "2023-07-20T20:56Z"
    assert iso_minute(datetime(2023, 7, 20, 20, 56, 59)) == "2023-07-20T20:56Z"  # naive: UTC
    assert iso_minute(None) is None


def test_consecutive_windows_join_across_their_edge() -> None:
    w0 = [_turn(1, "Where did you hide the silver key?", "Bo")]
    w1 = [_turn(2, "Under the third floorboard of the mill.")]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"]), (_hit("s1#1", 1), 0.04, ["vector"])]
    _rows, _origin, links, _whole = ss.candidate_turns(hits, {"s1#0": w0, "s1#1": w1})
    assert links[1] == (None, 2) and links[2] == (1, None)
    out = ss.passages(hits, {"s1#0": w0, "s1#1": w1}, "silver key", 500)
    assert out[0]["source"]["entry_ids"] == [1, 2] and ss.GAP not in out[0]["text"]


def test_top_k_caps_the_results_keeping_the_best() -> None:
    # Eight sessions with one matching turn each: eight results without a cap.
    hits = [(_hit(f"s{i}#0", 0, session=f"s{i}"), 0.05, ["vector"]) for i in range(8)]
    turns = {f"s{i}#0": [_turn(10 * i, f"The lighthouse keeper {i} saw a ship.")]
             for i in range(8)}
    everything = ss.passages(hits, turns, "lighthouse keeper ship", 2000)
    assert len(everything) == 8
    capped = ss.passages(hits, turns, "lighthouse keeper ship", 2000, limit=3)
    assert capped == everything[:3]
    # The turn model's probability (2 digits: an unlikely turn's reads 0.0), best first.
    scores = [r["score"] for r in everything]
    assert all(0.0 <= x < 1.0 for x in scores) and scores == sorted(scores, reverse=True)
    assert [r["source"]["session_id"] for r in everything] == [f"s{i}" for i in range(8)]


def test_a_window_without_turns_competes_whole() -> None:
    hit = ChunkHit(Chunk("s1#0", "c", "s1", 0, "DM: the bell tolls", speakers=["DM"]), 0.1)
    out = ss.passages([(hit, 0.05, ["vector"])], {}, "bell", 500)
    assert out[0]["chunk_id"] == "s1#0" and out[0]["source"]["speakers"] == ["DM"]
    assert 0.0 < out[0]["score"] < 1.0  # the same probability as turn results


async def test_knn_leg_matches_the_store_and_keeps_its_hnsw_setting_local(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    from glyphoxa_pipelines.db.database import drive_async
    from glyphoxa_pipelines.memory import SemanticIndex
    svc = rt_service
    vec = await svc.embedder.embed("the stolen sword at the temple")
    model = svc.embedder.model_id
    store = await svc.run(SemanticIndex.search.op(svc.index, rt_seed.campaign_id, vec, 5,
                                                  model=model))
    async with svc.db.pool.connection() as conn:  # autocommit, as the pool hands them out
        leg = await drive_async(conn, SemanticIndex.search.op(
            svc.index, rt_seed.campaign_id, vec, 5, model=model, ef_search=40),
            transaction=False)
        after = await (await conn.execute("SHOW hnsw.ef_search")).fetchone()
    assert [h.chunk.id for h in leg] == [h.chunk.id for h in store]
    assert all(h.method == "vector" for h in leg)
    assert after[0] == "200"  # the pool's own setting is back for the next user
    one = await svc.run(SemanticIndex.search.op(
        svc.index, rt_seed.campaign_id, vec, 5, model=model, ef_search=40,
        session_id=rt_seed.past_sessions[0]), transaction=False)
    assert one and {h.chunk.session_id for h in one} == {rt_seed.past_sessions[0]}


async def test_the_tool_ranks_turns_with_their_own_vectors(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    from realtime import tools as tl
    from realtime.tools import ToolScope

    svc = rt_service
    question = "Who sold the party a map of the old tunnels, and for how much?"
    args = tl.SearchSessionsArgs(query=question, top_k=8)
    turns = (await ss.fetch_candidates(svc, args, rt_seed.campaign_id)).turns
    rows = [r for window in turns.values() for r in window]
    assert rows and all(isinstance(r["similarity"], float) for r in rows)
    best = max(rows, key=lambda r: r["similarity"])
    assert "tunnel map" in best["text"] or "map of the old tunnels" in best["text"]
    out = await svc.call_tool("memory.search_sessions",
                              {"query": question, "top_k": 2, "max_tokens": 100},
                              ToolScope(rt_seed.campaign_id, None, None))
    top = out["results"][0]
    assert "Borga sells you the tunnel map" in top["text"]
    assert top["source"]["session_id"] == rt_seed.past_sessions[1]
    assert 0.0 < top["score"] < 1.0


def _fixed(scores: dict[int, float]) -> Scorer:
    def scorer(rows, origin, links, query):  # type: ignore[no-untyped-def]
        return scores
    return scorer


def test_the_budget_goes_to_evidence_per_token_not_to_one_long_turn() -> None:
    long_turn = _turn(1, "and then " * 150 + "the silver key was in the mill all along")
    short = [_turn(i, f"The silver key {i} is under the floorboard.") for i in (10, 20, 30)]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"])]
    turns = {"s1#0": [long_turn, *short]}
    # The long turn is a little more likely; the three short ones cost a fraction of it.
    scorer = _fixed({1: 0.0, 10: -0.2, 20: -0.2, 30: -0.2})
    budget = (ss.turn_chars(f"Mira: {long_turn['text']}", 1) + ss.citation_chars("s1")) // 4 + 5
    by_probability = ss.passages(hits, turns, "silver key", budget, scorer=scorer,
                                 cost_exponent=0.0)
    assert by_probability[0]["source"]["entry_ids"] == [1]  # the budget spent on one turn
    per_token = ss.passages(hits, turns, "silver key", budget, scorer=scorer)
    assert per_token[0]["source"]["entry_ids"] == [10, 20, 30]
    assert sum(reader_tokens(r) for r in per_token) <= budget


def test_results_come_in_order_of_their_most_probable_turn() -> None:
    # Session s1's short turns are packed first (per token), but s2 holds the likeliest turn.
    s1 = [_turn(i, f"A silver key {i}.") for i in (1, 2)]
    s2 = [_turn(50, "The silver key " + "was kept safe by the old miller, " * 12, "Bo")]
    hits = [(_hit("s1#0", 0), 0.05, ["vector"]), (_hit("s2#0", 0, session="s2"), 0.04,
                                                  ["vector"])]
    scorer = _fixed({1: 1.0, 2: 1.0, 50: 1.5})
    out = ss.passages(hits, {"s1#0": s1, "s2#0": s2}, "silver key", 2000, scorer=scorer)
    _rows, origin, _links, _whole = ss.candidate_turns(hits, {"s1#0": s1, "s2#0": s2})
    costs = {1: 10, 2: 10, 50: 120}
    assert packing_order({1: 1.0, 2: 1.0, 50: 1.5}, costs, origin, 0.5)[-1] == 50
    assert [r["source"]["session_id"] for r in out] == ["s2", "s1"]
    assert out[0]["score"] > out[1]["score"]
