"""The realtime memory service's core, shared by the HTTP API and the MCP server.

It owns the async pool, the per-process caches (session → campaign, the campaign's prepared
name index, the last good hot context per NPC, pre-fetched results), the spool, and a circuit
breaker: once PostgreSQL stops answering, calls fail fast as "memory degraded" instead of each
waiting out a pool timeout, and a background probe brings the service back and replays the
spool. Nothing here assumes it is the only replica: caches are refreshed from the tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.correction import CORRECTOR_VERSION, NameIndex, correct
from glyphoxa_pipelines.db import AsyncDatabase, DatabaseUnavailableError
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    GraphRAGQuerier,
    GraphScope,
    InvalidInputError,
    KnowledgeGraph,
    NewEntry,
    NotFoundError,
    NpcProfile,
    Relationship,
    SemanticIndex,
    SessionStore,
    SummaryStore,
)
from glyphoxa_pipelines.memory.session_log import _INSERT_ENTRIES, _entry_record, validate_entry
from glyphoxa_pipelines.processing.mentions import MentionFinder
from realtime import fact_search as fs
from realtime import session_search as ss
from realtime import tools as tl
from realtime.graph_cache import GraphCache, listen_for_changes
from realtime.hot_context import HotContext, Memory, assemble, fit_budget
from realtime.prefetch import PrefetchCache, Prefetched, Trigger, detect
from realtime.query_embedding import QueryEmbedder
from realtime.session_search import chunk_result
from realtime.spool import PermanentSpoolError, Spool

log = logging.getLogger(__name__)
T = TypeVar("T")

DEGRADED = "memory degraded: PostgreSQL is unreachable"
# A temporal cue's pre-fetch: the same turn-ranked search as `memory.search_sessions`, cut to
# what a hot context can carry beside identity, scene and the last minutes (its budget trims
# memories first). LoCoMo pre-fetch hit rate: see `bench/locomo.py`.
PREFETCH_PASSAGES = 6
PREFETCH_TOKENS = 400


class QueryTimeoutError(RuntimeError):
    """A statement hit the timeout we set for it (not an outage: no degraded mode)."""


@dataclass(slots=True)
class _Names:
    """A campaign's prepared names: the correction index and the mention finder."""

    index: NameIndex
    finder: MentionFinder
    version: tuple[int, Any]
    checked: float
    entities: dict[str, Entity] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolScope:
    """Who asks: bound by the caller, never by the LLM."""

    campaign_id: str | None = None
    session_id: str | None = None
    npc_id: str | None = None


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


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
        fusion_weights: tuple[float, float] = (1.0, 1.0),
        fulltext_timeout_ms: int = 20,
        graph_cache: bool = True,
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.url = url
        self.db = AsyncDatabase(url, min_size=pool_min, max_size=pool_max)
        self.campaigns = CampaignStore(self.db)
        self.sessions = SessionStore(self.db)
        self.index = SemanticIndex(self.db)
        self.graph = KnowledgeGraph(self.db)
        self.graph_rag = GraphRAGQuerier(self.db)
        self.summaries = SummaryStore(self.db)
        self.embedder = QueryEmbedder(embedder)
        self.spool = Spool(spool_dir or self.settings.spool_dir)
        self.prefetch = PrefetchCache()
        self.latencies = tl.LatencyTracker()
        self.token_budget = token_budget
        self.recent_window_s = recent_window_s
        self.recent_limit = recent_limit
        self.prefetch_wait_s = prefetch_wait_ms / 1000
        self.names_refresh_s = names_refresh_s
        self.db_timeout_s = db_timeout_s
        self.probe_interval_s = probe_interval_s
        self.fusion_weights = fusion_weights  # (vector, full-text); 0 switches a leg off
        self.fulltext_timeout_ms = fulltext_timeout_ms
        self.fulltext_timeouts = 0
        self.degraded = False
        self.degraded_since: float | None = None
        self.last_error: str | None = None
        self._session_campaign: dict[str, str] = {}
        self._names: dict[str, _Names] = {}
        self._names_loading: dict[str, asyncio.Task[_Names]] = {}
        self._names_refreshing: set[str] = set()
        self._hot_cache: OrderedDict[tuple[str, str], HotContext] = OrderedDict()
        self.graph_cache = GraphCache()
        self.graph_cache_enabled = graph_cache
        self._listener: asyncio.Task[None] | None = None
        self._local_recent: dict[str, deque[dict[str, Any]]] = {}
        self._turns: dict[tuple[str, str], int] = {}
        self._inflight: dict[str, set[asyncio.Task[Any]]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._monitor: asyncio.Task[None] | None = None
        self._replay_lock = asyncio.Lock()

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self, *, warm_embedder: bool = True) -> MemoryService:
        try:
            await self.db.open(timeout=10.0)
        except DatabaseUnavailableError as exc:
            self._mark_degraded(exc)
        self._monitor = asyncio.create_task(self._monitor_loop())
        if self.graph_cache_enabled:
            self._listener = asyncio.create_task(
                listen_for_changes(self.url, self._graph_changed, self._listener_state)
            )
        if warm_embedder:
            self._spawn(asyncio.to_thread(self.embedder.embed_sync, "warm up"))
        return self

    async def close(self) -> None:
        for task in (self._monitor, self._listener):
            if task:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.db.close()
        self.spool.close()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- graph change notifications -----------------------------------------------------
    def _graph_changed(self, table: str, campaign_id: str) -> None:
        """A committed change to a campaign's graph (any process): drop its cached identities;
        an entity change also rebuilds the name index in the background."""
        self.graph_cache.invalidate(campaign_id)
        if table == "entities" and campaign_id in self._names and not self.degraded:
            self._spawn(self._refresh_names(campaign_id, None))

    def _listener_state(self, connected: bool) -> None:
        self.graph_cache.reset(enabled=connected)

    # -- database access with a circuit breaker -------------------------------------------
    def _mark_degraded(self, exc: BaseException) -> None:
        if not self.degraded:
            log.warning("PostgreSQL unreachable, serving degraded: %s", exc)
            self.degraded_since = time.monotonic()
        self.degraded = True
        self.last_error = str(exc)

    async def run(self, op: Op, *, transaction: bool = True) -> Any:
        """Run an operation; fail fast while degraded. `transaction=False` for read-only
        operations whose statements need no common snapshot (saves BEGIN and COMMIT)."""
        if self.degraded:
            op.close()
            raise DatabaseUnavailableError(DEGRADED)
        try:
            async with asyncio.timeout(self.db_timeout_s):
                return await self.db.run(op, transaction=transaction)
        except DatabaseUnavailableError as exc:
            if isinstance(exc.__cause__, psycopg.errors.QueryCanceled):
                raise QueryTimeoutError(str(exc.__cause__)) from exc  # our own timeout
            self._mark_degraded(exc)
            raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc
        except (TimeoutError, psycopg.InterfaceError, psycopg.OperationalError) as exc:
            self._mark_degraded(exc)
            raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc

    async def fetch_row(self, query: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """One statement, one round trip, no explicit transaction (a single statement is its
        own snapshot): the hot path's read."""
        if self.degraded:
            raise DatabaseUnavailableError(DEGRADED)

        async def go() -> dict[str, Any] | None:
            async with self.db.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(query, params)
                return await cur.fetchone()

        return await self._within_limits(go())

    async def _within_limits(self, call: Awaitable[T]) -> T:
        """One direct database call under the service's time limit; a timeout or a lost
        connection switches the service to degraded mode."""
        try:
            async with asyncio.timeout(self.db_timeout_s):
                return await call
        except (TimeoutError, psycopg.InterfaceError, psycopg.OperationalError) as exc:
            self._mark_degraded(exc)
            raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc

    async def _probe(self) -> bool:
        try:
            conn = await psycopg.AsyncConnection.connect(self.url, connect_timeout=2)
        except Exception:  # noqa: BLE001 - any failure means "still down"
            return False
        async with conn:
            await conn.execute("SELECT 1")
        return True

    async def _monitor_loop(self) -> None:
        """Bring the service back when PostgreSQL returns, then replay the spool in order."""
        while True:
            await asyncio.sleep(self.probe_interval_s)
            try:
                if self.degraded and await self._probe():
                    if self.db.pool.closed:
                        await self.db.pool.open(wait=False)
                    with contextlib.suppress(Exception):
                        await self.db.pool.check()
                    self.degraded = False
                    self.degraded_since = None
                    log.warning("PostgreSQL is back")
                if not self.degraded and self.spool.depth:
                    await self.replay_spool()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the monitor must never die
                log.exception("monitor loop")

    async def replay_spool(self) -> int:
        async with self._replay_lock:
            try:
                return await self.spool.replay(self._replay_write)
            except (DatabaseUnavailableError, psycopg.Error, TimeoutError) as exc:
                self._mark_degraded(exc)
                return 0

    async def _replay_write(self, session_id: str, entries: list[dict[str, Any]]) -> None:
        new = [
            NewEntry(**{**e, "spoken_at": datetime.fromisoformat(e["spoken_at"])
                        if e.get("spoken_at") else None})
            for e in entries
        ]
        try:
            await asyncio.wait_for(
                self.db.run(SessionStore.write_entries.op(self.sessions, session_id, new)),
                self.db_timeout_s,
            )
        except NotFoundError as exc:
            raise PermanentSpoolError(str(exc)) from exc
        except InvalidInputError as exc:
            raise PermanentSpoolError(str(exc)) from exc

    # -- campaigns and sessions -----------------------------------------------------------
    async def upsert_campaign(self, campaign: Campaign) -> Campaign:
        return await self.run(CampaignStore.upsert.op(self.campaigns, campaign))

    async def campaign_of(self, session_id: str) -> str:
        cid = self._session_campaign.get(session_id)
        if cid is None:
            session = await self.run(SessionStore.get_session.op(self.sessions, session_id))
            if session is None:
                raise NotFoundError(f"unknown session {session_id!r}")
            cid = self._session_campaign[session_id] = session.campaign_id
        return cid

    async def start_session(
        self,
        campaign_id: str,
        session_id: str | None = None,
        *,
        title: str = "",
        started_at: datetime | None = None,
        scene: dict[str, Any] | None = None,
    ) -> Any:
        session = await self.run(
            SessionStore.start_session.op(
                self.sessions, campaign_id, session_id, title=title, started_at=started_at
            )
        )
        if scene is not None:
            session = await self.run(SessionStore.set_scene.op(self.sessions, session.id, scene))
        self._session_campaign[session.id] = session.campaign_id
        return session

    async def end_session(self, session_id: str) -> Any:
        session = await self.run(SessionStore.end_session.op(self.sessions, session_id))
        self.prefetch.clear(session_id)
        return session

    async def set_scene(self, session_id: str, scene: dict[str, Any]) -> Any:
        return await self.run(SessionStore.set_scene.op(self.sessions, session_id, scene))

    # -- names (correction index + mention finder) ----------------------------------------
    async def _load_names(self, campaign_id: str) -> _Names:
        def load() -> Op:
            version = yield from fs.names_version_op(campaign_id)
            entities = yield from fs.all_entities_op(campaign_id)
            return version, entities

        version, entities = await self.run(load())

        def build() -> _Names:
            return _Names(
                index=NameIndex(entities),
                finder=MentionFinder.from_entities(entities),
                version=version,
                checked=time.monotonic(),
                entities={e.id: e for e in entities},
            )

        names = await asyncio.to_thread(build)
        self._names[campaign_id] = names
        return names

    async def names(self, campaign_id: str) -> _Names | None:
        """The campaign's prepared names; rebuilt when entities changed (checked in the
        background at most every `names_refresh_s`, so the hot path never waits for it)."""
        names = self._names.get(campaign_id)
        if names is None:
            if self.degraded:
                return None
            task = self._names_loading.get(campaign_id)
            if task is None:
                task = asyncio.ensure_future(self._load_names(campaign_id))
                self._names_loading[campaign_id] = task
                task.add_done_callback(lambda _t: self._names_loading.pop(campaign_id, None))
            try:
                return await asyncio.shield(task)
            except DatabaseUnavailableError:
                return None
        if time.monotonic() - names.checked > self.names_refresh_s and not self.degraded:
            names.checked = time.monotonic()
            self._spawn(self._refresh_names(campaign_id, names.version))
        return names

    async def _refresh_names(self, campaign_id: str, version: tuple[int, Any] | None) -> None:
        """Rebuild the name index when its fingerprint moved (always, for `version=None`: a
        change was announced). One rebuild per campaign at a time: a burst of announcements
        during a pipeline run costs one."""
        if campaign_id in self._names_refreshing:
            return
        self._names_refreshing.add(campaign_id)
        try:
            with contextlib.suppress(DatabaseUnavailableError):
                current = await self.run(fs.names_version_op(campaign_id))
                if current != version:
                    await self._load_names(campaign_id)
        finally:
            self._names_refreshing.discard(campaign_id)

    def invalidate_names(self, campaign_id: str) -> None:
        self._names.pop(campaign_id, None)

    # -- live transcript ------------------------------------------------------------------
    async def write_entries(self, session_id: str, items: Sequence[Any]) -> dict[str, Any]:
        """Correct names inline and write to L1 (or the spool). `items` are EntryIn-like."""
        try:
            campaign_id: str | None = await self.campaign_of(session_id)
        except DatabaseUnavailableError:
            campaign_id = None  # unknown while degraded: spool uncorrected, raw is kept
        names = await self.names(campaign_id) if campaign_id else None
        now = _now()
        new: list[NewEntry] = []
        out: list[dict[str, Any]] = []
        for item in items:
            result = correct(item.text, names.index, item.word_confidences) if names else None
            corrections = [c.as_dict() for c in result.corrections] if result else []
            text = result.text if result else item.text
            entry = NewEntry(
                idempotency_key=item.idempotency_key,
                text=text,
                raw_text=item.text,
                speaker_id=item.speaker_id,
                speaker_name=item.speaker_name,
                speaker_role=item.role,
                npc_id=item.npc_id,
                spoken_at=item.spoken_at or now,
                duration_s=item.duration_s,
                word_confidences=item.word_confidences,
                corrections=corrections,
                corrector_version=CORRECTOR_VERSION if names else None,
            )
            new.append(entry)
            out.append(
                {
                    "idempotency_key": item.idempotency_key,
                    "text": text,
                    "raw_text": item.text,
                    "corrections": corrections,
                }
            )
        for entry in new:
            if not entry.text.strip():
                raise InvalidInputError(f"entry {entry.idempotency_key!r}: text is empty")
        spooled = False
        written = 0
        if self.spool.depth or self.degraded:
            self._spool(session_id, new)
            spooled = True
        else:
            try:
                written = await self._insert_entries(session_id, new)
            except DatabaseUnavailableError:
                self._spool(session_id, new)
                spooled = True
        self._remember(session_id, new)
        triggers: list[dict[str, Any]] = []
        if names is not None and campaign_id is not None:
            for entry in new:
                if entry.speaker_role in ("player", "dm"):
                    triggers += self._schedule_prefetch(
                        campaign_id, session_id, entry.text, None, names, corrected=True
                    )
        return {
            "session_id": session_id,
            "written": written,
            "duplicates": 0 if spooled else len(new) - written,
            "spooled": spooled,
            "spool_depth": self.spool.depth,
            "entries": out,
            "prefetch": triggers,
        }

    async def _insert_entries(self, session_id: str, entries: list[NewEntry]) -> int:
        """The store's own idempotent INSERT as one statement, no explicit transaction: one
        round trip per utterance (the session is known to exist: `campaign_of` checked)."""
        for e in entries:
            validate_entry(e)
        payload = json.dumps([_entry_record(e) for e in entries])
        if self.degraded:
            raise DatabaseUnavailableError(DEGRADED)

        async def go() -> int:
            async with self.db.pool.connection() as conn:
                cur = await conn.execute(_INSERT_ENTRIES, (payload, session_id))
                return cur.rowcount

        try:
            return await self._within_limits(go())
        except psycopg.errors.CheckViolation as exc:
            raise InvalidInputError(str(exc.diag.message_primary)) from exc

    def _spool(self, session_id: str, entries: list[NewEntry]) -> None:
        records = []
        for e in entries:
            rec = asdict(e)
            rec["spoken_at"] = e.spoken_at.isoformat() if e.spoken_at else None
            records.append(rec)
        self.spool.append(session_id, records, spooled_at=_now().isoformat())

    def _remember(self, session_id: str, entries: list[NewEntry]) -> None:
        """Keep the last few utterances per session in memory: the degraded hot context."""
        ring = self._local_recent.setdefault(session_id, deque(maxlen=self.recent_limit))
        known = {r["idempotency_key"] for r in ring}
        for e in entries:
            if e.idempotency_key in known:
                continue  # a retry: said once
            known.add(e.idempotency_key)
            ring.append(
                {
                    "speaker_name": e.speaker_name,
                    "speaker_id": e.speaker_id,
                    "speaker_role": e.speaker_role,
                    "text": e.text,
                    "spoken_at": e.spoken_at,
                    "idempotency_key": e.idempotency_key,
                }
            )

    # -- speculative pre-fetch ------------------------------------------------------------
    async def partial(
        self, session_id: str, text: str, npc_id: str | None = None
    ) -> dict[str, Any]:
        campaign_id = await self.campaign_of(session_id)
        names = await self.names(campaign_id)
        if names is None:
            return {"session_id": session_id, "triggers": [], "degraded": True}
        triggers = self._schedule_prefetch(campaign_id, session_id, text, npc_id, names)
        return {"session_id": session_id, "triggers": triggers, "degraded": self.degraded}

    def detect_triggers(
        self, text: str, names: _Names, *, corrected: bool = False
    ) -> list[Trigger]:
        """Correct names first (a misheard name must still fire), then match."""
        if not corrected:
            text = correct(text, names.index).text
        return detect(text, names.finder)

    def _schedule_prefetch(
        self,
        campaign_id: str,
        session_id: str,
        text: str,
        npc_id: str | None,
        names: _Names,
        *,
        corrected: bool = False,
    ) -> list[dict[str, Any]]:
        triggers = self.detect_triggers(text, names, corrected=corrected)
        view = fs.viewer(npc_id)
        out = []
        for trig in triggers:
            self.prefetch.stats["triggers"] += 1
            fresh = self.prefetch.fresh(session_id, trig, view)
            out.append({"kind": trig.kind, "key": trig.key, "surface": trig.surface,
                        "scheduled": not fresh})
            if fresh:
                self.prefetch.stats["deduplicated"] += 1
                continue
            # Reserve the slot now so a burst of partials fetches once.
            self.prefetch.put(
                session_id, Prefetched(trig, view, [], time.monotonic(), meta={"pending": True})
            )
            task = self._spawn(self._fetch(campaign_id, session_id, trig, view))
            bucket = self._inflight.setdefault(session_id, set())
            bucket.add(task)
            task.add_done_callback(bucket.discard)
        return out

    async def _fetch(self, campaign_id: str, session_id: str, trig: Trigger, view: str) -> None:
        start = time.perf_counter()
        try:
            if trig.kind == "entity":
                got = await self.run(fs.entity_context_op(campaign_id, trig.key, view))
                memories = [] if got is None else [entity_memory(*got)]
            else:
                args = tl.SearchSessionsArgs(query=trig.key, top_k=PREFETCH_PASSAGES,
                                             max_tokens=PREFETCH_TOKENS)
                found = await ss.search_sessions(self, args, campaign_id)
                memories = [  # below entities (1.0), best passage first
                    Memory("chunk", r["text"], 0.5 + 0.1 / (1 + k), r["source"])
                    for k, r in enumerate(found)
                ]
        except DatabaseUnavailableError:
            return
        except Exception:  # noqa: BLE001 - a failed guess must never hurt the turn
            log.exception("pre-fetch %s failed", trig)
            return
        self.prefetch.put(
            session_id,
            Prefetched(trig, view, memories, time.monotonic(),
                       elapsed_ms=(time.perf_counter() - start) * 1000),
        )

    async def wait_prefetch(self, session_id: str, timeout_s: float | None = None) -> None:
        tasks = list(self._inflight.get(session_id, ()))
        if tasks:
            await asyncio.wait(tasks, timeout=self.prefetch_wait_s if timeout_s is None
                               else timeout_s)

    # -- hot context ----------------------------------------------------------------------
    async def hot_context(
        self,
        session_id: str,
        npc_id: str,
        *,
        budget: int | None = None,
        fact_limit: int = 30,
    ) -> HotContext:
        """Identity + scene + recent transcript + pre-fetched memories, in one statement.
        The identity part (NPC row, profile, known facts) comes from the graph cache while no
        change to the campaign's graph has been announced. While degraded: the last good
        context, with the utterances written since."""
        budget = budget or self.token_budget
        if self._inflight.get(session_id):
            await self.wait_prefetch(session_id)
        key = (session_id, npc_id)
        known_campaign = self._session_campaign.get(session_id)
        identity = (
            self.graph_cache.get(known_campaign, (npc_id, fact_limit)) if known_campaign else None
        )
        generation = self.graph_cache.generation
        query, params = fs.hot_row_statement(
            session_id, npc_id, recent_limit=self.recent_limit, fact_limit=fact_limit,
            window_s=self.recent_window_s, with_identity=identity is None,
        )
        try:
            row = await self.fetch_row(query, params)
        except DatabaseUnavailableError:
            return self._degraded_context(key, budget)
        if row is None:
            raise NotFoundError(f"unknown session {session_id!r}")
        campaign_id = row["campaign_id"]
        if identity is None:
            npc, facts = row["npc"], row["facts"]
            if npc is None:
                raise NotFoundError(f"unknown NPC {npc_id!r} in campaign {campaign_id!r}")
            self.graph_cache.put(campaign_id, (npc_id, fact_limit), (npc, facts), generation)
        else:
            npc, facts = identity
        recent = row["recent"]
        self._session_campaign[session_id] = campaign_id
        session = row
        memories = [
            m for item in self.prefetch.get(session_id, fs.viewer(npc_id)) for m in item.memories
        ]
        ctx = assemble(
            campaign_id=campaign_id,
            session_id=session_id,
            npc=npc,
            facts=facts,
            scene=session["scene"] or {},
            scene_entities=session["scene_entities"],
            recent=recent,
            memories=_dedupe(memories),
            budget=budget,
            assembled_at=_now().isoformat(),
        )
        self._turns[key] = self._turns.get(key, 0) + 1
        self._hot_cache[key] = ctx
        self._hot_cache.move_to_end(key)
        while len(self._hot_cache) > 4096:
            self._hot_cache.popitem(last=False)
        return ctx

    def _degraded_context(self, key: tuple[str, str], budget: int) -> HotContext:
        cached = self._hot_cache.get(key)
        if cached is None:
            raise DatabaseUnavailableError(
                f"{DEGRADED}, and no context for NPC {key[1]!r} in session {key[0]!r} is "
                "cached yet"
            )
        ctx = copy.deepcopy(cached)
        seen = {r.get("entry_id") for r in ctx.recent}
        last = ctx.recent[-1]["spoken_at"] if ctx.recent else None
        for r in self._local_recent.get(key[0], ()):
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

    # -- memory tools ---------------------------------------------------------------------
    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, scope: ToolScope
    ) -> dict[str, Any]:
        """Validate, run, time. Degraded memory is a result the LLM can read, not a crash."""
        args = tl.validate(name, arguments)
        campaign_id = scope.campaign_id
        if campaign_id is None and scope.session_id:
            try:
                campaign_id = await self.campaign_of(scope.session_id)
            except DatabaseUnavailableError:
                return _degraded_result(name)
        if campaign_id is None:
            raise InvalidInputError(
                "a tool call needs a campaign: bind campaign_id or session_id in its context"
            )
        scope = ToolScope(campaign_id, scope.session_id, scope.npc_id)
        start = time.perf_counter()
        handler = getattr(self, "_tool_" + name.split(".", 1)[1])
        try:
            results = await handler(args, scope)
        except DatabaseUnavailableError:
            return _degraded_result(name)
        elapsed = (time.perf_counter() - start) * 1000
        self.latencies.record(name, elapsed)
        return {
            "tool": name,
            "status": "ok",
            "count": len(results),
            "results": results,
            "elapsed_ms": round(elapsed, 3),
        }

    async def _tool_search_sessions(
        self, args: tl.SearchSessionsArgs, scope: ToolScope
    ) -> list[dict[str, Any]]:
        return await ss.search_sessions(self, args, scope.campaign_id or "")

    async def _tool_query_entities(
        self, args: tl.QueryEntitiesArgs, scope: ToolScope
    ) -> list[dict[str, Any]]:
        campaign = scope.campaign_id or ""
        view = fs.viewer(scope.npc_id)
        graph = self.graph

        def op() -> Op:
            found: list[Entity] = []
            if args.name:
                exact = yield from KnowledgeGraph.resolve.op(graph, campaign, args.name)
                if exact is not None and (args.type is None or exact.type == args.type):
                    found = [exact]
            if not found:
                found = yield from KnowledgeGraph.find_entities.op(
                    graph, campaign, type=args.type, name=args.name,
                    attributes=args.attributes, limit=args.limit,
                )
            found = found[: args.limit]
            out = []
            for i, ent in enumerate(found):
                if args.depth > 1 and i == 0:
                    sub = yield from graph._neighbors_op(
                        campaign, ent.id, args.depth, None, None, 30, view, None
                    )
                    facts = sub.facts
                else:
                    facts = yield from fs.facts_about_op(campaign, ent.id, view, limit=15)
                item = entity_result(ent, facts)
                if args.related_to and i == 0:
                    other = yield from KnowledgeGraph.resolve.op(graph, campaign, args.related_to)
                    if other is not None:
                        path = yield from KnowledgeGraph.find_path.op(
                            graph, campaign, ent.id, other.id, max_depth=4, npc_id=view
                        )
                        ids = {r.source_id for r in path} | {r.target_id for r in path}
                        named = yield from graph._entities_op(campaign, list(ids))
                        item["path_to"] = {
                            "entity": other.name,
                            "facts": [
                                f"{named[r.source_id].name} {r.rel_type.replace('_', ' ')} "
                                f"{named[r.target_id].name}"
                                for r in path
                            ],
                        }
                out.append(item)
            return out

        return await self.run(op(), transaction=False)

    async def _tool_get_session_summary(
        self, args: tl.GetSessionSummaryArgs, scope: ToolScope
    ) -> list[dict[str, Any]]:
        campaign = scope.campaign_id or ""
        which = args.session.lower()

        def op() -> Op:
            if which in ("last", "previous", "last session", "latest"):
                summary = yield from SummaryStore.latest.op(
                    self.summaries, campaign, before_session=scope.session_id
                )
            else:
                sid = scope.session_id if which == "current" else args.session
                summary = yield from SummaryStore.get.op(self.summaries, sid or "")
                if summary is not None and summary.campaign_id != campaign:
                    summary = None  # another campaign's session: as if it did not exist
            if summary is None:
                return []
            session = yield from SessionStore.get_session.op(self.sessions, summary.session_id)
            return [
                {
                    "text": summary.summary,
                    "key_points": list(summary.key_points),
                    "source": {
                        "session_id": summary.session_id,
                        "title": session.title if session else "",
                        "when": _iso(session.started_at) if session else None,
                        "method": summary.method,
                    },
                }
            ]

        return await self.run(op(), transaction=False)

    async def _tool_search_facts(
        self, args: tl.SearchFactsArgs, scope: ToolScope
    ) -> list[dict[str, Any]]:
        campaign = scope.campaign_id or ""
        view = fs.viewer(scope.npc_id)
        graph = self.graph

        def op() -> Op:
            entity_id = None
            if args.entity:
                ent = yield from KnowledgeGraph.resolve.op(graph, campaign, args.entity)
                if ent is None:
                    return []
                entity_id = ent.id
            facts = yield from fs.search_facts_op(
                campaign, view, query=args.query, entity_id=entity_id,
                rel_types=[args.relation] if args.relation else None, after=args.after,
                before=args.before, at=args.at, include_history=args.include_history,
                limit=args.limit,
            )
            out = [fact_result(f, started) for f, started in facts]
            if args.query and not args.entity and not args.relation:
                events = yield from fs.search_events_op(
                    campaign, query=args.query, after=args.after, before=args.before,
                    limit=max(1, args.limit - len(out)),
                )
                out += [event_result(e, started) for e, started in events]
            return out[: args.limit]

        return await self.run(op(), transaction=False)

    async def _tool_search_graph(
        self, args: tl.SearchGraphArgs, scope: ToolScope
    ) -> list[dict[str, Any]]:
        campaign = scope.campaign_id or ""
        ent = await self.run(KnowledgeGraph.resolve.op(self.graph, campaign, args.entity))
        if ent is None:
            return []
        graph_scope = GraphScope(campaign, ent.id, depth=args.depth, npc_id=fs.viewer(scope.npc_id))
        if args.depth == 0:
            graph_scope = GraphScope(campaign, entity_ids=(ent.id,))
        if args.mode == "semantic":
            vec = await self.embedder.embed(args.query)
            hits = await self.run(
                GraphRAGQuerier.query_with_embedding.op(self.graph_rag, vec, args.top_k,
                                                        graph_scope)
            )
            return [chunk_result(h, 1.0 - h.score, ["vector"]) for h in hits]
        hits = await self.run(fs.statement_timeout_op(
            GraphRAGQuerier.query_with_context.op(self.graph_rag, args.query, graph_scope,
                                                  limit=args.top_k),
            self.fulltext_timeout_ms * 4,
        ))
        return [chunk_result(h, h.score, ["fulltext"]) for h in hits]

    # -- DM edits (effective in the next hot context) ------------------------------------
    async def _edit(self, campaign_id: str, op: Op, *, names: bool = False) -> Any:
        """Run a DM edit, then drop this process's caches of the campaign at once (the
        change notification would, a moment later; the DM's next turn must not wait for it)."""
        try:
            return await self.run(op)
        finally:
            self.graph_cache.invalidate(campaign_id)
            if names:
                self.invalidate_names(campaign_id)

    async def add_entity(self, entity: Entity) -> Entity:
        return await self._edit(
            entity.campaign_id, KnowledgeGraph.add_entity.op(self.graph, entity), names=True
        )

    async def update_entity(self, campaign_id: str, entity_id: str, **changes: Any) -> Entity:
        return await self._edit(
            campaign_id,
            KnowledgeGraph.update_entity.op(self.graph, campaign_id, entity_id, **changes),
            names=True,
        )

    async def delete_entity(self, campaign_id: str, entity_id: str) -> bool:
        return bool(await self._edit(
            campaign_id, KnowledgeGraph.delete_entity.op(self.graph, campaign_id, entity_id),
            names=True,
        ))

    async def upsert_profile(self, profile: NpcProfile) -> NpcProfile:
        return await self._edit(
            profile.campaign_id, KnowledgeGraph.upsert_npc_profile.op(self.graph, profile)
        )

    async def resolve_id(self, campaign_id: str, name_or_id: str) -> str:
        ent = await self.run(KnowledgeGraph.resolve.op(self.graph, campaign_id, name_or_id))
        if ent is None:
            raise NotFoundError(f"unknown entity {name_or_id!r} in campaign {campaign_id!r}")
        return ent.id

    async def add_fact(self, rel: Relationship) -> Relationship:
        return await self._edit(
            rel.campaign_id, KnowledgeGraph.add_relationship.op(self.graph, rel)
        )

    async def set_fact_status(
        self, campaign_id: str, fact_id: int, status: str, dm_confirmed: bool | None
    ) -> Relationship:
        return await self._edit(
            campaign_id,
            KnowledgeGraph.set_fact_status.op(
                self.graph, campaign_id, fact_id, status, dm_confirmed=dm_confirmed
            )
        )

    async def retcon(
        self, campaign_id: str, fact_id: int, replacement: Relationship | None
    ) -> dict[str, Any]:
        graph = self.graph

        def op() -> Op:
            old = yield from KnowledgeGraph.get_relationship.op(graph, campaign_id, fact_id)
            if old is None:
                raise NotFoundError(f"unknown fact {fact_id} in campaign {campaign_id!r}")
            new = None
            if replacement is not None:
                # Invalidate first: the replacement may reuse the same (source, type, target).
                yield from KnowledgeGraph.invalidate_relationship.op(graph, campaign_id, fact_id)
                new = yield from graph._upsert_relationship_op(
                    replacement, protect_confirmed=False
                )
                from glyphoxa_pipelines.db.operations import execute

                yield execute(
                    "UPDATE relationships SET invalidated_by = %s WHERE campaign_id = %s "
                    "AND id = %s",
                    (new.id, campaign_id, fact_id),
                )
            else:
                yield from KnowledgeGraph.invalidate_relationship.op(graph, campaign_id, fact_id)
            return {"invalidated": fact_id, "replacement": asdict(new) if new else None}

        return await self._edit(campaign_id, op())

    async def set_visibility(
        self, campaign_id: str, fact_id: int, visibility: str, known_by: list[str]
    ) -> Relationship:
        return await self._edit(
            campaign_id,
            KnowledgeGraph.set_visibility.op(self.graph, campaign_id, fact_id, visibility,
                                             known_by),
        )

    async def review_queue(self, campaign_id: str) -> list[dict[str, Any]]:
        facts = await self.run(KnowledgeGraph.review_queue.op(self.graph, campaign_id))
        return [fact_result(f, None) for f in facts]

    # -- health ---------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        reachable = not self.degraded
        if reachable:
            try:
                await self.run(_select_one())
            except DatabaseUnavailableError:
                reachable = False
        return {
            "status": "ok" if reachable and not self.spool.depth else "degraded",
            "database": reachable,
            "degraded": self.degraded,
            "degraded_for_s": round(time.monotonic() - self.degraded_since, 3)
            if self.degraded_since
            else 0.0,
            "last_error": self.last_error if self.degraded else None,
            "spool_depth": self.spool.depth,
            "spool_replayed": self.spool.replayed,
            "prefetch": dict(self.prefetch.stats),
            "fulltext_timeouts": self.fulltext_timeouts,
            "graph_cache": self.graph_cache.stats(),
            "tool_latency_ms": self.latencies.snapshot(),
        }


def _select_one() -> Op:
    from glyphoxa_pipelines.db.operations import fetch_one

    row = yield fetch_one("SELECT 1 AS ok")
    return row


def _degraded_result(name: str) -> dict[str, Any]:
    return {
        "tool": name,
        "status": "degraded",
        "error": f"{DEGRADED}; answer from what you already know",
        "count": 0,
        "results": [],
    }


def _dedupe(memories: list[Memory]) -> list[Memory]:
    seen: set[tuple[str, str]] = set()
    out = []
    for m in memories:
        key = (m.kind, m.text)
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


def entity_memory(entity: Entity, facts: list[Any]) -> Memory:
    desc = str(entity.attributes.get("description", "")).strip()
    text = f"{entity.name} ({entity.type})" + (f": {desc}" if desc else "")
    if facts:
        text += ". " + "; ".join(f.sentence() for f in facts[:5])
    return Memory("entity", text, 1.0, {"entity_id": entity.id, "session_id": entity.session_id})


def entity_result(entity: Entity, facts: list[Any]) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.type,
        "aliases": list(entity.aliases),
        "attributes": entity.attributes,
        "facts": [fact_result(f, None) for f in facts],
        "source": {"session_id": entity.session_id, "provenance": entity.provenance,
                   "when": _iso(entity.created_at)},
    }


def fact_result(fact: Any, session_started: datetime | None) -> dict[str, Any]:
    rel = fact.relationship
    return {
        "id": rel.id,
        "text": fact.sentence(),
        "source_entity": fact.source_name,
        "relation": rel.rel_type,
        "target_entity": fact.target_name,
        "confidence": rel.confidence,
        "status": rel.status,
        "secret": fact.secret,
        "current": rel.invalidated_at is None,
        "source": {
            "session_id": rel.session_id,
            "when": _iso(rel.observed_at or session_started or rel.valid_from),
            "evidence": rel.evidence,
            "provenance": rel.provenance,
        },
    }


def event_result(entity: Entity, started: datetime | None) -> dict[str, Any]:
    desc = str(entity.attributes.get("description") or entity.attributes.get("summary") or "")
    return {
        "id": entity.id,
        "text": entity.name + (f": {desc}" if desc else ""),
        "type": entity.type,
        "source": {"session_id": entity.session_id, "when": _iso(started or entity.created_at)},
    }
