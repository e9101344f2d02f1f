"""Several realtime workers give the same answers: pre-fetch results travel through
PostgreSQL (`realtime.prefetch.shared`), so where a request lands does not matter."""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.support.scale_seed import ScaleSeed, seed_scale_campaign
from tests.support.worker_processes import worker_processes


def _entity_memories(ctx: dict, name: str) -> list[dict]:  # type: ignore[type-arg]
    return [m for m in ctx["memories"] if m["kind"] == "entity" and m["text"].startswith(name)]


@pytest.mark.slow
def test_a_partial_on_worker_1_feeds_the_hot_context_on_worker_2(database_url: str) -> None:
    seed = seed_scale_campaign(database_url)
    home = Path(tempfile.mkdtemp(prefix="gx-workers-"))
    with worker_processes(database_url, home, 2) as (one, two):
        ctx = httpx.get(f"{two}/v1/sessions/{seed.session_id}/npcs/{seed.npc_id}/context",
                        timeout=30).json()
        assert _entity_memories(ctx, "Borga") == []  # nothing pre-fetched yet
        got = httpx.post(f"{one}/v1/sessions/{seed.session_id}/partials",
                         json={"text": "Have you seen Borga lately", "npc_id": seed.npc_id},
                         timeout=30).json()
        assert [t["key"] for t in got["triggers"]] == [seed.other_npc_id]
        # The fetch runs in worker 1's background; wait for it there, then ask worker 2.
        deadline = time.monotonic() + 30
        while httpx.get(f"{one}/healthz", timeout=10).json()["prefetch"]["fetched"] < 2:
            assert time.monotonic() < deadline, "worker 1 never finished its pre-fetch"
            time.sleep(0.05)
        ctx = httpx.get(f"{two}/v1/sessions/{seed.session_id}/npcs/{seed.npc_id}/context",
                        timeout=30).json()
        borga = _entity_memories(ctx, "Borga")
        assert borga and "dwarven merchant" in borga[0]["text"]
        health = httpx.get(f"{two}/healthz", timeout=10).json()
        assert health["prefetch"]["fetched"] == 0  # worker 2 fetched nothing itself
        assert health["prefetch_shared"]["pulled"] >= 1


class _GatedHost:
    """The pre-fetcher's host, holding every read until the gate opens."""

    def __init__(self, host: object, gate: asyncio.Event) -> None:
        self._host = host
        self._gate = gate

    def __getattr__(self, name: str) -> object:
        return getattr(self._host, name)

    async def run(self, op, *, transaction: bool = True):  # type: ignore[no-untyped-def]
        await self._gate.wait()
        return await self._host.run(op, transaction=transaction)  # type: ignore[attr-defined]


@pytest.fixture
async def two_services(database_url: str, tmp_path: Path) -> AsyncIterator[tuple]:  # type: ignore[type-arg]
    from realtime.service import MemoryService

    services = []
    for name in ("one", "two"):
        svc = MemoryService(database_url, spool_dir=tmp_path / name, prefetch_wait_ms=3000,
                            shared_prefetch=True)
        await svc.open(warm_embedder=False)
        services.append(svc)
    yield tuple(services)
    for svc in services:
        await svc.close()


async def test_a_fetch_in_flight_on_another_worker_is_waited_for(two_services, database_url: str
                                                                 ) -> None:  # type: ignore[no-untyped-def]
    one, two = two_services
    seed: ScaleSeed = seed_scale_campaign(database_url)
    gate = asyncio.Event()
    one.prefetcher.host = _GatedHost(one.prefetcher.host, gate)  # worker 1's fetch waits
    await one.partial(seed.session_id, "what does Borga sell", seed.npc_id)
    asyncio.get_running_loop().call_later(0.3, gate.set)
    started = time.monotonic()
    ctx = await two.hot_context(seed.session_id, seed.npc_id)
    waited = time.monotonic() - started
    assert _entity_memories(ctx.as_dict(), "Borga")
    assert waited >= 0.25  # it waited for worker 1's fetch instead of missing it
    assert two.prefetch.stats["fetched"] == 0


async def test_no_sharing_means_the_other_worker_misses_it(database_url: str, tmp_path: Path
                                                           ) -> None:
    """The control: without the shared table worker 2 has nothing (the test above would
    pass by accident otherwise)."""
    from realtime.service import MemoryService

    one = MemoryService(database_url, spool_dir=tmp_path / "a", shared_prefetch=False)
    two = MemoryService(database_url, spool_dir=tmp_path / "b", shared_prefetch=False)
    await one.open(warm_embedder=False)
    await two.open(warm_embedder=False)
    try:
        seed = seed_scale_campaign(database_url)
        await one.partial(seed.session_id, "what does Borga sell", seed.npc_id)
        await one.wait_prefetch(seed.session_id, 5.0)
        assert _entity_memories((await one.hot_context(seed.session_id, seed.npc_id)).as_dict(),
                                "Borga")
        assert not _entity_memories(
            (await two.hot_context(seed.session_id, seed.npc_id)).as_dict(), "Borga")
    finally:
        await one.close()
        await two.close()


class _FailingHost(_GatedHost):
    """The pre-fetcher's host, failing every read once the gate opens."""

    async def run(self, op, *, transaction: bool = True):  # type: ignore[no-untyped-def]
        await self._gate.wait()
        raise RuntimeError("the fetch is gone")


async def _timed_pull(svc, seed: ScaleSeed) -> float:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    await svc.shared_prefetch.pull(seed.campaign_id, seed.session_id)
    return time.monotonic() - started


async def test_a_pull_waits_only_for_young_reservations_of_other_workers(
        two_services, database_url: str) -> None:  # type: ignore[no-untyped-def]
    """The pre-fetch wait is 3 s here: a pull that waits for the wrong row takes all of it."""
    one, two = two_services
    seed: ScaleSeed = seed_scale_campaign(database_url)
    gate = asyncio.Event()
    one.prefetcher.host = _GatedHost(one.prefetcher.host, gate)
    one.prefetch.per_session = 0  # worker 1's cache drops its reservation at once
    await one.partial(seed.session_id, "what does Borga sell", seed.npc_id)
    try:
        # Its own reservation, evicted from its cache: the reader waits for its own fetches,
        # the pull does not.
        assert await _timed_pull(one, seed) < 1.0
        # Another worker's young one is waited for (the control: the wait is real) ...
        two.shared_prefetch.wait_s = 1.0
        assert await _timed_pull(two, seed) >= 0.5
        # ... but not once it is older than the wait.
        assert await _timed_pull(two, seed) < 0.3
    finally:
        gate.set()


async def test_a_failed_fetch_ends_its_reservation(two_services, database_url: str
                                                   ) -> None:  # type: ignore[no-untyped-def]
    one, two = two_services
    seed: ScaleSeed = seed_scale_campaign(database_url)
    gate = asyncio.Event()
    one.prefetcher.host = _FailingHost(one.prefetcher.host, gate)
    await one.partial(seed.session_id, "what does Borga sell", seed.npc_id)
    gate.set()
    await one.wait_prefetch(seed.session_id, 5.0)
    await one.shared_prefetch.settle(seed.session_id)
    assert await _timed_pull(two, seed) < 1.0  # nothing in flight: no 3 s wait
    ctx = await two.hot_context(seed.session_id, seed.npc_id)
    assert not _entity_memories(ctx.as_dict(), "Borga")
