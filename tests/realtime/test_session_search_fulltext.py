"""The full-text leg of session search: which words it ranks (pure), and the leg on a real
campaign (a word too many chunks hold is dropped; the answer does not depend on a clock)."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.db import Database
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


_QUESTIONS = [
    "Who sold the tunnel map in the mountain city?",
    "What did Thaldrin say about the Sunblade and the SUNBLADE thief?",
    "wolves caravans north road gold ale inn",
    "the and of to",  # stop words only: nothing counted
    "zeppelin quasar",  # words no chunk holds
    "?!",
]


@pytest.mark.parametrize("cap, words", [(500, 8), (3, 8), (500, 2), (1, 8)])
async def test_one_statement_leg_equals_the_two_step_reference(  # type: ignore[no-untyped-def]
    rt_service, rt_seed, cap: int, words: int
) -> None:
    """The one-round-trip leg (lexeme counts from `chunk_lexeme_counts`, the pick in SQL)
    returns exactly the two-step leg's chunks, ranks and word pick: the speed-up changes no
    answer. Caps of 3 and 1 make words common; a limit of 2 drops rarer-than-most words."""
    from glyphoxa_pipelines.memory.visibility import chunk_visible
    from realtime.session_search.fulltext import fulltext_two_step_op

    svc = rt_service
    cid = rt_seed.campaign_id
    plain = {"s": None, "sp": None, "after": None, "before": None}
    ranked = 0
    for question in _QUESTIONS:
        for params, scope in ((plain, None), ({**plain, "sp": "Matt"}, None),
                              (plain, (chunk_visible("c"), {"listener": "thaldrin"}))):
            kw = {"cap": cap, "words": words, **({"scope": scope} if scope else {})}
            ref = await svc.run(fulltext_two_step_op(cid, question, 10, params, **kw))
            got = await svc.run(fulltext_op(cid, question, 10, params, **kw),
                                transaction=False)
            assert got[1] == ref[1], question
            assert [(h.chunk.id, h.score) for h in got[0]] == [
                (h.chunk.id, h.score) for h in ref[0]], question
            ranked += bool(got[0])
    # Not a comparison of two empty answers; with a cap of one chunk every word is common.
    assert ranked >= 3 if cap > 1 else ranked == 0


async def test_the_outage_guard_answers_none_and_leaves_the_pool_usable(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    """The guard is the client's (no transaction around the one statement): when it fires the
    leg says so with None, and the next search runs on a healthy connection."""
    from dataclasses import replace

    from realtime.session_search import SESSION_SEARCH
    from realtime.session_search.legs import Filters, fulltext_leg

    filters = Filters(session_id=None, speaker=None, after=None, before=None, listener=None)
    question = "Who sold the tunnel map in the mountain city?"
    cut = replace(SESSION_SEARCH, fulltext_guard_ms=0)
    assert await fulltext_leg(rt_service.tools, rt_seed.campaign_id, question, 10, filters,
                              cut) is None
    hits = await fulltext_leg(rt_service.tools, rt_seed.campaign_id, question, 10, filters,
                              SESSION_SEARCH)
    assert hits and "tunnel" in hits[0].chunk.text.lower()


def test_the_leg_statement_is_rendered_once_as_the_connection_renders_it(db: Database) -> None:
    from psycopg import sql

    from glyphoxa_pipelines.memory.semantic_index import CHUNK_COLUMNS
    from glyphoxa_pipelines.memory.visibility import chunk_visible
    from realtime.session_search.fulltext import _ONE_STATEMENT, CHUNK_FILTERS, one_statement

    scope = chunk_visible("c")
    text = one_statement(scope.as_string(None))
    composed = sql.SQL(_ONE_STATEMENT).format(cols=sql.SQL(CHUNK_COLUMNS),
                                              filters=CHUNK_FILTERS, scope=scope)
    with db.connection() as conn:
        assert text == composed.as_string(conn)
    assert one_statement(scope.as_string(None)) is text  # cached: composed once per scope
