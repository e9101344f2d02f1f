"""The dashboard's fixtures: a seeded campaign, the service behind an in-process client, and,
for the browser tests, the real service on a real port with Debian's chromium driving it.

Browser tests carry the `browser` marker (and `slow`, so `make test-fast` skips them); they
skip, saying why, only when no chromium is installed. A failed browser test leaves a
screenshot under `test-artifacts/dashboard/` (GLYPHOXA_TEST_ARTIFACTS overrides the folder).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import uuid
import wave
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    KnowledgeGraph,
    Recap,
    RecapStore,
    Relationship,
    SessionStore,
    SessionSummary,
    SummaryStore,
)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("GLYPHOXA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("GLYPHOXA_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "dashboard"
T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
TOKEN = "dash-test-token-" + uuid.uuid4().hex[:8]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@dataclass
class Seed:
    campaign_id: str
    ended: str
    live: str
    pending_fact: int
    hidden_fact: int
    secret_fact: int
    public_fact: int
    audio: Path
    ids: dict[str, str] = field(default_factory=dict)


def write_wav(path: Path, seconds: float = 0.5) -> None:
    """A real (silent) WAV, so the browser's decoder accepts it."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * int(8000 * seconds))


def seed_dashboard(url: str, folder: Path) -> Seed:
    """A campaign with three NPCs, a place, an item; one pending, one hidden, one secret and
    one public fact; an ended session with a summary and a recap with audio, and a live one."""
    cid = "dash-" + uuid.uuid4().hex[:10]
    audio = folder / f"{cid}-recap.wav"
    write_wav(audio)
    with Database(url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, f"Dashboard {cid}", "The Sunblade affair"))
        kg = KnowledgeGraph(db)
        for eid, etype, name, aliases in (
            ("thaldrin", "npc", "Thaldrin Ashvale", ["Thal"]),
            ("mirela", "npc", "Mirela Quickfingers", []),
            ("borga", "npc", "Borga", []),
            ("smith", "npc", "The Smith", ["Old Smith"]),
            ("tankard", "place", "Gilded Tankard", []),
            ("sunblade", "item", "Sunblade", []),
        ):
            kg.add_entity(Entity(cid, eid, etype, name, aliases,
                                 {"role": "smith"} if eid == "thaldrin" else {}))
        log = SessionStore(db)
        ended = log.start_session(cid, f"{cid}-s1", title="Night 1", started_at=T0,
                                  status="ended").id
        live = log.start_session(cid, f"{cid}-s2", title="Night 2",
                                 started_at=T0 + timedelta(days=7)).id

        def fact(src: str, rel: str, dst: str, **kw: Any) -> int:
            r = kg.add_relationship(Relationship(cid, src, dst, rel, session_id=ended, **kw))
            assert r.id is not None
            return r.id

        public = fact("thaldrin", "works_at", "tankard")
        pending = fact("thaldrin", "owes_debt_to", "borga", status="pending", confidence=0.4,
                       provenance="extracted", evidence="Thaldrin owes Borga thirty gold.")
        hidden = fact("mirela", "stole", "sunblade", visibility="hidden")
        secret = fact("borga", "distrusts", "mirela", visibility="secret")
        fact("smith", "works_at", "tankard")
        SummaryStore(db).save(SessionSummary(ended, cid, "The party met Thaldrin at the inn.",
                                             ["Thaldrin owes Borga"], "test"))
        RecapStore(db).save(Recap(ended, cid, "Previously: the Sunblade vanished.",
                                  str(audio), "test"))
    return Seed(cid, ended, live, pending, hidden, secret, public, audio)


@pytest.fixture
def seed(database_url: str, tmp_path: Path) -> Seed:
    tmp_path.chmod(0o755)
    return seed_dashboard(database_url, tmp_path)


def make_service(url: str, home: Path) -> Any:
    from realtime.service import MemoryService

    return MemoryService(url, settings=Settings.from_env(), spool_dir=home / "spool",
                         probe_interval_s=0.2)


@pytest.fixture(scope="session")
async def dash_service(database_url: str, tmp_path_factory: pytest.TempPathFactory
                       ) -> AsyncIterator[Any]:
    svc = make_service(database_url, tmp_path_factory.mktemp("dash-svc"))
    await svc.open(warm_embedder=False)
    yield svc
    await svc.close()


def client_for(svc: Any, token: str | None = None) -> httpx.AsyncClient:
    from realtime.api.app import create_app

    app = create_app(svc, mount_mcp=False, open_service=False, token=token)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://127.0.0.1")


@pytest.fixture
async def client(dash_service: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(dash_service) as c:
        yield c


# ----------------------------------------------------------------------------- browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RECORDER = """import sys, pathlib
pathlib.Path(sys.argv[1]).write_text(" ".join(sys.argv[2:]))
print("backfill recorded: " + " ".join(sys.argv[2:]))
"""


@dataclass
class LiveServer:
    url: str
    reprocess_log: Path


@pytest.fixture(scope="session")
def live_server(database_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[LiveServer]:
    """The app, with its service, on a real port in a thread of its own (its own event loop,
    as under `glyphoxa serve`). The reprocess button runs a recorder in place of `glyphoxa`
    (the Dagster launch itself is the CLI's, tested with it)."""
    import uvicorn

    from realtime.api.app import create_app
    from realtime.dashboard import Reprocessor

    home = tmp_path_factory.mktemp("dash-live")
    recorder = home / "recorder.py"
    recorder.write_text(RECORDER)
    log = home / "reprocess.log"
    port = _free_port()
    state: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        svc = make_service(database_url, home)
        await svc.open(warm_embedder=False)
        try:
            app = create_app(svc, mount_mcp=False, open_service=False)
            app.state.reprocessor = Reprocessor([sys.executable, str(recorder), str(log)])
            server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                                   log_level="warning"))
            state["server"] = server
            task = asyncio.create_task(server.serve())
            while not server.started and not task.done():
                await asyncio.sleep(0.05)
            ready.set()
            await task
        finally:
            ready.set()
            await svc.close()

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    assert ready.wait(60) and "server" in state and state["server"].started, "no live server"
    yield LiveServer(f"http://127.0.0.1:{port}", log)
    state["server"].should_exit = True
    thread.join(30)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"no chromium at {CHROMIUM}: install Debian's (`apt-get install -y "
                    "chromium`, as .ci/run does) to run the dashboard's browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                               args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context()
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.on("dialog", lambda d: d.accept())  # hx-confirm: the DM says yes
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
