"""Pseudo-relevance feedback (`session_search/feedback.py`): the query moved towards the best
windows, and the second vector search it feeds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from realtime.session_search.feedback import rocchio
from tests.realtime.test_npc_scope import TUNNEL, world  # noqa: F401  (the fixture)


def test_the_query_moves_towards_the_mean_of_the_feedback_and_stays_unit_length() -> None:
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    docs = [np.array([0.0, 2.0, 0.0]), np.array([0.0, 0.0, 5.0])]  # lengths do not weigh
    moved = rocchio(q, docs, beta=1.0)
    assert np.isclose(np.linalg.norm(moved), 1.0)
    assert moved[1] == pytest.approx(moved[2]) and moved[1] > 0  # each document counts once
    assert moved[0] > moved[1]  # the query still leads at beta 1 (1 against 0.5 each)
    closer = rocchio(q, docs, beta=4.0)
    assert closer[1] > moved[1]  # a larger beta moves it further


def test_no_feedback_or_beta_zero_leaves_the_query_as_it_was() -> None:
    q = np.array([3.0, 4.0], dtype=np.float32)
    assert np.array_equal(rocchio(q, [], beta=0.7), q)
    assert np.array_equal(rocchio(q, [np.array([1.0, 0.0])], beta=0.0), q)
    assert np.array_equal(rocchio(q, [np.zeros(2)], beta=0.7), q)  # an empty vector is none


def test_bad_input_is_refused_by_name() -> None:
    q = np.array([1.0, 0.0], dtype=np.float32)
    with pytest.raises(ValueError, match="dimensions"):
        rocchio(q, [np.array([1.0, 0.0, 0.0])], beta=0.5)
    with pytest.raises(ValueError, match="beta"):
        rocchio(q, [np.array([1.0, 0.0])], beta=-1.0)
    with pytest.raises(ValueError, match="all zeros"):
        rocchio(np.zeros(2), [np.array([1.0, 0.0])], beta=0.5)
    with pytest.raises(ValueError, match="finite"):
        rocchio(np.array([np.nan, 1.0]), [np.array([1.0, 0.0])], beta=0.5)


async def test_the_second_search_brings_new_windows(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    """With feedback on, the fused windows include what only the moved query found (a chunk
    both vector searches return is marked twice), from vectors of the first pass's windows."""
    from realtime import session_search as ss
    from realtime.session_search.feedback import chunk_vectors_op
    from realtime.session_search.legs import Filters

    svc = rt_service
    cid = rt_seed.campaign_id
    question = "Who sold the party a map of the old tunnels, and for how much?"
    plain = replace(ss.SESSION_SEARCH, fusion_weights=(1.0, 0.0))
    fed = replace(plain, feedback_windows=3, feedback_beta=3.0)
    everything = Filters(session_id=None, speaker=None, after=None, before=None, listener=None)
    before, vec, _ = await ss.hybrid(svc, cid, question, 2, everything, plain)
    after, _, _ = await ss.hybrid(svc, cid, question, 2, everything, fed)
    assert vec is not None and before and after
    docs = await svc.run(chunk_vectors_op(cid, [h.chunk.id for h, _, _ in before[:3]],
                                          vec.model), transaction=False)
    assert len(docs) == min(3, len(before))
    assert [h.chunk.id for h, _, _ in after] != [h.chunk.id for h, _, _ in before]
    assert any(methods == ["vector", "vector"] for _, _, methods in after)


async def test_the_feedback_search_keeps_the_npcs_scope(  # type: ignore[no-untyped-def]
    rt_service, world  # noqa: F811  (the imported fixture)
) -> None:
    """Alda was away from the docks: her feedback search never holds a docks window, while
    Bren's (he was there) does: the second search applies the same visibility rule."""
    from realtime import session_search as ss
    from realtime.session_search.legs import Filters

    fed = replace(ss.SESSION_SEARCH, feedback_windows=3, feedback_beta=3.0)
    sessions = {}
    for npc in ("alda", "bren"):
        scope = Filters(session_id=None, speaker=None, after=None, before=None, listener=npc)
        hits, _, _ = await ss.hybrid(rt_service, world.cid, TUNNEL, 8, scope, fed)
        sessions[npc] = {h.chunk.session_id for h, _, _ in hits}
    assert world.docks not in sessions["alda"] and sessions["alda"]  # she still recalls hers
    assert world.docks in sessions["bren"]
