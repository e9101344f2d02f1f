"""Reads on a real hot standby: read-your-writes while it lags, and the primary when it
falls behind or goes away, said in /healthz."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from realtime.schemas import EntryIn
from tests.scale.conftest import ReplicaPair, wait_replayed
from tests.support.scale_seed import ScaleSeed, seed_scale_campaign

pytestmark = pytest.mark.slow  # starts a second PostgreSQL server


@pytest.fixture
def seed(replica_pair: ReplicaPair) -> ScaleSeed:
    s = seed_scale_campaign(replica_pair.primary_url)
    wait_replayed(replica_pair)
    return s


@pytest.fixture
async def service(replica_pair: ReplicaPair, seed: ScaleSeed, tmp_path: Path
                  ) -> AsyncIterator[object]:
    """Opened after the seed, and once the standby serves: the seed's graph changes are
    announced and must be replayed first."""
    from realtime.service import MemoryService

    svc = MemoryService(replica_pair.primary_url, settings=replica_pair.settings,
                        read_url=replica_pair.standby_url, spool_dir=tmp_path / "spool",
                        replica_max_lag_s=60.0, probe_interval_s=0.2)
    await svc.open(warm_embedder=False)
    await _until(lambda: svc.replica.refusal(None) is None)
    yield svc
    await svc.close()


async def _until(check, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.02)


def _line(text: str) -> EntryIn:
    return EntryIn(idempotency_key=uuid.uuid4().hex, text=text, speaker_name="Ana",
                   role="player")


def _standby_has(pair: ReplicaPair, text: str) -> bool:
    with psycopg.connect(pair.standby_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM session_entries WHERE text = %s",
                           (text,)).fetchone()
    return bool(row and row[0])


def _replay(pair: ReplicaPair, *, paused: bool) -> None:
    with psycopg.connect(pair.standby_url, autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


async def test_standby_is_a_streaming_hot_standby(replica_pair: ReplicaPair, seed: ScaleSeed
                                                  ) -> None:
    with psycopg.connect(replica_pair.standby_url, autocommit=True) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        row = conn.execute("SELECT name FROM entities WHERE campaign_id = %s AND id = %s",
                           (seed.campaign_id, seed.npc_id)).fetchone()
        assert row == ("Thaldrin Ashvale",)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("DELETE FROM entities WHERE campaign_id = %s", (seed.campaign_id,))


async def test_hot_context_reads_the_standby_when_it_is_current(service, seed: ScaleSeed
                                                                ) -> None:  # type: ignore[no-untyped-def]
    before = service.replica.reads["replica"]
    ctx = await service.hot_context(seed.session_id, seed.npc_id)
    assert ctx.identity["name"] == "Thaldrin Ashvale"
    assert service.replica.reads["replica"] > before
    health = await service.health()
    assert health["replica"]["serving"] is True, health["replica"]
    assert health["replica"]["reachable"] is True


async def test_own_write_is_in_the_next_context_while_the_standby_lags(
    service, replica_pair: ReplicaPair, seed: ScaleSeed  # type: ignore[no-untyped-def]
) -> None:
    text = f"Thaldrin, the bridge collapsed behind us {uuid.uuid4().hex[:6]}"
    _replay(replica_pair, paused=True)
    try:
        await service.write_entries(seed.session_id, [_line(text)])
        await asyncio.sleep(0.3)
        assert not _standby_has(replica_pair, text)  # the standby really is behind
        fallbacks = service.replica.fallbacks.get("session's writes not replayed", 0)
        ctx = await service.hot_context(seed.session_id, seed.npc_id)
        assert text in [r["text"] for r in ctx.recent]
        assert service.replica.fallbacks["session's writes not replayed"] == fallbacks + 1
    finally:
        _replay(replica_pair, paused=False)
    # Once the standby has replayed the write, the session reads there again.
    await _until(lambda: service.replica.refusal(seed.session_id) is None)
    before = service.replica.reads["replica"]
    ctx = await service.hot_context(seed.session_id, seed.npc_id)
    assert text in [r["text"] for r in ctx.recent]
    assert service.replica.reads["replica"] == before + 1


async def test_another_workers_write_is_announced(service, replica_pair: ReplicaPair,
                                                  seed: ScaleSeed, tmp_path: Path
                                                  ) -> None:  # type: ignore[no-untyped-def]
    """A write taken by another service process holds this one's reads on the primary."""
    from realtime.service import MemoryService

    other = MemoryService(replica_pair.primary_url, settings=replica_pair.settings,
                          read_url=replica_pair.standby_url, spool_dir=tmp_path / "other")
    await other.open(warm_embedder=False)
    text = f"Borga wants the map back {uuid.uuid4().hex[:6]}"
    _replay(replica_pair, paused=True)
    try:
        await other.write_entries(seed.session_id, [_line(text)])
        await _until(lambda: service.replica.refusal(seed.session_id) is not None)
        ctx = await service.hot_context(seed.session_id, seed.npc_id)
        assert text in [r["text"] for r in ctx.recent]
    finally:
        _replay(replica_pair, paused=False)
        await other.close()


async def test_a_dm_edit_is_read_from_the_primary_until_replayed(
    service, replica_pair: ReplicaPair, seed: ScaleSeed  # type: ignore[no-untyped-def]
) -> None:
    await service.hot_context(seed.session_id, seed.npc_id)  # identity cached
    _replay(replica_pair, paused=True)
    try:
        await service.update_entity(seed.campaign_id, seed.npc_id, name="Thaldrin the Grey")
        ctx = await service.hot_context(seed.session_id, seed.npc_id)
        assert ctx.identity["name"] == "Thaldrin the Grey"
        assert service.replica.refusal(None) == "graph change not replayed"
    finally:
        _replay(replica_pair, paused=False)
    await _until(lambda: service.replica.refusal(None) is None)


async def test_a_lagging_standby_serves_nothing_and_healthz_says_so(
    service, replica_pair: ReplicaPair, seed: ScaleSeed  # type: ignore[no-untyped-def]
) -> None:
    service.replica.max_lag_s = 0.3
    _replay(replica_pair, paused=True)
    try:
        with psycopg.connect(replica_pair.primary_url, autocommit=True) as conn:
            for _ in range(5):  # the primary moves on; the paused standby does not
                conn.execute("SELECT pg_switch_wal()")
                await asyncio.sleep(0.1)
        await _until(lambda: service.replica.refusal(None) == "lagging")
        health = await service.health()
        assert health["replica"]["serving"] is False
        assert health["replica"]["why_not"] == "lagging"
        assert health["replica"]["lag_s"] > 0.3
        ctx = await service.hot_context(seed.session_id, seed.npc_id)
        assert ctx.identity and not ctx.degraded
    finally:
        _replay(replica_pair, paused=False)
        service.replica.max_lag_s = 60.0


async def test_a_lost_standby_falls_back_to_the_primary(
    service, replica_pair: ReplicaPair, seed: ScaleSeed  # type: ignore[no-untyped-def]
) -> None:
    from glyphoxa_pipelines.db import standby

    standby.stop_standby(replica_pair.standby_pgdata, mode="immediate")
    try:
        text = f"Where is the tunnel map {uuid.uuid4().hex[:6]}"
        await service.write_entries(seed.session_id, [_line(text)])
        ctx = await service.hot_context(seed.session_id, seed.npc_id)
        assert text in [r["text"] for r in ctx.recent]
        assert not ctx.degraded and not service.degraded
        await _until(lambda: not service.replica.reachable)
        health = await service.health()
        assert health["status"] == "ok"
        assert health["replica"]["serving"] is False
        assert health["replica"]["why_not"] == "unreachable"
    finally:
        replica_pair.restart_standby()
    await _until(lambda: service.replica.refusal(None) is None, timeout_s=30)
    before = service.replica.reads["replica"]
    await service.hot_context(seed.session_id, seed.npc_id)
    assert service.replica.reads["replica"] == before + 1


async def test_a_statement_limit_on_the_standby_is_not_an_outage(service, seed: ScaleSeed
                                                                 ) -> None:  # type: ignore[no-untyped-def]
    """Session search's full-text leg cancels itself by a statement timeout; on the standby
    that must stay the caller's timeout, not a lost standby."""
    from glyphoxa_pipelines.db import StatementTimeoutError
    from glyphoxa_pipelines.db.operations import fetch_one, statement_timeout_op

    def sleepy():  # type: ignore[no-untyped-def]
        row = yield fetch_one("SELECT pg_sleep(2)")
        return row

    before = service.replica.reads["replica"]
    with pytest.raises(StatementTimeoutError):
        await service.tools.run(statement_timeout_op(sleepy(), 50))
    assert service.replica.reachable and service.replica.refusal(None) is None
    ctx = await service.hot_context(seed.session_id, seed.npc_id)
    assert ctx.identity and service.replica.reads["replica"] == before + 1
