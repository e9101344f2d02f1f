"""One embedded PostgreSQL for the whole test run, in a temporary GLYPHOXA_HOME.

The environment is set at import time so every test, and every CLI subprocess a test starts,
talks to the same throwaway server; tests isolate themselves by campaign id (or, for
migration tests, by database).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.openai_stub import OpenAIStub

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
_HOME = Path(tempfile.mkdtemp(prefix="glyphoxa-test-"))
os.environ["GLYPHOXA_HOME"] = str(_HOME)

SHARED_DATA = Path(
    os.environ.get("GLYPHOXA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


# Fixtures that load the embedding model, run Dagster or seed a campaign through the model:
# every test using one (directly or through another fixture) is `slow`, so a new test gets the
# mark by what it uses. Tests slow for other reasons carry `@pytest.mark.slow` themselves.
SLOW_FIXTURES = frozenset({"rt_embedder", "pipeline_services", "dagster_instance"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from glyphoxa_pipelines.db import embedded

    # A server that will not stop must not raise here: pytest would then drop its report of
    # the failures that most likely caused it.
    try:
        embedded.stop(_HOME / "pgdata")
    except embedded.EmbeddedServerError as exc:
        print(f"\nembedded PostgreSQL: {exc}")
    finally:
        shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def glyphoxa_home() -> Path:
    return _HOME


@pytest.fixture(scope="session")
def database_url() -> str:
    from glyphoxa_pipelines.db import resolve_url

    return resolve_url()


@pytest.fixture(scope="session")
def db(database_url: str) -> Iterator[object]:
    from glyphoxa_pipelines.db import Database

    database = Database(database_url, max_size=8).open()
    yield database
    database.close()


@pytest.fixture
def campaign_id(db: object) -> str:
    """A fresh campaign for one test: unique id, so tests never see each other's rows."""
    from glyphoxa_pipelines.memory import Campaign, CampaignStore

    cid = "t-" + uuid.uuid4().hex[:12]
    CampaignStore(db).upsert(Campaign(cid, f"Test campaign {cid}"))
    return cid


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"evaluation data not found at {SHARED_DATA} (set GLYPHOXA_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A fresh OpenAI-compatible server on 127.0.0.1 for one test."""
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.close()
