"""The full-text leg of session search: which words it ranks (pure), and the leg on a real
campaign (a word too many chunks hold is dropped; the answer does not depend on a clock)."""

from __future__ import annotations

import pytest

from realtime.session_search.fulltext import fulltext_op, pick_words, query_words


def test_query_words_are_the_tsquery_words_once_each() -> None:
    assert query_words("Who stole the Sunblade? The SUNBLADE, from the temple!") == [
        "Who", "stole", "the", "Sunblade", "The", "SUNBLADE", "from", "temple"]
    assert query_words("?!") == []


def test_common_words_are_dropped_and_the_rarest_kept() -> None:
    counts = {"party": 900, "sunblade": 3, "temple": 40, "stole": 12, "city": 500}
    pick = pick_words(counts, cap=500, limit=2)
    assert pick.kept == ("sunblade", "stole")  # rarest first, at most `limit`
    assert pick.common == ("city", "party")  # at the cap counts as common
    assert pick.tsquery == "'sunblade' | 'stole'"


def test_words_no_chunk_holds_are_not_ranked() -> None:
    pick = pick_words({"zeppelin": 0, "party": 900}, cap=500, limit=8)
    assert pick.kept == () and pick.tsquery is None


def test_a_bad_cap_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="cap"):
        pick_words({"a": 1}, cap=0, limit=8)


async def test_the_leg_ranks_rare_words_and_drops_common_ones(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    svc = rt_service
    params = {"s": None, "sp": None, "after": None, "before": None}
    question = "Who sold the tunnel map in the mountain city?"
    hits, pick = await svc.run(fulltext_op(rt_seed.campaign_id, question, 10, params,
                                           cap=500, words=8))
    assert hits and "tunnel" in hits[0].chunk.text.lower()
    assert "map" in pick.kept and not pick.common
    # With a cap of one chunk every word the campaign holds at all is common: nothing ranked.
    none, strict = await svc.run(fulltext_op(rt_seed.campaign_id, question, 10, params,
                                             cap=1, words=8))
    assert none == [] and "tunnel" in strict.common and strict.kept == ()


def test_results_say_when_the_outage_guard_cut_the_keyword_leg() -> None:
    from realtime import session_search as ss

    results = [{"text": "Borga: thirty gold", "score": 0.9}]
    assert ss.mark_missing(results, "ok") == results
    marked = ss.mark_missing(results, "timeout")
    assert marked[0]["degraded"] == ss.FULLTEXT_MISSING and "degraded" not in results[0]
