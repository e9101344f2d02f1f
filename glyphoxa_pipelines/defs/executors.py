"""Which executor runs what.

The sensor and schedule jobs (`defs/jobs.py`) run in process: a session's chain is linear, and
one process keeps the embedding model and the database pool loaded across its steps. Every
other run, a backfill above all (the daemon launches one run per session partition through the
asset job, which takes the code location's default executor), runs its steps in child
processes: a step that dies (the model out of memory, a native crash) fails that step and is
retried, not the whole run worker, and `max_concurrent` bounds how many steps of one run load
a model at once. Parallelism across partitions comes from the run queue (`dagster.yaml`: at
most N runs, backfills capped below that so live-session runs still start).
"""

from __future__ import annotations

import os

from dagster import ExecutorDefinition, multiprocess_executor

BACKFILL_PROCESSES_ENV = "GLYPHOXA_BACKFILL_PROCESSES"


def backfill_processes() -> int:
    raw = os.environ.get(BACKFILL_PROCESSES_ENV, "2")
    try:
        value = int(raw)
    except ValueError as exc:
        raise ValueError(f"{BACKFILL_PROCESSES_ENV}={raw!r} is not a whole number") from exc
    if value < 1:
        raise ValueError(f"{BACKFILL_PROCESSES_ENV}={raw!r}: at least one process is needed")
    return value


def backfill_executor() -> ExecutorDefinition:
    """The code location's default executor: multiprocess, `GLYPHOXA_BACKFILL_PROCESSES`
    steps at once (2 by default)."""
    return multiprocess_executor.configured({"max_concurrent": backfill_processes()},
                                            name="backfill_multiprocess")
