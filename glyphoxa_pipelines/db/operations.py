"""One implementation, two faces: store methods are written once as generator "operations".

An operation yields `Statement`s and receives each statement's result; a runner drives it on a
connection inside one transaction. The sync runner serves the pipeline, the async runner the
realtime service, and operations compose with `yield from` into a bigger transaction (campaign
loading, session reprocessing) without duplicating any SQL.

`Op[T]` is an operation whose result is a `T` (psycopg's `PQGen[RV]` idea): `Database.run`
returns that `T`, `AsyncDatabase.run` an awaitable of it, and `yield from` hands it to the
enclosing operation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar, overload

from psycopg import sql

Query = str | sql.Composed | sql.SQL
Params = Sequence[Any] | Mapping[str, Any] | None
Mode = Literal["all", "one", "none", "many", "rowcount"]


@dataclass(frozen=True, slots=True)
class Statement:
    """A parameterized statement and how to collect its result.

    all: list of dict rows; one: a dict row or None; none / rowcount: affected rows;
    many: executemany over `params` (a sequence of parameter sets), returns affected rows.
    """

    query: Query
    params: Any = None
    mode: Mode = "all"
    # True: planned once per connection and the plan reused (a prepared statement under
    # `plan_cache_mode = force_generic_plan`, for this statement only; the runners). For
    # statements whose best plan does not depend on their parameters' values: the pool plans
    # every other statement per call (`database._SESSION_SETUP`).
    generic_plan: bool = False


T = TypeVar("T")
S = TypeVar("S")
P = ParamSpec("P")

# A generic alias: `Op[int]` is an operation returning an int; a bare `Op` is `Op[Any]`.
Op = Generator[Statement, Any, T]


def fetch_all(query: Query, params: Params = None, *, generic_plan: bool = False) -> Statement:
    return Statement(query, params, "all", generic_plan)


def fetch_one(query: Query, params: Params = None) -> Statement:
    return Statement(query, params, "one")


def execute(query: Query, params: Params = None) -> Statement:
    return Statement(query, params, "rowcount")


def execute_many(query: Query, params_seq: Sequence[Params]) -> Statement:
    return Statement(query, list(params_seq), "many")


class StoreOperation(Generic[S, P, T]):
    """A store method written as an operation, run by its store's database when called.

    On an instance, `store.method(...)` runs the operation on `store.db`: the database decides
    the face (`Database.run` returns the value, `AsyncDatabase.run` an awaitable), which is why
    that call is typed `Any`. On the class, `Store.method` is this descriptor, and
    `Store.method.op(store, ...)` is the raw generator, typed `Op[T]`, for composition with
    `yield from` or for `db.run(...)` (typed `T`).
    """

    def __init__(self, fn: Callable[Concatenate[S, P], Op[T]], *, transaction: bool) -> None:
        self.op: Callable[Concatenate[S, P], Op[T]] = fn
        self.transaction = transaction
        functools.update_wrapper(self, fn)

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> StoreOperation[S, P, T]: ...

    @overload
    def __get__(self, obj: S, owner: type | None = None) -> Callable[P, Any]: ...

    def __get__(self, obj: S | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self._run, obj)

    def _run(self, store: Any, /, *args: Any, **kwargs: Any) -> Any:
        return store.db.run(self.op(store, *args, **kwargs), transaction=self.transaction)


def operation(fn: Callable[Concatenate[S, P], Op[T]]) -> StoreOperation[S, P, T]:
    """Turn a generator method into a store method run by the store's database, in one
    transaction. The raw generator stays reachable as `.op` for composition."""
    return StoreOperation(fn, transaction=True)


def read_operation(fn: Callable[Concatenate[S, P], Op[T]]) -> StoreOperation[S, P, T]:
    """`operation` for reads whose statements need no common snapshot (most are one
    statement): run without BEGIN / COMMIT, two round trips fewer. Composed with `yield from`
    into a bigger operation, they run in its transaction as usual."""
    return StoreOperation(fn, transaction=False)


def statement_timeout_op(op: Op[T], timeout_ms: int) -> Op[T]:
    """Run `op` under a statement time limit for this transaction only, so a slow query (the
    full-text half of a hybrid search) fails fast instead of holding the voice turn; the
    runners raise `StatementTimeoutError` when the limit cancels a statement."""
    yield fetch_one("SELECT set_config('statement_timeout', %s, true)", (str(int(timeout_ms)),))
    return (yield from op)
