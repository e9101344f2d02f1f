"""The realtime memory service's composition root, shared by the HTTP API and the MCP server.

`MemoryService` builds the parts (each in a module named for its concern), opens and closes
them, and is the one face callers use: routers, MCP and the CLI call its public methods, which
delegate. Nothing here assumes it is the only replica: caches are refreshed from the tables
or dropped on PostgreSQL's notifications, and with a read URL the hot context and the tools
read a standby under read-your-writes (`realtime.read_replica`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import DatabaseUnavailableError
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    GraphRAGQuerier,
    KnowledgeGraph,
    NotFoundError,
    NpcProfile,
    RecapStore,
    Relationship,
    SemanticIndex,
    SessionStore,
    SummaryStore,
)
from glyphoxa_pipelines.memory.presence import (
    PresenceEdit,
    PresenceSpan,
    edit_presence_op,
    presence_op,
)
from realtime import heap
from realtime.background import Background
from realtime.campaign_models import CampaignModels
from realtime.dm_edits import DmEdits
from realtime.graph_cache import CHANNEL as GRAPH_CHANNEL
from realtime.graph_cache import GraphCache, graph_handler
from realtime.guarded_db import GuardedDatabase
from realtime.health import health_report
from realtime.hot_context import HotContext
from realtime.hot_context_reader import HotContextReader
from realtime.name_cache import NameCache, Names
from realtime.notifications import listen
from realtime.prefetch import PrefetchCache
from realtime.prefetch.prefetcher import Prefetcher
from realtime.prefetch.shared import SharedPrefetch
from realtime.query_embedding import QueryEmbedder, QueryEmbedders
from realtime.read_replica import SESSION_LSN_CHANNEL, ReplicaReads, reading_for
from realtime.recent_utterances import RecentUtterances
from realtime.session_campaigns import SessionCampaigns
from realtime.session_search import SESSION_SEARCH, SearchConfig, SearchCounters
from realtime.spool import Spool
from realtime.tools.context import ToolContext
from realtime.tools.dispatch import call_tool
from realtime.tools.scope import ToolScope
from realtime.tools.tiers import LatencyTracker
from realtime.transcript_writer import PreparedWrite, TranscriptWriter
from realtime.viewers import Viewers

T = TypeVar("T")


class MemoryService:
    def __init__(
        self,
        url: str,
        *,
        settings: Settings | None = None,
        spool_dir: Path | None = None,
        embedder: Any | None = None,
        token_budget: int = 1200,
        recent_window_s: float = 300.0,
        recent_limit: int = 60,
        prefetch_wait_ms: float = 25.0,
        names_refresh_s: float = 5.0,
        db_timeout_s: float = 3.0,
        probe_interval_s: float = 0.5,
        pool_min: int = 2,
        pool_max: int = 16,
        search: SearchConfig = SESSION_SEARCH,
        graph_cache: bool = True,
        read_url: str | None = None,
        replica_max_lag_s: float = 1.0,
        shared_prefetch: bool | None = None,
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.url = url
        self.spool = Spool(spool_dir or self.settings.spool_dir)
        self.guard = GuardedDatabase(url, self.spool, timeout_s=db_timeout_s,
                                     probe_interval_s=probe_interval_s, pool_min=pool_min,
                                     pool_max=pool_max)
        self.db = self.guard.db
        read_url = read_url or self.settings.read_database_url
        self.replica = (
            ReplicaReads(read_url, self.db, max_lag_s=replica_max_lag_s, timeout_s=db_timeout_s,
                         pool_max=pool_max)
            if read_url else None
        )
        if self.replica is not None:
            self.guard.after_replay = self.replica.barrier
        # The hot context and the tools read through this face (the standby where allowed);
        # writes and lookups that must see the newest row use `self.guard`.
        reads = self.guard.reads_on(self.replica)
        self.campaigns = CampaignStore(self.db)
        self.sessions = SessionStore(self.db)
        self.index = SemanticIndex(self.db)
        self.graph = KnowledgeGraph(self.db)
        self.embedder = QueryEmbedder(embedder)
        self.campaign_models = CampaignModels(reads, QueryEmbedders(self.embedder))
        self.search_counters = SearchCounters()
        self.tools = ToolContext(reads, self.index, self.graph, GraphRAGQuerier(self.db),
                                 SummaryStore(self.db), self.sessions, self.embedder, search,
                                 self.search_counters, RecapStore(self.db),
                                 self.campaign_models)
        self.latencies = LatencyTracker()
        self.background = Background()
        self.graph_cache = GraphCache()
        self.graph_cache_enabled = graph_cache
        self.session_campaigns = SessionCampaigns(self.guard, self.sessions)
        self.viewers = Viewers(self.guard, self.graph_cache)
        self.name_cache = NameCache(self.guard, self.background, names_refresh_s)
        self.prefetch = PrefetchCache()
        self.prefetcher = Prefetcher(self.tools, self.background, self.prefetch,
                                     self.search_counters, wait_s=prefetch_wait_ms / 1000)
        shared = self.settings.shared_prefetch if shared_prefetch is None else shared_prefetch
        self.shared_prefetch = (
            SharedPrefetch(self.guard, self.prefetch, self.background, self.session_campaigns,
                           wait_s=prefetch_wait_ms / 1000)
            if shared else None
        )
        recent = RecentUtterances(recent_limit)
        self.writer = TranscriptWriter(self.guard, self.spool, self.session_campaigns,
                                       self.name_cache, recent, self.prefetcher)
        self.reader = HotContextReader(reads, self.graph_cache, self.session_campaigns,
                                       self.prefetcher, recent, token_budget=token_budget,
                                       recent_window_s=recent_window_s)
        self.dm = DmEdits(self.guard, self.graph, self.graph_cache, self.name_cache)
        self._loops: list[asyncio.Task[None]] = []

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self, *, warm_embedder: bool = True) -> MemoryService:
        await self.guard.open()
        self._loops.append(asyncio.create_task(self.guard.monitor()))
        # Always: the campaigns' active embedding models are announced on it too.
        handlers = {GRAPH_CHANNEL: graph_handler(self._graph_changed)}
        if self.replica is not None:
            await self.replica.open()
            self._loops.append(asyncio.create_task(self.replica.watch()))
            handlers[SESSION_LSN_CHANNEL] = self.replica.session_announced
        self._loops.append(asyncio.create_task(
            listen(self.url, handlers, self._listener_state)
        ))
        if warm_embedder:
            self.background.spawn(self.warm_up())
        if self.shared_prefetch is not None and not self.degraded:
            self.background.spawn(self.shared_prefetch.sweep())
        return self

    async def warm_up(self) -> None:
        """Load the query model, then set the start-up heap aside from the collector
        (`heap.settle`): the first search pays neither."""
        await asyncio.to_thread(self.embedder.embed_sync, "warm up")
        heap.settle()

    async def close(self) -> None:
        for task in self._loops:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.background.cancel_all()
        if self.replica is not None:
            await self.replica.close()
        await self.guard.close()
        self.spool.close()

    def _graph_changed(self, table: str, campaign_id: str) -> None:
        """A committed change to a campaign's graph (any process): drop its cached identities;
        an entity change also rebuilds the name index in the background; a campaign's (its
        active embedding model) drops the model it is searched under."""
        if table == "campaigns":
            self.campaign_models.invalidate(campaign_id)
            return
        self.graph_cache.invalidate(campaign_id)
        if self.replica is not None:
            self.replica.barrier()
        if table == "entities":
            self.name_cache.announce(campaign_id)

    def _listener_state(self, connected: bool) -> None:
        self.graph_cache.reset(enabled=connected and self.graph_cache_enabled)
        self.campaign_models.reset(enabled=connected)
        if self.replica is not None:
            self.replica.listener_state(connected)

    async def _wrote(self, session_id: str) -> None:
        """Read-your-writes: the session's reads wait for the standby to pass this write."""
        if self.replica is not None:
            await self.replica.wrote(session_id)

    def _edited(self, result: T) -> T:
        """A DM edit committed here: later reads must see it before its notification lands."""
        if self.replica is not None:
            self.replica.barrier()
        return result

    # -- the guarded database -------------------------------------------------------------
    @property
    def degraded(self) -> bool:
        return self.guard.degraded

    async def run(self, op: Op, *, transaction: bool = True) -> Any:
        return await self.guard.run(op, transaction=transaction)

    async def replay_spool(self) -> int:
        return await self.guard.replay_spool()

    # -- campaigns and sessions -----------------------------------------------------------
    async def upsert_campaign(self, campaign: Campaign) -> Campaign:
        return await self.run(CampaignStore.upsert.op(self.campaigns, campaign))

    async def campaign_of(self, session_id: str) -> str:
        return await self.session_campaigns.campaign_of(session_id)

    async def start_session(
        self, campaign_id: str, session_id: str | None = None, *, title: str = "",
        started_at: datetime | None = None, scene: dict[str, Any] | None = None,
    ) -> Any:
        session = await self.run(SessionStore.start_session.op(
            self.sessions, campaign_id, session_id, title=title, started_at=started_at))
        if scene is not None:
            session = await self.run(SessionStore.set_scene.op(self.sessions, session.id, scene))
        self.session_campaigns.remember(session.id, session.campaign_id)
        await self._wrote(session.id)
        return session

    async def end_session(self, session_id: str) -> Any:
        session = await self.run(SessionStore.end_session.op(self.sessions, session_id))
        self.prefetch.clear(session_id)
        if self.shared_prefetch is not None:
            await self.shared_prefetch.clear(session.campaign_id, session_id)
        return session

    async def set_scene(self, session_id: str, scene: dict[str, Any]) -> Any:
        session = await self.run(SessionStore.set_scene.op(self.sessions, session_id, scene))
        await self._wrote(session_id)
        return session

    # -- who heard what (NPC-scoped recall) -----------------------------------------------
    async def presence(self, session_id: str) -> list[PresenceSpan]:
        return await self.run(presence_op(session_id), transaction=False)

    async def edit_presence(self, session_id: str, edit: PresenceEdit) -> dict[str, Any]:
        """A DM's presence edit; this session's pre-fetched passages are dropped so the next
        hot context searches again (other sessions' expire within the cache's TTL)."""
        result = await self.run(edit_presence_op(session_id, edit))
        self.prefetch.clear(session_id)
        return result

    # -- live transcript, pre-fetch, hot context ------------------------------------------
    async def names(self, campaign_id: str) -> Names | None:
        return await self.name_cache.get(campaign_id)

    async def write_entries(self, session_id: str, items: Sequence[Any]) -> dict[str, Any]:
        return await self.store_entries(await self.prepare_entries(session_id, items))

    async def prepare_entries(self, session_id: str, items: Sequence[Any]) -> PreparedWrite:
        """The write's inline half: names corrected in the session's scene, entries
        validated. The voice loop answers with this and stores it off the turn's path."""
        with reading_for(session_id):
            return await self.writer.prepare(session_id, items)

    async def store_entries(self, prepared: PreparedWrite) -> dict[str, Any]:
        """The write's second half: the L1 insert (or the spool) and pre-fetch."""
        session_id = prepared.session_id
        with reading_for(session_id):
            result = await self.writer.store(prepared)
        if result["written"]:
            await self._wrote(session_id)
        if self.shared_prefetch is not None and result["prefetch"]:
            await self.shared_prefetch.settle(session_id)
        return result

    async def partial(self, session_id: str, text: str, npc_id: str | None = None
                      ) -> dict[str, Any]:
        campaign_id = await self.campaign_of(session_id)
        names = await self.names(campaign_id)
        if names is None:
            return {"session_id": session_id, "triggers": [], "degraded": True}
        try:
            npc_id = await self.viewers.resolve(campaign_id, npc_id)
        except DatabaseUnavailableError:
            return {"session_id": session_id, "triggers": [], "degraded": True}
        with reading_for(session_id):  # the fetches it spawns read as the session's
            triggers = self.prefetcher.schedule(campaign_id, session_id, text, npc_id, names)
        if self.shared_prefetch is not None:
            await self.shared_prefetch.settle(session_id)
        return {"session_id": session_id, "triggers": triggers, "degraded": self.degraded}

    async def wait_prefetch(self, session_id: str, timeout_s: float | None = None) -> None:
        await self.prefetcher.wait(session_id, timeout_s)

    async def hot_context(self, session_id: str, npc_id: str, *, budget: int | None = None,
                          fact_limit: int = 30, count_turn: bool = True) -> HotContext:
        if self.shared_prefetch is not None:
            await self._pull_prefetched(session_id)
        with reading_for(session_id):
            return await self.reader.read(session_id, npc_id, budget=budget,
                                          fact_limit=fact_limit, count_turn=count_turn)

    async def _pull_prefetched(self, session_id: str) -> None:
        """What other workers pre-fetched for this session (the reader reports an unknown
        session or an outage itself)."""
        assert self.shared_prefetch is not None
        try:
            campaign_id = await self.campaign_of(session_id)
        except (NotFoundError, DatabaseUnavailableError):
            return
        await self.shared_prefetch.pull(campaign_id, session_id)

    def turn_count(self, session_id: str, npc_id: str) -> int:
        return self.reader.turn_count(session_id, npc_id)

    def count_turn(self, session_id: str, npc_id: str) -> None:
        self.reader.count_turn(session_id, npc_id)

    # -- memory tools ---------------------------------------------------------------------
    async def viewer(self, campaign_id: str, npc_id: str | None) -> str | None:
        """The NPC a read sees as (None: public only); unknown ids and non-NPCs raise."""
        return await self.viewers.resolve(campaign_id, npc_id)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, scope: ToolScope
                        ) -> dict[str, Any]:
        with reading_for(scope.session_id):
            return await call_tool(self.tools, name, arguments, scope,
                                   campaign_of=self.campaign_of,
                                   viewer_of=self.viewers.resolve, latencies=self.latencies)

    # -- DM edits (effective in the next hot context) ------------------------------------
    async def edit(self, campaign_id: str, op: Op[T], *, names: bool = False) -> T:
        """A DM edit composed of several store operations, as one transaction."""
        return self._edited(await self.dm.edit(campaign_id, op, names=names))

    async def add_entity(self, entity: Entity) -> Entity:
        return self._edited(await self.dm.add_entity(entity))

    async def update_entity(self, campaign_id: str, entity_id: str, **changes: Any) -> Entity:
        return self._edited(await self.dm.update_entity(campaign_id, entity_id, **changes))

    async def delete_entity(self, campaign_id: str, entity_id: str) -> bool:
        return self._edited(await self.dm.delete_entity(campaign_id, entity_id))

    async def upsert_profile(self, profile: NpcProfile) -> NpcProfile:
        return self._edited(await self.dm.upsert_profile(profile))

    async def resolve_id(self, campaign_id: str, name_or_id: str) -> str:
        return await self.dm.resolve_id(campaign_id, name_or_id)

    async def add_fact(self, rel: Relationship) -> Relationship:
        return self._edited(await self.dm.add_fact(rel))

    async def set_fact_status(self, campaign_id: str, fact_id: int, status: str,
                              dm_confirmed: bool | None) -> Relationship:
        return self._edited(
            await self.dm.set_fact_status(campaign_id, fact_id, status, dm_confirmed))

    async def retcon(self, campaign_id: str, fact_id: int, replacement: Relationship | None
                     ) -> dict[str, Any]:
        return self._edited(await self.dm.retcon(campaign_id, fact_id, replacement))

    async def set_visibility(self, campaign_id: str, fact_id: int, visibility: str,
                             known_by: list[str]) -> Relationship:
        return self._edited(
            await self.dm.set_visibility(campaign_id, fact_id, visibility, known_by))

    async def reveal(self, campaign_id: str, fact_id: int, to: list[str] | None
                     ) -> Relationship:
        return self._edited(await self.dm.reveal(campaign_id, fact_id, to))

    async def review_queue(self, campaign_id: str) -> list[dict[str, Any]]:
        return await self.dm.review_queue(campaign_id)

    async def open_spellings(self, campaign_id: str) -> list[dict[str, Any]]:
        return await self.dm.open_spellings(campaign_id)

    async def accept_spelling(self, campaign_id: str, entity_id: str, spelling: str) -> Entity:
        return self._edited(await self.dm.accept_spelling(campaign_id, entity_id, spelling))

    async def dismiss_spelling(self, campaign_id: str, entity_id: str, spelling: str) -> str:
        return self._edited(await self.dm.dismiss_spelling(campaign_id, entity_id, spelling))

    # -- health ---------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        return await health_report(self.guard, replica=self.replica, prefetch=self.prefetch,
                                   shared_prefetch=self.shared_prefetch,
                                   search=self.search_counters, graph_cache=self.graph_cache,
                                   latencies=self.latencies)
