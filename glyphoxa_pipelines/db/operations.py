"""One implementation, two faces: store methods are written once as generator "operations".

An operation yields `Statement`s and receives each statement's result; a runner drives it on a
connection inside one transaction. The sync runner serves the pipeline, the async runner the
realtime service, and operations compose with `yield from` into a bigger transaction (campaign
loading, session reprocessing) without duplicating any SQL.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, ParamSpec, TypeVar

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


Op = Generator[Statement, Any, Any]

P = ParamSpec("P")
T = TypeVar("T")


def fetch_all(query: Query, params: Params = None) -> Statement:
    return Statement(query, params, "all")


def fetch_one(query: Query, params: Params = None) -> Statement:
    return Statement(query, params, "one")


def execute(query: Query, params: Params = None) -> Statement:
    return Statement(query, params, "rowcount")


def execute_many(query: Query, params_seq: Sequence[Params]) -> Statement:
    return Statement(query, list(params_seq), "many")


def operation(fn: Callable[P, Op]) -> Callable[P, Any]:
    """Turn a generator method into a store method run by the store's database.

    The store's database decides the face: `Database.run` returns the value, `AsyncDatabase.run`
    returns an awaitable. The raw generator stays reachable as `.op` for composition.
    """

    @functools.wraps(fn)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.db.run(fn(self, *args, **kwargs))

    run.op = fn  # type: ignore[attr-defined]
    return run


def read_operation(fn: Callable[P, Op]) -> Callable[P, Any]:
    """`operation` for reads whose statements need no common snapshot (most are one
    statement): run without BEGIN / COMMIT, two round trips fewer. Composed with `yield from`
    into a bigger operation, they run in its transaction as usual."""

    @functools.wraps(fn)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.db.run(fn(self, *args, **kwargs), transaction=False)

    run.op = fn  # type: ignore[attr-defined]
    return run
