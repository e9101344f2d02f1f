"""Where the memory step's time goes, stage by stage: the service's parts (correction, the
insert's round trip, the hot row's statement, the pre-fetch wait, assembling the context)
wrapped for the run so each call is timed, and credited to the step (write / read) of the
task that made it. Calls from other tasks (pre-fetch searches a write started) are not the
step's and are not counted."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.voice_bench.scoring import pct

# (variant, step, the task timing it)
_STEP: contextvars.ContextVar[tuple[str, str, object] | None] = contextvars.ContextVar(
    "bench_memory_step", default=None)


class StageClock:
    def __init__(self) -> None:
        self.times: dict[tuple[str, str], list[float]] = defaultdict(list)
        self._undo: list[tuple[object, str, object]] = []

    def _credit(self, stage: str, ms: float) -> None:
        step = _STEP.get()
        if step is not None and step[2] is asyncio.current_task():
            self.times[(step[0], f"{step[1]}: {stage}")].append(ms)

    def wrap(self, owner: object, attr: str, stage: str) -> None:
        """Time `owner.attr` (a function or coroutine function) as `stage` while installed."""
        original = getattr(owner, attr)
        if asyncio.iscoroutinefunction(original):
            @functools.wraps(original)
            async def timed(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self._credit(stage, (time.perf_counter() - t) * 1000)
        else:
            @functools.wraps(original)
            def timed(*args: Any, **kwargs: Any) -> Any:
                t = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self._credit(stage, (time.perf_counter() - t) * 1000)
        self._undo.append((owner, attr, original))
        setattr(owner, attr, timed)

    def restore(self) -> None:
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)
        self._undo.clear()

    @contextmanager
    def step(self, variant: str, step: str) -> Iterator[None]:
        """Credit the current task's wrapped calls to (variant, step)."""
        token = _STEP.set((variant, step, asyncio.current_task()))
        try:
            yield
        finally:
            _STEP.reset(token)

    def report(self) -> dict[str, dict[str, dict[str, float | int | None]]]:
        out: dict[str, dict[str, dict[str, float | int | None]]] = defaultdict(dict)
        for (variant, stage), v in sorted(self.times.items()):
            out[variant][stage] = {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "n": len(v)}
        return dict(out)


def instrument(svc: Any) -> StageClock:
    """The memory step's stages on a live `MemoryService`."""
    import realtime.hot_context_reader as reader_module
    import realtime.transcript_writer as writer_module

    clock = StageClock()
    clock.wrap(writer_module, "correct", "correction")
    clock.wrap(svc.guard, "run", "insert round trip")
    clock.wrap(svc.guard, "fetch_row", "hot row statement")
    clock.wrap(svc.prefetcher, "wait", "pre-fetch wait")
    clock.wrap(reader_module, "assemble", "assemble")
    clock.wrap(svc, "prepare_entries", "prepare (all)")
    clock.wrap(svc, "store_entries", "store (all)")
    return clock
