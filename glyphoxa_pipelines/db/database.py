"""Connection pools and the two operation runners (sync for the pipeline, async for realtime)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import orjson
import psycopg
from pgvector.psycopg import register_vector, register_vector_async
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import embedded
from glyphoxa_pipelines.db.errors import (
    DatabaseUnavailableError,
    StatementTimeoutError,
    is_outage,
)
from glyphoxa_pipelines.db.migrations import migrate
from glyphoxa_pipelines.db.operations import Op, Statement

T = TypeVar("T")

log = logging.getLogger(__name__)

# Session settings every pooled connection gets: HNSW recall, filtered-search behaviour, and
# custom plans always: store queries carry optional filters (`%s IS NULL OR col = %s`) whose
# generic plan (chosen by PostgreSQL after five executions of a prepared statement) scans
# where the custom plan uses an index — k-NN went from ~5 ms to ~50 ms that way.
_CUSTOM_PLANS = "SET plan_cache_mode = force_custom_plan"
_SESSION_SETUP = (
    "SET hnsw.ef_search = 200; SET hnsw.iterative_scan = strict_order; "
    f"{_CUSTOM_PLANS}; SET jit = off"
)
# A `Statement.generic_plan` runs prepared between these two, pipelined: one round trip. If it
# fails, the three are one implicit transaction and its rollback undoes the first SET too, so
# the connection goes back to the pool planning per call either way.
_GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"


def _planned_once(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any],
                  st: Statement) -> bool:
    """Whether `st` runs with its cached generic plan: asked for, one statement, and outside
    an explicit transaction (where the SET would outlive the statement)."""
    return (st.generic_plan and st.mode != "many"
            and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE)


def resolve_url(settings: Settings | None = None, *, migrate_schema: bool = True) -> str:
    """The application database URL: the configured DSN, else the embedded server (started on
    demand). Creates the database and applies migrations unless told not to."""
    settings = settings or Settings.from_env()
    if settings.database_url:
        url = settings.database_url
    else:
        admin = embedded.start(settings.pgdata)
        embedded.ensure_database(admin, settings.database_name)
        url = embedded.with_database(admin, settings.database_name)
    if migrate_schema:
        migrate(url)
    return url


def _execute_sync(cur: psycopg.Cursor[Any], st: Statement) -> Any:
    if st.mode == "many":
        cur.executemany(st.query, st.params)
        return cur.rowcount
    if _planned_once(cur.connection, st):
        with cur.connection.pipeline():
            cur.connection.execute(_GENERIC_PLANS)
            cur.execute(st.query, st.params, prepare=True)
            cur.connection.execute(_CUSTOM_PLANS)
    else:
        cur.execute(st.query, st.params)
    if st.mode == "all":
        return cur.fetchall()
    if st.mode == "one":
        return cur.fetchone()
    return cur.rowcount


async def _execute_async(cur: psycopg.AsyncCursor[Any], st: Statement) -> Any:
    if st.mode == "many":
        await cur.executemany(st.query, st.params)
        return cur.rowcount
    if _planned_once(cur.connection, st):
        async with cur.connection.pipeline():
            await cur.connection.execute(_GENERIC_PLANS)
            await cur.execute(st.query, st.params, prepare=True)
            await cur.connection.execute(_CUSTOM_PLANS)
    else:
        await cur.execute(st.query, st.params)
    if st.mode == "all":
        return await cur.fetchall()
    if st.mode == "one":
        return await cur.fetchone()
    return cur.rowcount


def drive_sync(conn: psycopg.Connection[Any], op: Op[T], *, transaction: bool = True) -> T:
    """Run an operation on `conn` in one transaction (or, with `transaction=False`, each
    statement on its own: the pool's connections are autocommit). Database errors are thrown
    into the operation at its `yield`, so it can turn them into domain errors."""
    scope = conn.transaction() if transaction else contextlib.nullcontext()
    with scope, conn.cursor(row_factory=dict_row) as cur:
        try:
            st = next(op)
            while True:
                try:
                    result = _execute_sync(cur, st)
                except psycopg.Error as exc:
                    st = op.throw(exc)
                    continue
                st = op.send(result)
        except StopIteration as done:
            return done.value


async def drive_async(
    conn: psycopg.AsyncConnection[Any], op: Op[T], *, transaction: bool = True
) -> T:
    """As `drive_sync`. `transaction=False` runs each statement on its own (the pool's
    connections are autocommit): for read-only operations on the voice path, where BEGIN and
    COMMIT would be two of four round trips."""
    scope = conn.transaction() if transaction else contextlib.nullcontext()
    async with scope, conn.cursor(row_factory=dict_row) as cur:
        try:
            st = next(op)
            while True:
                try:
                    result = await _execute_async(cur, st)
                except psycopg.Error as exc:
                    st = op.throw(exc)
                    continue
                st = op.send(result)
        except StopIteration as done:
            return done.value


def _configure_sync(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)
    set_json_loads(orjson.loads, conn)
    conn.execute(_SESSION_SETUP)


async def _configure_async(conn: psycopg.AsyncConnection[Any]) -> None:
    await register_vector_async(conn)
    # jsonb arrives as text; orjson parses the hot context's rows ~4x faster than json.
    set_json_loads(orjson.loads, conn)
    await conn.execute(_SESSION_SETUP)


class Database:
    """Synchronous face: a psycopg_pool.ConnectionPool running operations."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        self.url = url
        self.pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=_configure_sync,
            open=False,
            name="glyphoxa",
        )

    def open(self, timeout: float = 15.0) -> Database:
        """Open the pool and prove the server answers (even with min_size=0)."""
        try:
            self.pool.open(wait=True, timeout=timeout)
            with self.pool.connection(timeout=timeout) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError as exc:  # includes psycopg_pool.PoolTimeout
            self.pool.close()
            raise DatabaseUnavailableError(f"PostgreSQL is unreachable: {exc}") from exc
        return self

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Database:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self.pool.connection() as conn:
            yield conn

    def run(self, op: Op[T], *, transaction: bool = True) -> T:
        """Drive `op` on a pooled connection and return its result. A cancelled statement is
        `StatementTimeoutError`; any other operational failure `DatabaseUnavailableError`."""
        try:
            with self.pool.connection() as conn:
                return drive_sync(conn, op, transaction=transaction)
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as exc:
            raise StatementTimeoutError(f"statement timed out: {exc}") from exc
        except psycopg.OperationalError as exc:
            if not is_outage(exc):
                raise  # one statement failed; the server answered
            raise DatabaseUnavailableError(f"PostgreSQL is unreachable: {exc}") from exc


class AsyncDatabase:
    """Asynchronous face for the realtime service: the same operations on an async pool."""

    def __init__(self, url: str, *, min_size: int = 2, max_size: int = 16) -> None:
        self.url = url
        self.pool = AsyncConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            configure=_configure_async,
            open=False,
            name="glyphoxa-async",
            timeout=5.0,
        )

    async def open(self, timeout: float = 15.0) -> AsyncDatabase:
        try:
            await self.pool.open(wait=True, timeout=timeout)
            async with self.pool.connection(timeout=timeout) as conn:
                await conn.execute("SELECT 1")
        except psycopg.OperationalError as exc:  # includes psycopg_pool.PoolTimeout
            await self.pool.close()
            raise DatabaseUnavailableError(f"PostgreSQL is unreachable: {exc}") from exc
        return self

    async def close(self) -> None:
        await self.pool.close()

    async def __aenter__(self) -> AsyncDatabase:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run(self, op: Op[T], *, transaction: bool = True) -> T:
        """As `Database.run`, awaited: the same classification of failures."""
        try:
            async with self.pool.connection() as conn:
                return await drive_async(conn, op, transaction=transaction)
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable) as exc:
            raise StatementTimeoutError(f"statement timed out: {exc}") from exc
        except psycopg.OperationalError as exc:
            if not is_outage(exc):
                raise  # one statement failed; the server answered
            raise DatabaseUnavailableError(f"PostgreSQL is unreachable: {exc}") from exc


@contextmanager
def open_database(settings: Settings | None = None, **pool_kwargs: Any) -> Iterator[Database]:
    """Resolve (start/migrate) the database and yield an open sync `Database`."""
    db = Database(resolve_url(settings), **pool_kwargs).open()
    try:
        yield db
    finally:
        db.close()
