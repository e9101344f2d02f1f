"""Issue 11 item 11: only an outage switches the service to degraded mode. A statement the
server refused ("string is too long for tsvector", a lock wait past `lock_timeout`) is that
statement's failure, reported as such, on the real database; item 5: a far-future `spoken_at`
or a huge duration never reaches the store, so the live transcript and the session's end keep
working."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import psycopg
import pytest

from glyphoxa_pipelines.db import DatabaseUnavailableError, StatementTimeoutError
from glyphoxa_pipelines.db.operations import Op, execute, fetch_one

TOO_BIG_TSVECTOR = (
    "SELECT to_tsvector('simple', string_agg(md5(i::text), ' ')) AS v "
    "FROM generate_series(1, 40000) AS i"
)


async def test_program_limit_is_not_an_outage(rt_service: Any) -> None:
    guard = rt_service.guard
    with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="too long for tsvector"):
        await guard.fetch_row(TOO_BIG_TSVECTOR, {})
    assert not rt_service.degraded

    def op() -> Op:
        row = yield fetch_one(TOO_BIG_TSVECTOR)
        return row

    with pytest.raises(psycopg.errors.ProgramLimitExceeded):
        await guard.run(op(), transaction=False)
    assert not rt_service.degraded
    assert (await guard.fetch_row("SELECT 1 AS one", {}))["one"] == 1


async def test_lock_timeout_is_a_statement_timeout_not_an_outage(
    rt_service: Any, rt_db_url: str
) -> None:
    table = "lock_probe_" + uuid.uuid4().hex[:8]
    with psycopg.connect(rt_db_url, autocommit=True) as setup:
        setup.execute(f"CREATE TABLE {table} (x int)")
    try:
        with psycopg.connect(rt_db_url) as holder:
            holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")

            def op() -> Op:
                yield execute("SET LOCAL lock_timeout = '100ms'")
                row = yield fetch_one(f"SELECT count(*) AS n FROM {table}")
                return row

            with pytest.raises(StatementTimeoutError):
                await rt_service.guard.run(op())
            assert not rt_service.degraded
            holder.rollback()
    finally:
        with psycopg.connect(rt_db_url, autocommit=True) as setup:
            setup.execute(f"DROP TABLE {table}")


def test_outage_classes() -> None:
    from psycopg_pool import PoolTimeout

    from glyphoxa_pipelines.db.errors import is_outage

    assert is_outage(PoolTimeout("no connection"))  # no SQLSTATE: nothing answered
    assert is_outage(psycopg.InterfaceError("connection closed"))
    assert not is_outage(ValueError("x"))
    assert not is_outage(psycopg.errors.UniqueViolation("dup"))


async def test_unreachable_database_still_degrades(rt_service: Any) -> None:
    """The control: a real outage (no server on the port) does degrade, in a guard of its own."""
    from realtime.guarded_db import GuardedDatabase

    guard = GuardedDatabase("postgresql://127.0.0.1:1/none", rt_service.spool, timeout_s=1.0,
                            probe_interval_s=60, pool_min=0, pool_max=1)
    with pytest.raises(DatabaseUnavailableError):
        await guard.fetch_row("SELECT 1", {})
    assert guard.degraded


async def test_far_future_entry_and_huge_duration_change_nothing(
    rt_client: httpx.AsyncClient, rt_service: Any
) -> None:
    cid = "rt-item5-" + uuid.uuid4().hex[:6]
    assert (await rt_client.put(f"/v1/campaigns/{cid}",
                                json={"id": cid, "name": "Five"})).status_code == 200
    assert (await rt_client.post(f"/v1/campaigns/{cid}/entities", json={
        "id": "vex", "type": "npc", "name": "Vex"})).status_code == 201
    sid = f"{cid}-s"
    assert (await rt_client.post(f"/v1/campaigns/{cid}/sessions",
                                 json={"session_id": sid})).status_code == 201
    for bad in ({"spoken_at": "9999-12-31T23:59:59+00:00"}, {"duration_s": 1e30}):
        r = await rt_client.post(f"/v1/sessions/{sid}/entries",
                                 json={"idempotency_key": "bad-" + uuid.uuid4().hex[:6],
                                       "text": "the far future speaks", **bad})
        assert r.status_code == 422, r.text
    r = await rt_client.post(f"/v1/sessions/{sid}/entries",
                             json={"idempotency_key": "now", "text": "Vex, the gate is open",
                                   "duration_s": 2.5})
    assert r.status_code == 201, r.text
    ctx = await rt_client.get(f"/v1/sessions/{sid}/npcs/vex/context")
    assert ctx.status_code == 200, ctx.text
    assert [e["text"] for e in ctx.json()["recent"]] == ["Vex, the gate is open"]
    r = await rt_client.post(f"/v1/sessions/{sid}/end")
    assert r.status_code == 200, r.text
    assert not rt_service.degraded
