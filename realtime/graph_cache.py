"""What an NPC is and knows, cached between voice turns, dropped the moment the graph changes.

An NPC's identity row and the facts it knows change rarely (a DM edit, a pipeline run); the
transcript changes every turn. So the hot context reads the transcript and scene fresh and
keeps the identity part here. PostgreSQL announces every committed change to entities,
relationships and NPC profiles on the `glyphoxa_graph` channel (migration 014); a listener
connection turns each announcement into an invalidation of that campaign's entries, whichever
process made the change.

Safety rules, in order of importance:
- the cache is off until the listener is connected, and goes off (and empty) the moment the
  listener's connection is lost: without notifications nothing may be served from it;
- an entry read before an invalidation is never stored after it (a generation counter taken
  before the read is checked at store time).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from realtime.notifications import listen

CHANNEL = "glyphoxa_graph"


class GraphCache:
    """Entries keyed by (campaign_id, ...); invalidated per campaign."""

    def __init__(self, max_entries: int = 4096) -> None:
        self.enabled = False
        self.generation = 0
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self.invalidations = 0
        self._entries: OrderedDict[tuple[str, Hashable], Any] = OrderedDict()

    def get(self, campaign_id: str, key: Hashable) -> Any | None:
        if not self.enabled:
            return None
        value = self._entries.get((campaign_id, key))
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end((campaign_id, key))
        return value

    def put(self, campaign_id: str, key: Hashable, value: Any, generation: int) -> bool:
        """Store unless the cache is off or anything was invalidated since `generation` was
        read (the value may predate that change)."""
        if not self.enabled or generation != self.generation:
            return False
        self._entries[(campaign_id, key)] = value
        self._entries.move_to_end((campaign_id, key))
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return True

    def invalidate(self, campaign_id: str) -> None:
        self.generation += 1
        self.invalidations += 1
        for k in [k for k in self._entries if k[0] == campaign_id]:
            del self._entries[k]

    def reset(self, *, enabled: bool) -> None:
        """Empty it and switch it on (listener connected) or off (listener lost)."""
        self.generation += 1
        self._entries.clear()
        self.enabled = enabled

    def stats(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "entries": len(self._entries),
            "hits": self.hits,
            "misses": self.misses,
            "invalidations": self.invalidations,
        }


def parse_payload(payload: str) -> tuple[str, str] | None:
    """'<table>:<campaign_id>' -> (table, campaign_id); None for anything else."""
    table, sep, campaign_id = payload.partition(":")
    if not sep or not table or not campaign_id:
        return None
    return table, campaign_id


async def listen_for_changes(
    url: str,
    on_change: Callable[[str, str], None],
    on_connected: Callable[[bool], None],
    *,
    retry_s: float = 0.5,
) -> None:
    """Forever: report (table, campaign) changes announced on `CHANNEL`, through the
    process's one listener (`realtime.notifications.listen`)."""
    await listen(url, {CHANNEL: graph_handler(on_change)}, on_connected, retry_s=retry_s)


def graph_handler(on_change: Callable[[str, str], None]) -> Callable[[str], None]:
    """A `CHANNEL` payload handler that passes well-formed (table, campaign) pairs on."""

    def handle(payload: str) -> None:
        parsed = parse_payload(payload)
        if parsed is not None:
            on_change(*parsed)

    return handle
