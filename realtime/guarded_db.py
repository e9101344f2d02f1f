"""The service's database behind a circuit breaker.

Once PostgreSQL stops answering, calls fail fast as "memory degraded" instead of each waiting
out a pool timeout; a background probe notices when it is back, reopens the pool and replays
the spool (writes taken while it was away) in order.

`reads_on(replica)` gives the same guarded database with its reads sent to a standby where
`realtime.read_replica` allows it: the hot context and the tools hold that face, every write
and every lookup that must see the newest row hold the primary's. Both faces share one
breaker: degraded is about the primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn, TypeVar

import psycopg
from psycopg.rows import dict_row

from glyphoxa_pipelines.db import AsyncDatabase, DatabaseUnavailableError, StatementTimeoutError
from glyphoxa_pipelines.db.errors import is_outage
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import InvalidInputError, NewEntry, NotFoundError, SessionStore
from realtime.errors import DEGRADED
from realtime.read_replica import ReplicaReads, ReplicaUnavailable
from realtime.spool import PermanentSpoolError, Spool

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(slots=True)
class _Breaker:
    """The primary's state, shared by the primary face and the read face."""

    degraded: bool = False
    since: float | None = None
    last_error: str | None = None


class GuardedDatabase:
    """An `AsyncDatabase` with a time limit per call, a degraded mark and a recovery probe."""

    def __init__(
        self,
        url: str,
        spool: Spool,
        *,
        timeout_s: float = 3.0,
        probe_interval_s: float = 0.5,
        pool_min: int = 2,
        pool_max: int = 16,
    ) -> None:
        self.url = url
        self.db = AsyncDatabase(url, min_size=pool_min, max_size=pool_max)
        self.spool = spool
        self._sessions = SessionStore(self.db)
        self.timeout_s = timeout_s
        self.probe_interval_s = probe_interval_s
        self._breaker = _Breaker()
        self._replay_lock = asyncio.Lock()
        self.replica: ReplicaReads | None = None
        # Called after the spool was replayed (the replica must not serve those sessions
        # from before the replay).
        self.after_replay: Callable[[], None] | None = None

    def reads_on(self, replica: ReplicaReads | None) -> GuardedDatabase:
        """This database with reads on `replica` where it is current enough (itself when no
        replica is configured). Only read operations may run through the returned face."""
        if replica is None:
            return self
        face = copy.copy(self)  # shares the pool, spool, breaker and replay lock
        face.replica = replica
        return face

    @property
    def degraded(self) -> bool:
        return self._breaker.degraded

    @degraded.setter
    def degraded(self, value: bool) -> None:
        self._breaker.degraded = value

    @property
    def degraded_since(self) -> float | None:
        return self._breaker.since

    @degraded_since.setter
    def degraded_since(self, value: float | None) -> None:
        self._breaker.since = value

    @property
    def last_error(self) -> str | None:
        return self._breaker.last_error

    @last_error.setter
    def last_error(self, value: str | None) -> None:
        self._breaker.last_error = value

    async def open(self) -> None:
        """Open the pool; an unreachable server starts the service degraded, not failed."""
        try:
            await self.db.open(timeout=10.0)
        except DatabaseUnavailableError as exc:
            self.mark_degraded(exc)

    async def close(self) -> None:
        await self.db.close()

    def mark_degraded(self, exc: BaseException) -> None:
        if not self.degraded:
            log.warning("PostgreSQL unreachable, serving degraded: %s", exc)
            self.degraded_since = time.monotonic()
        self.degraded = True
        self.last_error = str(exc)

    def degraded_for_s(self) -> float:
        return time.monotonic() - self.degraded_since if self.degraded_since else 0.0

    async def run(self, op: Op, *, transaction: bool = True) -> Any:
        """Run an operation; fail fast while degraded. `transaction=False` for read-only
        operations whose statements need no common snapshot (saves BEGIN and COMMIT)."""
        if self.replica is not None and self.replica.route():
            with contextlib.suppress(ReplicaUnavailable):
                return await self.replica.run(op, transaction=transaction)
        if self.degraded:
            op.close()
            raise DatabaseUnavailableError(DEGRADED)
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self.db.run(op, transaction=transaction)
        except (DatabaseUnavailableError, TimeoutError) as exc:
            self.mark_degraded(exc)
            raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc
        except (psycopg.InterfaceError, psycopg.OperationalError) as exc:
            self._classify(exc)

    async def fetch_row(self, query: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """One statement, one round trip, no explicit transaction (a single statement is its
        own snapshot): the hot path's read."""
        if self.replica is not None and self.replica.route():
            with contextlib.suppress(ReplicaUnavailable):
                return await self.replica.fetch_row(query, params)
        if self.degraded:
            raise DatabaseUnavailableError(DEGRADED)

        async def go() -> dict[str, Any] | None:
            async with self.db.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(query, params)
                return await cur.fetchone()

        return await self.within_limits(go())

    async def within_limits(self, call: Awaitable[T]) -> T:
        """One direct database call under the time limit; a timeout or a lost connection
        switches to degraded mode, a statement the server refused does not."""
        try:
            async with asyncio.timeout(self.timeout_s):
                return await call
        except TimeoutError as exc:
            self.mark_degraded(exc)
            raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc
        except (psycopg.InterfaceError, psycopg.OperationalError) as exc:
            self._classify(exc)

    def _classify(self, exc: psycopg.Error) -> NoReturn:
        """psycopg files outages and one statement's failures alike under OperationalError;
        only an outage degrades the service (`glyphoxa_pipelines.db.errors.is_outage`)."""
        if isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable):
            raise StatementTimeoutError(f"statement timed out: {exc}") from exc
        if not is_outage(exc):
            raise exc
        self.mark_degraded(exc)
        raise DatabaseUnavailableError(f"{DEGRADED} ({exc})") from exc

    async def _probe(self) -> bool:
        try:
            conn = await psycopg.AsyncConnection.connect(self.url, connect_timeout=2)
        except Exception:  # noqa: BLE001 - any failure means "still down"
            return False
        async with conn:
            await conn.execute("SELECT 1")
        return True

    async def monitor(self) -> None:
        """Bring the database back when PostgreSQL returns, then replay the spool in order.
        Runs until cancelled."""
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
                    replayed = await self.replay_spool()
                    if replayed and self.after_replay is not None:
                        self.after_replay()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the monitor must never die
                log.exception("monitor loop")

    async def replay_spool(self) -> int:
        async with self._replay_lock:
            try:
                return await self.spool.replay(self._replay_write)
            except (DatabaseUnavailableError, psycopg.Error, TimeoutError) as exc:
                self.mark_degraded(exc)
                return 0

    async def _replay_write(self, session_id: str, entries: list[dict[str, Any]]) -> None:
        new = [
            NewEntry(**{**e, "spoken_at": datetime.fromisoformat(e["spoken_at"])
                        if e.get("spoken_at") else None})
            for e in entries
        ]
        try:
            await asyncio.wait_for(
                self.db.run(SessionStore.write_entries.op(self._sessions, session_id, new)),
                self.timeout_s,
            )
        except (NotFoundError, InvalidInputError) as exc:
            raise PermanentSpoolError(str(exc)) from exc
