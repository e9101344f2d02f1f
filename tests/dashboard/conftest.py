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
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.dashboard.dashboard_support import (
    TOKEN,
    LiveServer,
    Seed,
    client_for,
    make_service,
    seed_dashboard,
)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("GLYPHOXA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("GLYPHOXA_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "dashboard"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture
def seed(database_url: str, tmp_path: Path) -> Seed:
    tmp_path.chmod(0o755)
    return seed_dashboard(database_url, tmp_path)


@pytest.fixture(scope="session")
async def dash_service(database_url: str, tmp_path_factory: pytest.TempPathFactory
                       ) -> AsyncIterator[Any]:
    svc = make_service(database_url, tmp_path_factory.mktemp("dash-svc"))
    await svc.open(warm_embedder=False)
    yield svc
    await svc.close()


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


@pytest.fixture(scope="session")
def live_server(database_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[LiveServer]:
    """The app, with its service, on a real port in a thread of its own (its own event loop,
    as under `glyphoxa serve`), with a token, as when it listens beyond loopback: the browser
    logs in. The reprocess button runs a recorder in place of `glyphoxa` (the Dagster launch
    itself is the CLI's, tested with it)."""
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
            app = create_app(svc, mount_mcp=False, open_service=False, token=TOKEN)
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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped: Playwright's sync API keeps an event loop running in this thread while
    it is open, which the async tests of later modules could not start theirs beside."""
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
def anonymous_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context (no cookies), not logged in."""
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


@pytest.fixture
def page(anonymous_page: Any, live_server: LiveServer) -> Any:
    """A browser logged in to the dashboard through its login form."""
    anonymous_page.goto(f"{live_server.url}/dashboard/login")
    anonymous_page.get_by_label("Token").fill(TOKEN)
    anonymous_page.get_by_role("button", name="Log in").click()
    anonymous_page.wait_for_url(f"{live_server.url}/dashboard/")
    return anonymous_page
