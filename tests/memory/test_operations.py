"""The operation runners: typed results, composition, and failures classified by type."""

from __future__ import annotations

import pytest

from glyphoxa_pipelines.db import (
    AsyncDatabase,
    Database,
    DatabaseUnavailableError,
    StatementTimeoutError,
)
from glyphoxa_pipelines.db.operations import Op, fetch_one, statement_timeout_op
from glyphoxa_pipelines.memory import Campaign, CampaignStore


def _sleep_op(seconds: float) -> Op[int]:
    row = yield fetch_one("SELECT 1 AS one FROM pg_sleep(%s)", (seconds,))
    return int(row["one"])


def test_a_cancelled_statement_is_a_timeout_not_an_outage(db: Database) -> None:
    assert db.run(statement_timeout_op(_sleep_op(0), 1000)) == 1
    with pytest.raises(StatementTimeoutError) as caught:
        db.run(statement_timeout_op(_sleep_op(5), 50))
    assert not isinstance(caught.value, DatabaseUnavailableError)
    assert db.run(_sleep_op(0)) == 1  # the limit was the transaction's only


async def test_the_async_runner_classifies_the_same_way(database_url: str) -> None:
    async with AsyncDatabase(database_url, min_size=1, max_size=2) as adb:
        with pytest.raises(StatementTimeoutError):
            await adb.run(statement_timeout_op(_sleep_op(5), 50))
        assert await adb.run(_sleep_op(0)) == 1


def test_class_access_gives_the_raw_operation(db: Database, campaign_id: str) -> None:
    store = CampaignStore(db)
    op = CampaignStore.get.op(store, campaign_id)
    got = db.run(op)
    assert isinstance(got, Campaign) and got.id == campaign_id
    assert store.get(campaign_id) == got  # the bound face runs the same operation
    assert CampaignStore.get.__doc__ == CampaignStore.get.op.__doc__
