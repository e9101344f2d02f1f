"""`Statement.generic_plan`: planned once per connection, and the connection still plans every
other statement per call afterwards, whether the statement succeeded or failed."""

from __future__ import annotations

import psycopg
import pytest

from glyphoxa_pipelines.db import AsyncDatabase, Database
from glyphoxa_pipelines.db.operations import Op, fetch_all, fetch_one

MARK = "SELECT %(x)s::int + 41 AS answer /* generic plan test */"


def _answer(x: int, generic: bool = True) -> Op[int]:
    rows = yield fetch_all(MARK, {"x": x}, generic_plan=generic)
    return int(rows[0]["answer"])


def _state() -> Op[dict]:
    mode = yield fetch_one("SELECT current_setting('plan_cache_mode') AS mode")
    plans = yield fetch_one(
        "SELECT coalesce(sum(generic_plans), 0) AS generic, coalesce(sum(custom_plans), 0)"
        " AS custom FROM pg_prepared_statements WHERE statement LIKE '%%generic plan test%%'")
    return {"mode": mode["mode"], "generic": int(plans["generic"]),
            "custom": int(plans["custom"])}


def _fails() -> Op[None]:
    yield fetch_all("SELECT 1 / (%(x)s::int - 1) AS boom", {"x": 1}, generic_plan=True)


async def test_planned_once_and_the_connection_plans_per_call_again(database_url: str) -> None:
    async with AsyncDatabase(database_url, min_size=1, max_size=1) as adb:
        assert [await adb.run(_answer(i), transaction=False) for i in range(3)] == [41, 42, 43]
        state = await adb.run(_state(), transaction=False)
        assert state == {"mode": "force_custom_plan", "generic": 3, "custom": 0}
        with pytest.raises(psycopg.errors.DivisionByZero):
            await adb.run(_fails(), transaction=False)
        assert (await adb.run(_state(), transaction=False))["mode"] == "force_custom_plan"
        assert await adb.run(_answer(1), transaction=False) == 42  # the connection still works


def test_the_sync_runner_too_and_never_inside_a_transaction(database_url: str) -> None:
    with Database(database_url, min_size=1, max_size=1) as db:
        assert db.run(_answer(1)) == 42  # in a transaction: a plain statement
        assert db.run(_state(), transaction=False) == {
            "mode": "force_custom_plan", "generic": 0, "custom": 0}
        assert db.run(_answer(2), transaction=False) == 43
        state = db.run(_state(), transaction=False)
        assert state == {"mode": "force_custom_plan", "generic": 1, "custom": 0}
        with pytest.raises(psycopg.errors.DivisionByZero):
            db.run(_fails(), transaction=False)
        assert db.run(_state(), transaction=False)["mode"] == "force_custom_plan"
