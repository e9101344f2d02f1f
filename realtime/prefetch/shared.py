"""Pre-fetch results shared through PostgreSQL, so any worker's hot context gets them.

Several workers (`glyphoxa serve --workers N`, or hosts behind a load balancer) must not give
different answers for where a request lands: a partial sent to worker 1 fetches memories the
next hot context needs, and worker 2 may serve it. Each worker keeps its in-process
`PrefetchCache` (the hot context reads it without a round trip); every entry it puts there,
the in-flight reservation included, is also written to the UNLOGGED `realtime_prefetch` table
(migration 023) in the background, and before a hot context the worker pulls the session's
rows it lacks, waiting a moment for fetches another worker still has in flight, as it waits
for its own. The table lives on the primary: standbys cannot read unlogged tables.

The pull waits only for another worker's young reservations: made within the pre-fetch wait
and not done. Its own reservations (even those its cache has evicted) are the reader's to wait
for, and a reservation older than the wait is a fetch the reader would not have waited for
either (or one whose fetch is gone: a failed fetch publishes an empty, finished entry).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import datetime, timedelta
from typing import Any

import orjson
from cachetools import LRUCache
from psycopg.types.json import Jsonb

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all
from realtime.background import Background
from realtime.guarded_db import GuardedDatabase
from realtime.hot_context import Memory
from realtime.prefetch.cache import PrefetchCache, Prefetched
from realtime.prefetch.triggers import Trigger
from realtime.session_campaigns import SessionCampaigns

log = logging.getLogger(__name__)

_PUBLISH = """
WITH gone AS (
    DELETE FROM realtime_prefetch
     WHERE campaign_id = %(c)s AND session_id = %(s)s AND expires_at < clock_timestamp()
)
INSERT INTO realtime_prefetch AS p (campaign_id, session_id, kind, key, viewer, surface,
                                    memories, pending, elapsed_ms, expires_at)
VALUES (%(c)s, %(s)s, %(kind)s, %(key)s, %(viewer)s, %(surface)s, %(memories)s, %(pending)s,
        %(elapsed)s, clock_timestamp() + make_interval(secs => %(ttl)s))
ON CONFLICT (campaign_id, session_id, kind, key_hash, viewer) DO UPDATE
   SET memories = EXCLUDED.memories, pending = EXCLUDED.pending,
       elapsed_ms = EXCLUDED.elapsed_ms, fetched_at = EXCLUDED.fetched_at,
       expires_at = EXCLUDED.expires_at, surface = EXCLUDED.surface
 WHERE p.pending OR NOT EXCLUDED.pending
"""

# The rows changed since `since` (all of them when NULL), and the server's clock: the next
# pull of the session asks only for what changed after it. A session's rows pile up over the
# cache's TTL; taking all of them on every hot context re-merged them into the capped cache.
# `n.now` comes back on a row of its own even when nothing changed (kind NULL).
_PULL = """
SELECT n.now, p.* FROM (SELECT clock_timestamp() AS now) n LEFT JOIN LATERAL (
    SELECT kind, key, viewer, surface, memories, pending, elapsed_ms,
           extract(epoch FROM n.now - fetched_at)::float8 AS age_s
      FROM realtime_prefetch
     WHERE campaign_id = %(c)s AND session_id = %(s)s AND expires_at > n.now
       AND fetched_at > coalesce(%(since)s, '-infinity'::timestamptz)) p ON true
"""

_CLEAR = "DELETE FROM realtime_prefetch WHERE campaign_id = %(c)s AND session_id = %(s)s"
_SWEEP = "DELETE FROM realtime_prefetch WHERE expires_at < clock_timestamp() - interval '1 hour'"


def _memory_json(memory: Any) -> dict[str, Any]:
    return {"kind": memory.kind, "text": memory.text, "score": memory.score,
            "source": memory.source}


def _publish_op(campaign_id: str, session_id: str, item: Prefetched, ttl_s: float) -> Op[int]:
    count = yield execute(_PUBLISH, {
        "c": campaign_id, "s": session_id, "kind": item.trigger.kind, "key": item.trigger.key,
        "viewer": item.viewer, "surface": item.trigger.surface,
        "memories": Jsonb([_memory_json(m) for m in item.memories], dumps=orjson.dumps),
        "pending": bool(item.meta.get("pending")), "elapsed": item.elapsed_ms, "ttl": ttl_s,
    })
    return count


def _pull_op(campaign_id: str, session_id: str, since: datetime | None
             ) -> Op[list[dict[str, Any]]]:
    rows = yield fetch_all(_PULL, {"c": campaign_id, "s": session_id, "since": since})
    return rows


def _clear_op(campaign_id: str, session_id: str) -> Op[int]:
    count = yield execute(_CLEAR, {"c": campaign_id, "s": session_id})
    return count


def _sweep_op() -> Op[int]:
    count = yield execute(_SWEEP, {})
    return count


def row_item(row: dict[str, Any], now: float) -> Prefetched:
    """A pulled row as a cache entry; its age carries over to this process's clock."""
    return Prefetched(
        Trigger(row["kind"], row["key"], row["surface"]),
        row["viewer"],
        [Memory(m["kind"], m["text"], m["score"], m.get("source") or {})
         for m in row["memories"]],
        now - max(0.0, row["age_s"]),
        elapsed_ms=row["elapsed_ms"],
        meta={"pending": True} if row["pending"] else {"shared": True},
    )


class SharedPrefetch:
    """Publishes this worker's pre-fetch entries and pulls the other workers'."""

    def __init__(self, db: GuardedDatabase, cache: PrefetchCache, background: Background,
                 campaigns: SessionCampaigns, *, wait_s: float, poll_s: float = 0.005) -> None:
        self._db = db
        self._cache = cache
        self._background = background
        self._campaigns = campaigns
        self.wait_s = wait_s
        self.poll_s = poll_s
        self.stats = {"published": 0, "pulled": 0, "waited_ms": 0.0, "errors": 0}
        self._publishing: dict[str, set[asyncio.Future[None]]] = {}
        # (kind, key, viewer) of this worker's reservations still in flight, per session.
        self._reserved: dict[str, set[tuple[str, str, str]]] = {}
        # Per session, the server time from which the next pull reads changed rows: the last
        # pull's clock less the publish time limit, so a publish that began before that pull
        # and committed after it is still read.
        self._since: LRUCache[str, datetime] = LRUCache(maxsize=cache.max_sessions)
        cache.on_put = self._published

    def _track(self, session_id: str, item: Prefetched) -> None:
        key = (item.trigger.kind, item.trigger.key, item.viewer)
        if item.meta.get("pending"):
            self._reserved.setdefault(session_id, set()).add(key)
            return
        mine = self._reserved.get(session_id)
        if mine is not None:
            mine.discard(key)
            if not mine:
                del self._reserved[session_id]

    def _published(self, session_id: str, item: Prefetched) -> None:
        self._track(session_id, item)
        campaign_id = self._campaigns.known(session_id)  # pre-fetch ran: it is known
        if campaign_id is None or self._db.degraded:
            return
        task = self._background.spawn(self._publish(campaign_id, session_id, item))
        tasks = self._publishing.setdefault(session_id, set())
        tasks.add(task)

        def done(t: asyncio.Future[None]) -> None:
            tasks.discard(t)
            if not tasks:
                self._publishing.pop(session_id, None)

        task.add_done_callback(done)

    async def settle(self, session_id: str, timeout_s: float = 1.0) -> None:
        """Until what this worker reserved for the session is visible to the others: a
        partial's answer then means any worker's next hot context waits for its fetches."""
        tasks = list(self._publishing.get(session_id, ()))
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    async def _publish(self, campaign_id: str, session_id: str, item: Prefetched) -> None:
        # On the pool itself, not through the breaker: a slow or failed share must neither
        # hurt the turn nor switch the service to degraded mode.
        try:
            async with asyncio.timeout(self._db.timeout_s):
                await self._db.db.run(
                    _publish_op(campaign_id, session_id, item, self._cache.ttl_s),
                    transaction=False)
            self.stats["published"] += 1
        except Exception:  # noqa: BLE001 - sharing a guess must never hurt the turn
            self.stats["errors"] += 1
            log.debug("pre-fetch publish failed", exc_info=True)

    def _awaited(self, session_id: str, row: dict[str, Any], item: Prefetched) -> bool:
        """A pending row worth waiting for: another worker's, reserved within the wait, and
        not here yet."""
        if row["age_s"] > self.wait_s:
            return False
        key = (item.trigger.kind, item.trigger.key, item.viewer)
        return key not in self._reserved.get(session_id, ()) and not self._cache.has(
            session_id, item)

    async def pull(self, campaign_id: str, session_id: str) -> int:
        """Take the session's entries other workers fetched; wait up to `wait_s` for young
        ones they still have in flight. How many entries were taken."""
        start = time.monotonic()
        taken = 0
        lag = timedelta(seconds=self._db.timeout_s)
        while True:
            try:
                rows = await self._db.run(
                    _pull_op(campaign_id, session_id, self._since.get(session_id)),
                    transaction=False)
            except DatabaseUnavailableError:
                return taken
            now = time.monotonic()
            waiting = False
            if rows:
                self._since[session_id] = rows[0]["now"] - lag
            for row in rows:
                if row["kind"] is None:
                    continue
                item = row_item(row, now)
                if row["pending"]:
                    waiting = waiting or self._awaited(session_id, row, item)
                elif self._cache.merge(session_id, item):
                    taken += 1
            if not waiting or now - start >= self.wait_s:
                break
            await asyncio.sleep(self.poll_s)
        self.stats["pulled"] += taken
        self.stats["waited_ms"] += round((time.monotonic() - start) * 1000, 3)
        return taken

    async def clear(self, campaign_id: str, session_id: str) -> None:
        self._reserved.pop(session_id, None)
        self._since.pop(session_id, None)
        with contextlib.suppress(DatabaseUnavailableError):  # else they expire on their own
            await self._db.run(_clear_op(campaign_id, session_id), transaction=False)

    async def sweep(self) -> int:
        """Rows of sessions nobody pulls again (expired over an hour ago); housekeeping, so
        off the breaker and quiet on failure."""
        try:
            return await self._db.db.run(_sweep_op(), transaction=False)
        except Exception:  # noqa: BLE001 - the next start sweeps again
            log.debug("pre-fetch sweep failed", exc_info=True)
            return 0
