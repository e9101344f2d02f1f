"""Speculative pre-fetch: read the partial transcript before the utterance ends, guess what
cold memory the NPC will need, fetch it in the background, and hand it to the next hot context.

Fetching runs as a task and never delays the caller; a burst of partials that fire the same
trigger fetches once; a failed guess never hurts the turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from glyphoxa_pipelines.correction import correct
from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import Entity
from glyphoxa_pipelines.memory.visibility import viewer
from realtime import fact_search as fs
from realtime.background import Background
from realtime.hot_context import Memory
from realtime.name_cache import Names
from realtime.prefetch.cache import PrefetchCache, Prefetched
from realtime.prefetch.triggers import Trigger, detect
from realtime.session_search import (
    PREFETCH_SEARCH,
    SearchConfig,
    SearchCounters,
    SearchHost,
    search_sessions,
)
from realtime.tools.args import SearchSessionsArgs

log = logging.getLogger(__name__)


def entity_memory(entity: Entity, facts: list[Any]) -> Memory:
    """An entity and its first facts as one hot-context memory."""
    desc = str(entity.attributes.get("description", "")).strip()
    text = f"{entity.name} ({entity.type})" + (f": {desc}" if desc else "")
    if facts:
        text += ". " + "; ".join(f.sentence() for f in facts[:5])
    return Memory("entity", text, 1.0, {"entity_id": entity.id, "session_id": entity.session_id})


class Prefetcher:
    def __init__(
        self,
        host: SearchHost,
        background: Background,
        cache: PrefetchCache,
        counters: SearchCounters,
        *,
        wait_s: float,
        config: SearchConfig = PREFETCH_SEARCH,
    ) -> None:
        self.host = host
        self.background = background
        self.cache = cache
        self.counters = counters
        self.wait_s = wait_s
        self.config = config
        self._inflight: dict[str, set[asyncio.Future[Any]]] = {}

    def detect_triggers(self, text: str, names: Names, *, corrected: bool = False) -> list[Trigger]:
        """Correct names first (a misheard name must still fire), then match."""
        if not corrected:
            text = correct(text, names.index).text
        return detect(text, names.finder)

    def schedule(
        self,
        campaign_id: str,
        session_id: str,
        text: str,
        npc_id: str | None,
        names: Names,
        *,
        corrected: bool = False,
    ) -> list[dict[str, Any]]:
        """Fire what `text` triggers, as `npc_id` may see it; what fired, and whether each was
        fetched or already fresh."""
        triggers = self.detect_triggers(text, names, corrected=corrected)
        view = viewer(npc_id)
        out = []
        for trig in triggers:
            self.cache.stats["triggers"] += 1
            fresh = self.cache.fresh(session_id, trig, view)
            out.append({"kind": trig.kind, "key": trig.key, "surface": trig.surface,
                        "scheduled": not fresh})
            if fresh:
                self.cache.stats["deduplicated"] += 1
                continue
            # Reserve the slot now so a burst of partials fetches once.
            self.cache.put(
                session_id, Prefetched(trig, view, [], time.monotonic(), meta={"pending": True})
            )
            task = self.background.spawn(self._fetch(campaign_id, session_id, trig, view))
            bucket = self._inflight.setdefault(session_id, set())
            bucket.add(task)
            task.add_done_callback(bucket.discard)
        return out

    async def _fetch(self, campaign_id: str, session_id: str, trig: Trigger, view: str) -> None:
        start = time.perf_counter()
        try:
            if trig.kind == "entity":
                got = await self.host.run(fs.entity_context_op(campaign_id, trig.key, view))
                memories = [] if got is None else [entity_memory(*got)]
            else:
                args = SearchSessionsArgs(query=trig.key, top_k=self.config.top_k,
                                          max_tokens=self.config.max_tokens)
                # `view` "" (no NPC bound) recalls everything, like any unscoped caller;
                # its memories are cached under "" and never served to an NPC.
                found = await search_sessions(self.host, args, campaign_id, self.config,
                                              listener=view or None)
                self.counters.count(found.text_leg)
                memories = [  # below entities (1.0), best passage first
                    Memory("chunk", r["text"], 0.5 + 0.1 / (1 + k), r["source"])
                    for k, r in enumerate(found.results)
                ]
        except DatabaseUnavailableError:
            memories = []  # the reservation ends empty, so no worker waits for it
        except Exception:  # noqa: BLE001 - a failed guess must never hurt the turn
            log.exception("pre-fetch %s failed", trig)
            memories = []
        self.cache.put(
            session_id,
            Prefetched(trig, view, memories, time.monotonic(),
                       elapsed_ms=(time.perf_counter() - start) * 1000),
        )

    def pending(self, session_id: str) -> bool:
        return bool(self._inflight.get(session_id))

    async def wait(self, session_id: str, timeout_s: float | None = None) -> None:
        """Let this session's fetches in flight land, for at most the wait (a hot context
        would rather use them than miss them by a few milliseconds)."""
        tasks = list(self._inflight.get(session_id, ()))
        if tasks:
            await asyncio.wait(tasks, timeout=self.wait_s if timeout_s is None else timeout_s)

    def memories(self, session_id: str, npc_id: str) -> list[Memory]:
        """What was pre-fetched for this session as `npc_id` may see it, newest first."""
        return [m for item in self.cache.get(session_id, viewer(npc_id))
                for m in item.memories]
