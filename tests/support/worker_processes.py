"""Real `uvicorn` worker processes of the realtime service, for tests and the scale bench:
each its own process and port against one database, as behind a load balancer."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def worker_processes(database_url: str, home: Path, count: int, *,
                     read_url: str | None = None, extra_env: dict[str, str] | None = None,
                     start_timeout_s: float = 120.0) -> Iterator[list[str]]:
    """`count` service processes; yields their base URLs once each answers /healthz."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "GLYPHOXA_DATABASE_URL": database_url,
           "GLYPHOXA_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "GLYPHOXA_MCP_HTTP": "0", "GLYPHOXA_SHARED_PREFETCH": "1", **(extra_env or {})}
    env.pop("GLYPHOXA_READ_DATABASE_URL", None)
    if read_url:
        env["GLYPHOXA_READ_DATABASE_URL"] = read_url
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for _ in range(count):
            port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--factory", "realtime.api.app:app_from_env",
                 "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                 "--no-access-log"],
                env=env, cwd=REPO,
            ))
            urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + start_timeout_s
        for proc, url in zip(procs, urls, strict=True):
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"worker {url} exited with {proc.returncode}")
                try:
                    if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"worker {url} did not start")
                time.sleep(0.2)
        yield urls
    finally:
        stop_processes(procs, timeout_s=15)


def stop_processes(procs: list[subprocess.Popen[bytes]], *, timeout_s: float) -> None:
    """Terminate every process, then wait for each; one that ignores SIGTERM is killed."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
