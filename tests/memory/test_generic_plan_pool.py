"""`AsyncDatabase(generic_max=...)`: operations whose first statement is a `generic_plan` one
run on connections that plan generically by session setting (no SETs around the statement);
any other statement is still planned per call, there and on the main pool, before and after
a failure."""

from __future__ import annotations

import psycopg
import pytest

from glyphoxa_pipelines.db import AsyncDatabase
from glyphoxa_pipelines.db.operations import Op, fetch_all, fetch_one

MARK = "SELECT %(x)s::int + 41 AS answer /* generic plan pool test */"
MODE = "SELECT current_setting('plan_cache_mode') AS mode, pg_backend_pid() AS pid"
PLANS = ("SELECT coalesce(sum(generic_plans), 0) AS generic, coalesce(sum(custom_plans), 0)"
         " AS custom FROM pg_prepared_statements WHERE statement LIKE '%%plan pool test%%'")


def _answer_and_state(x: int) -> Op[dict]:
    """The marked statement, then what the same connection says: the mode a plain statement
    runs under, the mode a marked one runs under, and how the marked one was planned."""
    rows = yield fetch_all(MARK, {"x": x}, generic_plan=True)
    plain = yield fetch_one(MODE)
    marked = yield fetch_all(MODE, generic_plan=True)
    plans = yield fetch_one(PLANS)
    return {"answer": int(rows[0]["answer"]), "plain": plain["mode"],
            "marked": marked[0]["mode"], "pid": plain["pid"],
            "generic": int(plans["generic"]), "custom": int(plans["custom"])}


def _plain_first() -> Op[dict]:
    mode = yield fetch_one(MODE)
    return dict(mode)


def _fails() -> Op[None]:
    yield fetch_all("SELECT 1 / (%(x)s::int - 1) AS boom", {"x": 1}, generic_plan=True)


async def test_marked_operations_plan_once_on_their_pool_and_nothing_else_does(
    database_url: str,
) -> None:
    async with AsyncDatabase(database_url, min_size=1, max_size=1, generic_max=1) as adb:
        main = await adb.run(_plain_first(), transaction=False)
        states = [await adb.run(_answer_and_state(i), transaction=False) for i in range(3)]
        assert [s["answer"] for s in states] == [41, 42, 43]
        assert {s["pid"] for s in states} != {main["pid"]}  # another connection
        assert all(s["plain"] == "force_custom_plan" for s in states)
        assert all(s["marked"] == "force_generic_plan" for s in states)
        assert states[-1]["generic"] == 3 and states[-1]["custom"] == 0
        with pytest.raises(psycopg.errors.DivisionByZero):
            await adb.run(_fails(), transaction=False)
        after = await adb.run(_answer_and_state(7), transaction=False)
        assert (after["answer"], after["plain"], after["marked"]) == (48, "force_custom_plan",
                                                                      "force_generic_plan")
        assert (await adb.run(_plain_first(), transaction=False))["mode"] == "force_custom_plan"
        # In a transaction the marked statement stays on the main pool, planned per call.
        inside = await adb.run(_answer_and_state(1), transaction=True)
        assert inside["pid"] == main["pid"] and inside["marked"] == "force_custom_plan"


async def test_without_a_generic_pool_every_operation_uses_the_main_one(
    database_url: str,
) -> None:
    async with AsyncDatabase(database_url, min_size=1, max_size=1) as adb:
        assert adb.generic_pool is None and adb.pools() == [adb.pool]
        main = await adb.run(_plain_first(), transaction=False)
        state = await adb.run(_answer_and_state(2), transaction=False)
        # The one connection, the marked statement between its SETs (`Statement.generic_plan`).
        assert (state["answer"], state["pid"], state["plain"], state["generic"]) == (
            43, main["pid"], "force_custom_plan", 1)
        assert (await adb.run(_plain_first(), transaction=False))["mode"] == "force_custom_plan"
