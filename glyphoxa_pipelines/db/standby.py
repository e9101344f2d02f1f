"""A hot standby of the embedded server, built from the embedded server's own binaries.

Production replicas are a managed PostgreSQL's business; this is for the tests and the scale
bench, which must exercise real streaming replication on one machine: `pg_basebackup -R`
copies the primary's data folder and writes the recovery settings, a physical replication
slot keeps the WAL the standby has not replayed yet, and the standby listens on its own socket
folder and port so both servers run side by side. As root, pgserver runs PostgreSQL as its
"pgserver" user, so every binary runs as that user too.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import psycopg

from glyphoxa_pipelines.db.embedded import server_user

# A standby's socket lives in its data folder; a Unix socket path is at most 107 bytes.
_MAX_SOCKET_PATH = 100


class StandbyError(RuntimeError):
    """The standby could not be built, started or stopped."""


def _bin(name: str) -> str:
    import pgserver

    from glyphoxa_pipelines.db.embedded import quiet_platformdirs

    quiet_platformdirs()
    return str(Path(pgserver.__file__).parent / "pginstall" / "bin" / name)


def _run(args: list[str], *, timeout: float = 120.0) -> str:
    try:
        done = subprocess.run(args, check=True, capture_output=True, text=True,
                              user=server_user(), timeout=timeout, cwd="/")
    except subprocess.CalledProcessError as exc:
        raise StandbyError(f"{Path(args[0]).name} failed: {exc.stderr.strip() or exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise StandbyError(f"{Path(args[0]).name} did not finish in {timeout} s") from exc
    return done.stdout


def slot_name(standby_pgdata: Path) -> str:
    """One replication slot per standby folder (slot names are [a-z0-9_], at most 63)."""
    digest = hashlib.sha256(str(standby_pgdata.resolve()).encode()).hexdigest()[:12]
    return f"glyphoxa_standby_{digest}"


def standby_url(standby_pgdata: Path, port: int, database: str = "postgres") -> str:
    return psycopg.conninfo.make_conninfo(
        host=str(standby_pgdata.resolve()), port=str(port), user="postgres", dbname=database
    )


def start_standby(primary_url: str, standby_pgdata: Path, *, port: int = 5433) -> str:
    """Build (once) and start a hot standby of the server at `primary_url` in
    `standby_pgdata`; return its admin URL (database `postgres`). The primary must allow
    local replication connections, as initdb's default pg_hba.conf does."""
    standby_pgdata = standby_pgdata.resolve()
    if len(str(standby_pgdata / f".s.PGSQL.{port}")) > _MAX_SOCKET_PATH:
        raise StandbyError(f"{standby_pgdata} is too long a path for the standby's socket")
    primary = psycopg.conninfo.conninfo_to_dict(primary_url)
    if not (standby_pgdata / "PG_VERSION").exists():
        _base_backup(primary, standby_pgdata)
    if not is_running(standby_pgdata):
        _run([_bin("pg_ctl"), "-D", str(standby_pgdata), "-w", "-t", "60",
              "-l", str(standby_pgdata / "log"),
              "-o", f"-h '' -k {standby_pgdata} -p {port}", "start"])
    return standby_url(standby_pgdata, port)


def _base_backup(primary: dict[str, object], standby_pgdata: Path) -> None:
    if standby_pgdata.exists() and any(standby_pgdata.iterdir()):
        raise StandbyError(f"{standby_pgdata} holds something that is not a standby")
    standby_pgdata.mkdir(parents=True, exist_ok=True)
    standby_pgdata.chmod(0o700)
    if (user := server_user()) is not None:
        shutil.chown(standby_pgdata, user, user)
    args = [_bin("pg_basebackup"), "-D", str(standby_pgdata), "-R", "-X", "stream",
            "-c", "fast", "-C", "-S", slot_name(standby_pgdata), "-U", "postgres"]
    if primary.get("host"):
        args += ["-h", str(primary["host"])]
    if primary.get("port"):
        args += ["-p", str(primary["port"])]
    _run(args)


def is_running(pgdata: Path) -> bool:
    if not (pgdata / "postmaster.pid").exists():
        return False
    done = subprocess.run([_bin("pg_ctl"), "-D", str(pgdata), "status"], capture_output=True,
                          user=server_user(), cwd="/", check=False)
    return done.returncode == 0


def stop_standby(standby_pgdata: Path, *, mode: str = "fast") -> bool:
    """Stop the standby if it runs ("immediate" simulates losing it); True when it ran."""
    if not is_running(standby_pgdata):
        return False
    _run([_bin("pg_ctl"), "-D", str(standby_pgdata), "-w", "-m", mode, "stop"])
    return True


def drop_standby(primary_url: str, standby_pgdata: Path) -> None:
    """Stop the standby, drop its replication slot on the primary (a slot nobody reads keeps
    WAL forever) and delete its folder."""
    stop_standby(standby_pgdata, mode="immediate")
    with psycopg.connect(primary_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
            "WHERE slot_name = %s AND NOT active", (slot_name(standby_pgdata),)
        )
    shutil.rmtree(standby_pgdata, ignore_errors=True)
