"""The routing rules of `realtime.read_replica` and the shared pre-fetch merge, on plain
values (the tests with real servers are beside this file)."""

from __future__ import annotations

import time

import pytest

from realtime.hot_context import Memory
from realtime.prefetch.cache import PrefetchCache, Prefetched
from realtime.prefetch.shared import row_item
from realtime.prefetch.triggers import Trigger
from realtime.read_replica import ReplicaReads, parse_lsn, reading_for, reading_session


def test_parse_lsn_orders_positions() -> None:
    assert parse_lsn("0/3018AD0") == 0x3018AD0
    assert parse_lsn("1/0") == 1 << 32
    assert parse_lsn("0/FFFFFFFF") < parse_lsn("1/0")
    with pytest.raises(ValueError, match="not a WAL position"):
        parse_lsn("3018AD0")


async def _serving() -> ReplicaReads:
    rep = ReplicaReads("host=/nonexistent dbname=x", object())  # type: ignore[arg-type]
    rep.reachable, rep.listening, rep.lag_s = True, True, 0.0
    rep.replay_lsn = rep.primary_lsn = 1000
    return rep


async def test_a_session_reads_the_standby_only_past_its_own_write() -> None:
    rep = await _serving()
    assert rep.refusal("s1") is None
    rep.session_announced("s1 0/7D0")  # 2000, written by some worker
    assert rep.refusal("s1") == "session's writes not replayed"
    assert rep.refusal("s2") is None  # other sessions are not held back
    rep.session_announced("s1 0/10")  # an older announcement never lowers the mark
    rep.replay_lsn = 2000
    assert rep.refusal("s1") is None
    rep.session_announced("garbage")
    rep.session_announced("s1 not-an-lsn")
    assert rep.refusal("s1") is None


async def test_a_barrier_holds_every_read_until_the_next_poll_resolves_it() -> None:
    rep = await _serving()
    rep.barrier()
    assert rep.refusal(None) == "graph change not replayed"
    rep.primary_seen(1500, rep.barriers_requested - 1, time.monotonic())  # read too early
    assert rep.refusal(None) == "graph change not replayed"
    rep.primary_seen(1500, rep.barriers_requested, time.monotonic())
    assert rep.barrier_lsn == 1500
    assert rep.refusal(None) == "graph change not replayed"  # not replayed yet
    rep.replay_lsn = 1500
    assert rep.refusal(None) is None


async def test_unreachable_lagging_or_unheard_standby_serves_nothing() -> None:
    rep = await _serving()
    rep.lag_s = rep.max_lag_s + 0.1
    assert rep.refusal(None) == "lagging"
    rep.lag_s = 0.0
    rep.listener_state(False)
    assert rep.refusal(None) == "listener down"
    rep.listener_state(True)  # reconnected: whatever happened meanwhile is a barrier
    assert rep.refusal(None) == "graph change not replayed"
    rep.reachable = False
    assert rep.refusal(None) == "unreachable"
    assert rep.route() is False
    assert rep.fallbacks == {"unreachable": 1}


def test_reading_for_scopes_the_session() -> None:
    assert reading_session() is None
    with reading_for("s1"):
        assert reading_session() == "s1"
        with reading_for(None):
            assert reading_session() is None
        assert reading_session() == "s1"
    assert reading_session() is None


def test_merge_takes_another_workers_entry_but_never_over_a_finished_one() -> None:
    cache = PrefetchCache(ttl_s=60)
    trig = Trigger("entity", "borga", "Borga")
    now = time.monotonic()
    row = {"kind": "entity", "key": "borga", "viewer": "", "surface": "Borga",
           "memories": [{"kind": "entity", "text": "Borga (npc)", "score": 1.0,
                         "source": {"entity_id": "borga"}}],
           "pending": False, "elapsed_ms": 3.0, "age_s": 2.0}
    item = row_item(row, now)
    assert item.memories == [Memory("entity", "Borga (npc)", 1.0, {"entity_id": "borga"})]
    assert abs((now - item.fetched_at) - 2.0) < 1e-6
    assert cache.merge("s", item) is True
    assert cache.stats["fetched"] == 0  # taken, not fetched here
    assert [m.text for m in cache.get("s", "thaldrin")[0].memories] == ["Borga (npc)"]
    mine = Prefetched(trig, "", [Memory("entity", "mine", 1.0)], now)
    cache.put("s", mine)
    assert cache.merge("s", item) is False  # a finished entry here wins
    stale = row_item({**row, "age_s": 61.0}, time.monotonic())
    assert cache.merge("t", stale) is False  # expired on arrival
    pending = Prefetched(trig, "", [], now, meta={"pending": True})
    cache.put("u", pending)
    assert cache.has("u", item) and cache.merge("u", item) is True  # replaces a reservation
