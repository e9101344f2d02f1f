"""One embedded PostgreSQL for the realtime tests, in a temporary GLYPHOXA_HOME, plus a seeded
campaign and an opened MemoryService. Self-contained: campaigns get unique ids, so these tests
share a server with nothing else and with each other safely.

A test that stops the database gets its own server and service (`isolated_realtime`): if it
fails half way, the shared server is still up for every other test."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from glyphoxa_pipelines.config import Settings  # noqa: E402


def _server_home(prefix: str) -> Path:
    # Not pytest's tmp_path: its parent is 0700 and, as root, pgserver runs PostgreSQL as
    # another user that must reach the data folder.
    home = Path(tempfile.mkdtemp(prefix=prefix))
    home.chmod(0o755)
    return home


def _open_service(url: str, settings: Settings, embedder: Any, home: Path) -> Any:
    from realtime.service import MemoryService

    return MemoryService(
        url, settings=settings, spool_dir=home / "spool", embedder=embedder,
        prefetch_wait_ms=500, probe_interval_s=0.2,
    )


@pytest.fixture(scope="session")
def rt_home() -> Iterator[Path]:
    home = _server_home("glyphoxa-rt-")
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def rt_settings(rt_home: Path) -> Settings:
    return Settings(home=rt_home, database_url=None)


@pytest.fixture(scope="session")
def rt_db_url(rt_settings: Settings) -> Iterator[str]:
    from glyphoxa_pipelines.db import embedded, resolve_url

    url = resolve_url(rt_settings)
    yield url
    with contextlib.suppress(Exception):
        embedded.stop(rt_settings.pgdata)


@pytest.fixture(scope="session")
def rt_embedder():  # type: ignore[no-untyped-def]
    from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder()
    emb.embed(["warm up"])
    return emb


@pytest.fixture(scope="session")
def rt_seed(rt_db_url: str, rt_embedder):  # type: ignore[no-untyped-def]
    from tests.support.realtime_seed import seed_campaign

    return seed_campaign(rt_db_url, rt_embedder, "rt-" + uuid.uuid4().hex[:8])


@pytest.fixture(scope="session")
async def rt_service(rt_db_url: str, rt_settings: Settings, rt_embedder, rt_home: Path):  # type: ignore[no-untyped-def]
    svc = _open_service(rt_db_url, rt_settings, rt_embedder, rt_home)
    await svc.open(warm_embedder=False)
    yield svc
    await svc.close()


@pytest.fixture(scope="session")
async def rt_client(rt_service) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    from realtime.api.app import create_app

    app = create_app(rt_service, mount_mcp=False, open_service=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


@dataclass
class IsolatedRealtime:
    """A server, service and client of one test's own, for tests that stop the database."""

    settings: Settings
    db_url: str
    service: Any
    client: httpx.AsyncClient


@pytest.fixture
async def isolated_realtime(rt_embedder) -> AsyncIterator[IsolatedRealtime]:  # type: ignore[no-untyped-def]
    from glyphoxa_pipelines.db import embedded, resolve_url
    from realtime.api.app import create_app

    home = _server_home("glyphoxa-rt-own-")
    settings = Settings(home=home, database_url=None)
    try:
        url = resolve_url(settings)
        svc = _open_service(url, settings, rt_embedder, home)
        await svc.open(warm_embedder=False)
        try:
            app = create_app(svc, mount_mcp=False, open_service=False)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport,
                                         base_url="http://127.0.0.1") as client:
                yield IsolatedRealtime(settings, url, svc, client)
        finally:
            await svc.close()
    finally:
        with contextlib.suppress(Exception):
            embedded.stop(settings.pgdata)
        shutil.rmtree(home, ignore_errors=True)
