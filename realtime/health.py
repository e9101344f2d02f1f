"""The service's health report (`/healthz`): is the database reachable, is the service
degraded and for how long, whether the read replica serves (and why not), what waits in the
spool, and the per-process figures an operator reads first (pre-fetch, full-text leg
timeouts, graph cache, tool latencies)."""

from __future__ import annotations

from typing import Any

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.db.operations import Op, fetch_one
from realtime.graph_cache import GraphCache
from realtime.guarded_db import GuardedDatabase
from realtime.prefetch import PrefetchCache
from realtime.prefetch.shared import SharedPrefetch
from realtime.read_replica import ReplicaReads
from realtime.session_search import SearchCounters
from realtime.tools.tiers import LatencyTracker


def _select_one() -> Op:
    row = yield fetch_one("SELECT 1 AS ok")
    return row


async def health_report(
    db: GuardedDatabase,
    *,
    replica: ReplicaReads | None = None,
    prefetch: PrefetchCache,
    shared_prefetch: SharedPrefetch | None = None,
    search: SearchCounters,
    graph_cache: GraphCache,
    latencies: LatencyTracker,
) -> dict[str, Any]:
    reachable = not db.degraded
    if reachable:
        try:
            await db.run(_select_one())
        except DatabaseUnavailableError:
            reachable = False
    return {
        "status": "ok" if reachable and not db.spool.depth else "degraded",
        "database": reachable,
        "degraded": db.degraded,
        "degraded_for_s": round(db.degraded_for_s(), 3),
        "last_error": db.last_error if db.degraded else None,
        # Where hot-context and tool reads go: the standby, or the primary and why.
        "replica": replica.health() if replica is not None else {"configured": False},
        "spool_depth": db.spool.depth,
        "spool_replayed": db.spool.replayed,
        "spool_dead_letters": db.spool.dead_count,
        "prefetch": dict(prefetch.stats),
        "prefetch_shared": dict(shared_prefetch.stats) if shared_prefetch is not None else None,
        "fulltext_timeouts": search.fulltext_timeouts,
        "fulltext_late": search.fulltext_late,
        "graph_cache": graph_cache.stats(),
        "tool_latency_ms": latencies.snapshot(),
    }
