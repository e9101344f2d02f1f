"""The start-up heap is collected, then frozen: dead cycles go, the living are set aside."""

from __future__ import annotations

import gc
import weakref

from realtime import heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_settle_collects_the_dead_and_freezes_the_living() -> None:
    dead = _Node()
    gone = weakref.ref(dead)
    del dead
    alive = _Node()
    try:
        frozen = heap.settle()
        assert gone() is None  # collected before the freeze, not kept forever
        assert frozen > 0 and gc.get_freeze_count() > 0  # (frozen objects may still die)
        # a collection now walks only what was allocated since
        assert not any(o is alive for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is alive for o in gc.get_objects())


async def test_the_service_settles_once_warm(rt_service) -> None:  # type: ignore[no-untyped-def]
    try:
        await rt_service.warm_up()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
