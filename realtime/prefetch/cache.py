"""Pre-fetched results, per session, until the next hot context takes them.

In process, for a hot context without a round trip; `on_put` lets `prefetch.shared` publish
every entry to the other workers, and `merge` takes theirs in.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from realtime.prefetch.triggers import Trigger


@dataclass(slots=True)
class Prefetched:
    """A pre-fetched result for one session, fetched as `viewer` would see it."""

    trigger: Trigger
    viewer: str
    memories: list[Any]  # hot_context.Memory
    fetched_at: float
    turn: int = 0
    elapsed_ms: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


class PrefetchCache:
    """Per-session pre-fetched results, kept for `ttl_s` (about one turn plus the NPC's reply)
    and capped per session."""

    def __init__(self, ttl_s: float = 120.0, per_session: int = 16, sessions: int = 1024) -> None:
        self.ttl_s = ttl_s
        self.per_session = per_session
        self.max_sessions = sessions
        self._items: OrderedDict[str, OrderedDict[tuple[str, str, str], Prefetched]] = (
            OrderedDict()
        )
        self.stats = {"triggers": 0, "fetched": 0, "deduplicated": 0, "served": 0}
        # Told of every entry put here (reservations included): sharing with other workers.
        self.on_put: Callable[[str, Prefetched], None] | None = None

    def _bucket(self, session_id: str) -> OrderedDict[tuple[str, str, str], Prefetched]:
        bucket = self._items.get(session_id)
        if bucket is None:
            bucket = self._items[session_id] = OrderedDict()
            while len(self._items) > self.max_sessions:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(session_id)
        return bucket

    def _prune(self, bucket: OrderedDict[tuple[str, str, str], Prefetched], now: float) -> None:
        for key in [k for k, v in bucket.items() if now - v.fetched_at > self.ttl_s]:
            del bucket[key]

    def fresh(self, session_id: str, trigger: Trigger, viewer: str) -> bool:
        """Already fetched (or being fetched) recently: skip a duplicate fetch."""
        bucket = self._items.get(session_id)
        if not bucket:
            return False
        item = bucket.get((trigger.kind, trigger.key, viewer))
        return item is not None and time.monotonic() - item.fetched_at <= self.ttl_s

    def put(self, session_id: str, item: Prefetched) -> None:
        bucket = self._bucket(session_id)
        self._prune(bucket, time.monotonic())
        key = (item.trigger.kind, item.trigger.key, item.viewer)
        bucket.pop(key, None)
        bucket[key] = item
        while len(bucket) > self.per_session:
            bucket.popitem(last=False)
        self.stats["fetched"] += 1
        if self.on_put is not None:
            self.on_put(session_id, item)

    def has(self, session_id: str, item: Prefetched) -> bool:
        """An entry for the same trigger and viewer is here (fetched or in flight)."""
        bucket = self._items.get(session_id)
        return bool(bucket) and (item.trigger.kind, item.trigger.key, item.viewer) in bucket

    def merge(self, session_id: str, item: Prefetched) -> bool:
        """Take another worker's finished entry unless a finished one is here already; not
        counted as fetched and not published again. True when taken."""
        if time.monotonic() - item.fetched_at > self.ttl_s:
            return False
        key = (item.trigger.kind, item.trigger.key, item.viewer)
        bucket = self._items.get(session_id)
        mine = bucket.get(key) if bucket else None
        if mine is not None and not mine.meta.get("pending"):
            return False
        bucket = self._bucket(session_id)
        bucket[key] = item
        while len(bucket) > self.per_session:
            bucket.popitem(last=False)
        return True

    def get(self, session_id: str, viewer: str) -> list[Prefetched]:
        """Items visible to `viewer`: fetched for it, or public-only ones. Newest first."""
        bucket = self._items.get(session_id)
        if not bucket:
            return []
        self._prune(bucket, time.monotonic())
        items = [v for v in bucket.values() if v.viewer in ("", viewer)]
        if items:
            self.stats["served"] += 1
        return list(reversed(items))

    def clear(self, session_id: str) -> None:
        self._items.pop(session_id, None)
