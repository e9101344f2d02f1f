"""The NPC's hot context on every turn: identity (cached between turns), scene and recent
transcript (read fresh, one statement), plus what pre-fetch brought.

While PostgreSQL is away it serves the last good context of the NPC with the utterances
written since that it heard by the last scene it read, marked degraded: an NPC that still remembers
the scene beats one that falls silent. The recent transcript is the lines the NPC heard
(`visibility.dialogue_visible`, composed by the hot read), pre-fetched passages likewise.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from cachetools import LRUCache

from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError
from glyphoxa_pipelines.memory.hot_read import hot_row_statement
from realtime.errors import DEGRADED
from realtime.graph_cache import GraphCache
from realtime.guarded_db import GuardedDatabase
from realtime.hot_context import HotContext, Memory, assemble, fit_budget
from realtime.prefetch.prefetcher import Prefetcher
from realtime.recent_utterances import RecentUtterances, heard_offline
from realtime.session_campaigns import SessionCampaigns
from realtime.viewers import bound_npc, check_npc

# Last good contexts kept for degraded mode: one per (session, NPC) in play, bounded.
LAST_GOOD = 4096


def _dedupe(memories: list[Memory]) -> list[Memory]:
    seen: set[tuple[str, str]] = set()
    out = []
    for m in memories:
        key = (m.kind, m.text)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


class HotContextReader:
    def __init__(
        self,
        db: GuardedDatabase,
        graph_cache: GraphCache,
        campaigns: SessionCampaigns,
        prefetcher: Prefetcher,
        recent: RecentUtterances,
        *,
        token_budget: int,
        recent_window_s: float,
    ) -> None:
        self._db = db
        self._graph_cache = graph_cache
        self._campaigns = campaigns
        self._prefetcher = prefetcher
        self._recent = recent
        self.token_budget = token_budget
        self.recent_window_s = recent_window_s
        # With the scene as stored (ids; the context shows names): who heard the lines
        # written while degraded is judged by it.
        self._last_good: OrderedDict[tuple[str, str], tuple[HotContext, dict[str, Any]]] = (
            OrderedDict())
        # Turn counts decide "first turn" framing; bounded like the other per-session state.
        self._turns: LRUCache[tuple[str, str], int] = LRUCache(maxsize=10_000)

    async def read(
        self, session_id: str, npc_id: str, *, budget: int | None = None, fact_limit: int = 30,
        count_turn: bool = True,
    ) -> HotContext:
        """Identity + scene + recent transcript + pre-fetched memories, in one statement.
        The identity part (NPC row, profile, known facts) comes from the graph cache while no
        change to the campaign's graph has been announced. The viewer rule is
        `realtime.viewers`'s, checked on the identity row the read brings anyway: a hot
        context is an NPC's, so no NPC bound is refused too."""
        if bound_npc(npc_id) is None:
            raise InvalidInputError("a hot context is an NPC's: no NPC is bound")
        budget = budget or self.token_budget
        if self._prefetcher.pending(session_id):
            await self._prefetcher.wait(session_id)
        key = (session_id, npc_id)
        known_campaign = self._campaigns.known(session_id)
        identity = (
            self._graph_cache.get(known_campaign, (npc_id, fact_limit)) if known_campaign else None
        )
        generation = self._graph_cache.generation
        query, params = hot_row_statement(
            session_id, npc_id, recent_limit=self._recent.limit, fact_limit=fact_limit,
            window_s=self.recent_window_s, with_identity=identity is None,
        )
        try:
            row = await self._db.fetch_row(query, params)
        except DatabaseUnavailableError:
            return self._degraded(key, budget)
        if row is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        campaign_id = row["campaign_id"]
        if identity is None:
            npc, facts = row["npc"], row["facts"]
            check_npc(campaign_id, npc_id, npc["type"] if npc else None)
            self._graph_cache.put(campaign_id, (npc_id, fact_limit), (npc, facts), generation)
        else:
            npc, facts = identity
        self._campaigns.remember(session_id, campaign_id)
        ctx = assemble(
            campaign_id=campaign_id,
            session_id=session_id,
            npc=npc,
            facts=facts,
            scene=row["scene"] or {},
            scene_entities=row["scene_entities"],
            recent=row["recent"],
            memories=_dedupe(self._prefetcher.memories(session_id, npc_id)),
            budget=budget,
            assembled_at=datetime.now(UTC).isoformat(),
        )
        if count_turn:  # a DM's preview (the dashboard) is not one of the NPC's turns
            self._turns[key] = self._turns.get(key, 0) + 1
        self._last_good[key] = (ctx, row["scene"] or {})
        self._last_good.move_to_end(key)
        while len(self._last_good) > LAST_GOOD:
            self._last_good.popitem(last=False)
        return ctx

    def _degraded(self, key: tuple[str, str], budget: int) -> HotContext:
        cached, scene = self._last_good.get(key) or (None, {})
        if cached is None:
            raise DatabaseUnavailableError(
                f"{DEGRADED}, and no context for NPC {key[1]!r} in session {key[0]!r} is "
                "cached yet"
            )
        ctx = copy.deepcopy(cached)
        seen = {r.get("entry_id") for r in ctx.recent}
        last = ctx.recent[-1]["spoken_at"] if ctx.recent else None
        for r in self._recent.of(key[0]):
            if not heard_offline(r, key[1], scene):
                continue
            when = r["spoken_at"].isoformat() if r["spoken_at"] else None
            if last is not None and when is not None and when <= last:
                continue
            if r.get("idempotency_key") in seen:
                continue
            ctx.recent.append(
                {
                    "speaker": r["speaker_name"] or r["speaker_id"] or "Unknown",
                    "role": r["speaker_role"],
                    "text": r["text"],
                    "spoken_at": when,
                    "entry_id": None,
                }
            )
        ctx.degraded = True
        return fit_budget(ctx, budget)

    def turn_count(self, session_id: str, npc_id: str) -> int:
        return self._turns.get((session_id, npc_id), 0)

    def count_turn(self, session_id: str, npc_id: str) -> None:
        """A turn answered with a context read ahead of it (`count_turn=False` then)."""
        key = (session_id, npc_id)
        self._turns[key] = self._turns.get(key, 0) + 1
