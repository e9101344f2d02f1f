"""Hot-context and tool reads on a streaming-replication standby, without reading the past.

A standby replays the primary's WAL a little later, so a read there can miss what was just
written. Three rules keep every answer as fresh as the primary's where it matters:
- read-your-writes: after the service writes a session's transcript or scene it learns the
  primary's WAL position (and announces it to the other workers and hosts on
  `SESSION_LSN_CHANNEL`); a read for that session goes to the standby only once the standby
  has replayed past it, else to the primary. The live line an NPC was just told is therefore
  in its next context even when the standby lags.
- graph changes: a change announced on the graph channel may be invalidating a cached
  identity; until the standby has replayed past the primary's position taken after the
  announcement, every read goes to the primary (otherwise the cache would refill from the
  past).
- a standby that is unreachable, not in recovery, or more than `max_lag_s` behind serves
  nothing; reads go to the primary and `/healthz` says why.
The position checks use figures a background poll keeps (one tiny statement on each server
every `poll_s`), so routing costs the voice path nothing; a stale figure only ever sends a
read to the primary. Which session a read belongs to travels in a context variable set by
the service around the hot context and a tool call: the reads happen several layers down,
in code that has no reason to know about replicas.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import psycopg
from cachetools import LRUCache
from psycopg.rows import dict_row

from glyphoxa_pipelines.db import AsyncDatabase, DatabaseUnavailableError, StatementTimeoutError
from glyphoxa_pipelines.db.database import drive_async
from glyphoxa_pipelines.db.errors import is_outage
from glyphoxa_pipelines.db.operations import Op

log = logging.getLogger(__name__)
T = TypeVar("T")

SESSION_LSN_CHANNEL = "glyphoxa_session_lsn"
# A session whose write position is unknown (the announcement failed) reads the primary.
UNKNOWN_LSN = 1 << 64

_reading_session: ContextVar[str | None] = ContextVar("glyphoxa_reading_session", default=None)


@contextmanager
def reading_for(session_id: str | None) -> Iterator[None]:
    """Reads inside this block are the session's (read-your-writes applies to them)."""
    token = _reading_session.set(session_id)
    try:
        yield
    finally:
        _reading_session.reset(token)


def reading_session() -> str | None:
    return _reading_session.get()


def parse_lsn(text: str) -> int:
    """PostgreSQL's 'X/Y' WAL position as one integer."""
    high, sep, low = text.partition("/")
    if not sep:
        raise ValueError(f"not a WAL position: {text!r}")
    return (int(high, 16) << 32) + int(low, 16)


class ReplicaUnavailable(Exception):  # noqa: N818 - a signal, not a failure the caller sees
    """The standby cannot serve this read and nothing ran yet: read on the primary."""


class ReplicaLostError(DatabaseUnavailableError):
    """The standby went away in the middle of a read (the operation cannot be re-run)."""


class ReplicaReads:
    """The standby's pool, the positions that decide whether it may serve a read, and the
    counters `/healthz` reports."""

    def __init__(
        self,
        url: str,
        primary: AsyncDatabase,
        *,
        poll_s: float = 0.1,
        max_lag_s: float = 1.0,
        timeout_s: float = 3.0,
        pool_min: int = 1,
        pool_max: int = 16,
        sessions: int = 10_000,
    ) -> None:
        self.url = url
        self.db = AsyncDatabase(url, min_size=pool_min, max_size=pool_max)
        self._primary = primary
        self.poll_s = poll_s
        self.max_lag_s = max_lag_s
        self.timeout_s = timeout_s
        self.reachable = False
        self.listening = False
        self.reason: str | None = "not polled yet"
        self.replay_lsn = 0
        self.primary_lsn = 0
        self.lag_s: float | None = None
        self.barrier_lsn = 0
        self._barrier_requested = 0
        self._barrier_resolved = 0
        self._session_lsn: LRUCache[str, int] = LRUCache(maxsize=sessions)
        self._samples: deque[tuple[float, int]] = deque(maxlen=600)
        self._wake = asyncio.Event()
        self.reads = {"replica": 0, "primary": 0}
        self.fallbacks: dict[str, int] = {}

    # -- lifecycle ------------------------------------------------------------------------
    async def open(self) -> None:
        """Open the standby's pool; an unreachable standby leaves reads on the primary."""
        try:
            await self.db.open(timeout=5.0)
        except DatabaseUnavailableError as exc:
            self._lost(exc)
        await self.poll()

    async def close(self) -> None:
        await self.db.close()

    async def watch(self) -> None:
        """Poll both servers' positions every `poll_s` (sooner after a graph change) until
        cancelled."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_s):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.poll()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the watcher must never die
                log.exception("replica watch")

    async def poll(self) -> None:
        request = self._barrier_requested  # before the primary is read
        try:
            async with asyncio.timeout(self.timeout_s), self._primary.pool.connection() as conn:
                cur = await conn.execute("SELECT pg_current_wal_lsn()::text")
                row = await cur.fetchone()
        except (psycopg.Error, TimeoutError, OSError) as exc:
            self.reason = f"primary position unknown: {exc}"
            return
        assert row is not None
        now = time.monotonic()
        self.primary_seen(parse_lsn(row[0]), request, now)
        try:
            async with asyncio.timeout(self.timeout_s), self.db.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text"
                )
                state = await cur.fetchone()
        except (psycopg.Error, TimeoutError, OSError) as exc:
            self._lost(exc)
            return
        assert state is not None
        if not state[0] or state[1] is None:
            self.reachable = False
            self.reason = "the read server is not a standby in recovery"
            return
        self.reachable = True
        self.replay_lsn = parse_lsn(state[1])
        self.lag_s = self._lag(now)
        self.reason = None

    @property
    def barriers_requested(self) -> int:
        return self._barrier_requested

    def primary_seen(self, lsn: int, requested_before: int, now: float) -> None:
        """The primary's position, read after `requested_before` barriers were requested:
        it covers every change those barriers stand for."""
        self.primary_lsn = lsn
        self._samples.append((now, lsn))
        if requested_before > self._barrier_resolved:
            self.barrier_lsn = max(self.barrier_lsn, lsn)
            self._barrier_resolved = requested_before

    def _lag(self, now: float) -> float:
        """How old the standby's state is: the age of the newest primary position it has
        replayed past (0 when it had replayed the position read just now)."""
        for at, lsn in reversed(self._samples):
            if lsn <= self.replay_lsn:
                return now - at
        return now - self._samples[0][0] if self._samples else float("inf")

    def _lost(self, exc: BaseException) -> None:
        if self.reachable:
            log.warning("read replica unavailable, reading from the primary: %s", exc)
        self.reachable = False
        self.reason = f"replica unreachable: {exc}"

    # -- what the other parts tell it -----------------------------------------------------
    def barrier(self) -> None:
        """Something changed that every later read must see (a graph change, a DM edit, a
        replayed spool): primary only until the standby has replayed past it."""
        self._barrier_requested += 1
        self._wake.set()

    def listener_state(self, connected: bool) -> None:
        """Without the listener, other workers' writes and graph changes go unheard."""
        self.listening = connected
        if connected:
            self.barrier()  # whatever happened while it was down

    def session_announced(self, payload: str) -> None:
        """'<session_id> <lsn>' from any worker or host."""
        session_id, sep, lsn = payload.rpartition(" ")
        if not sep or not session_id:
            return
        with contextlib.suppress(ValueError):
            self._note(session_id, parse_lsn(lsn))

    def _note(self, session_id: str, lsn: int) -> None:
        if lsn > self._session_lsn.get(session_id, 0):
            self._session_lsn[session_id] = lsn

    async def wrote(self, session_id: str) -> None:
        """The session was just written on the primary: learn and announce its position
        (one statement, and only where a replica is configured)."""
        try:
            async with asyncio.timeout(self.timeout_s), self._primary.pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT pg_current_wal_lsn()::text, pg_notify(%(ch)s, %(s)s || ' ' || "
                    "pg_current_wal_lsn()::text)",
                    {"ch": SESSION_LSN_CHANNEL, "s": session_id},
                )
                row = await cur.fetchone()
        except (psycopg.Error, TimeoutError, OSError) as exc:
            log.warning("session %s: write position unknown, reading the primary: %s",
                        session_id, exc)
            self._note(session_id, UNKNOWN_LSN)
            return
        assert row is not None
        self._session_lsn[session_id] = max(parse_lsn(row[0]),
                                            self._session_lsn.get(session_id, 0))

    # -- routing --------------------------------------------------------------------------
    def refusal(self, session_id: str | None) -> str | None:
        """Why the standby may not serve a read now (None: it may)."""
        if not self.reachable:
            return "unreachable"
        if not self.listening:
            return "listener down"
        if self._barrier_resolved < self._barrier_requested or self.replay_lsn < self.barrier_lsn:
            return "graph change not replayed"
        if self.lag_s is None or self.lag_s > self.max_lag_s:
            return "lagging"
        if session_id is not None and self.replay_lsn < self._session_lsn.get(session_id, 0):
            return "session's writes not replayed"
        return None

    def route(self) -> bool:
        """True: read this one on the standby. Counts the decision."""
        why = self.refusal(reading_session())
        if why is None:
            return True
        self.reads["primary"] += 1
        self.fallbacks[why] = self.fallbacks.get(why, 0) + 1
        return False

    async def run(self, op: Op[T], *, transaction: bool = True) -> T:
        """Run a read operation on the standby. `ReplicaUnavailable` while nothing ran (the
        caller reads on the primary), `ReplicaLostError` once the operation had started."""
        started = False
        try:
            async with asyncio.timeout(self.timeout_s), self.db.pool.connection() as conn:
                started = True
                result = await drive_async(conn, op, transaction=transaction)
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as exc:
            # The statement's own limit (session search's full-text leg sets one): the
            # standby is fine, the caller handles it as on the primary.
            raise StatementTimeoutError(f"statement timed out: {exc}") from exc
        except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError) as exc:
            if isinstance(exc, psycopg.OperationalError) and not is_outage(exc):
                raise  # one statement failed; the standby answered
            self._lost(exc)
            if not started:
                self._count_fallback("unreachable")
                raise ReplicaUnavailable(str(exc)) from exc
            raise ReplicaLostError(f"the read replica went away mid-read: {exc}") from exc
        self.reads["replica"] += 1
        return result

    async def fetch_row(self, query: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """One statement on the standby; losing the standby is `ReplicaUnavailable` (one
        statement can always be re-run on the primary)."""
        try:
            async with (asyncio.timeout(self.timeout_s), self.db.pool.connection() as conn,
                        conn.cursor(row_factory=dict_row) as cur):
                await cur.execute(query, params)
                row = await cur.fetchone()
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as exc:
            raise StatementTimeoutError(f"statement timed out: {exc}") from exc
        except (psycopg.OperationalError, psycopg.InterfaceError, TimeoutError) as exc:
            if isinstance(exc, psycopg.OperationalError) and not is_outage(exc):
                raise
            self._lost(exc)
            self._count_fallback("unreachable")
            raise ReplicaUnavailable(str(exc)) from exc
        self.reads["replica"] += 1
        return row

    def _count_fallback(self, why: str) -> None:
        self.reads["primary"] += 1
        self.fallbacks[why] = self.fallbacks.get(why, 0) + 1

    def health(self) -> dict[str, Any]:
        serving = self.refusal(None)
        return {
            "configured": True,
            "serving": serving is None,
            "why_not": serving,
            "reachable": self.reachable,
            "reason": self.reason,
            "lag_s": None if self.lag_s is None else round(self.lag_s, 3),
            "lag_bytes": max(0, self.primary_lsn - self.replay_lsn) if self.reachable else None,
            "reads": dict(self.reads),
            "primary_fallbacks": dict(self.fallbacks),
        }
