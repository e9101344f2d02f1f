"""On-disk spool for L1 writes while PostgreSQL is unreachable: nothing said is lost.

Records are JSON lines appended (and fsynced) to a file the process holds an exclusive lock
on; a byte offset file remembers how far replay got. Replay writes records in file order through
the idempotent entry writer, so a crash between writing and advancing the offset replays a
record again and it still lands exactly once (same idempotency keys).

Replay stops at a transient failure (the database went away again: `TRANSIENT_ERRORS`) and
resumes there later. Any other failure is the record's own (its session was deleted, a value
the database refuses): waiting would wedge the queue for good, so the record moves to the
dead-letter file (`dead_letters`) with the error, is counted, and replay goes on.

A crash mid-append leaves a torn last line. Every append therefore starts on a fresh line (if
the file does not end in a newline, one is written first), so the next acknowledged record is
never glued to the fragment; the fragment itself is a line that does not parse, and goes to
the dead letters with its raw text rather than being skipped.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from glyphoxa_pipelines.db import DatabaseUnavailableError
from realtime.dead_letters import DeadLetterFile

log = logging.getLogger(__name__)

Writer = Callable[[str, list[dict[str, Any]]], Awaitable[Any]]

# Failures that say "the database is away", not "this record is bad": replay stops and waits.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    DatabaseUnavailableError,
    TimeoutError,
    OSError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


class PermanentSpoolError(Exception):
    """A record the database will never accept (e.g. unknown session): dead-letter it."""


class Spool:
    def __init__(self, directory: Path, name: str = "realtime") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._lock_fd: int | None = None
        self.path = self._claim(name)
        self.offset_path = self.path.with_suffix(".offset")
        self.dead_path = self.path.with_suffix(".dead")
        self.dead_letters = DeadLetterFile(self.dead_path)
        self._adopt_orphans(name)
        if self.path.exists():
            with self.path.open("a+b") as fh:  # a crash tore the last append: end that line
                self._start_line(fh)
        self._depth = self._count_pending()
        self.replayed = 0

    def _claim(self, name: str) -> Path:
        """Our own file, locked against other processes (a second replica gets another)."""
        for candidate in (name, f"{name}-{os.getpid()}"):
            path = self.directory / f"{candidate}.jsonl"
            fd = os.open(self.directory / f"{candidate}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._lock_fd = fd
            return path
        raise RuntimeError(f"could not lock a spool file in {self.directory}")

    def _adopt_orphans(self, name: str) -> None:
        """Take over what another process (a worker that died) left in its own spool file:
        its pending records move to the end of ours, so they are replayed too."""
        for other in sorted(self.directory.glob(f"{name}-*.jsonl")):
            if other == self.path:
                continue
            fd = os.open(other.with_suffix(".lock"), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # alive: its owner replays it
            try:
                offset_file = other.with_suffix(".offset")
                offset = int(offset_file.read_text() or 0) if offset_file.exists() else 0
                with other.open("rb") as src, self.path.open("a+b") as dst:
                    src.seek(offset)
                    self._start_line(dst)
                    dst.write(src.read())  # a torn last line too: replay dead-letters it
                    self._start_line(dst)
                    dst.flush()
                    os.fsync(dst.fileno())
                other.unlink()
                offset_file.unlink(missing_ok=True)
                log.warning("spool: adopted pending records of %s", other.name)
            finally:
                os.close(fd)

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- state --------------------------------------------------------------------------
    def _offset(self) -> int:
        try:
            return int(self.offset_path.read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def _set_offset(self, offset: int) -> None:
        tmp = self.offset_path.with_suffix(".offset.tmp")
        tmp.write_text(str(offset))
        os.replace(tmp, self.offset_path)

    def _read_pending(self) -> list[tuple[int, dict[str, Any] | bytes]]:
        """(end offset, record) of every complete line after the replay offset; a line that
        is not a record comes as its raw bytes."""
        if not self.path.exists():
            return []
        out: list[tuple[int, dict[str, Any] | bytes]] = []
        with self.path.open("rb") as fh:
            fh.seek(self._offset())
            pos = fh.tell()
            for line in fh:
                if not line.endswith(b"\n"):
                    # Not finished yet (or torn by a crash): the next append starts a fresh
                    # line after it, and then it is dead-lettered like any unreadable line.
                    break
                pos += len(line)
                out.append((pos, _parse(line)))
        return out

    def _count_pending(self) -> int:
        # An unreadable line counts as one: it must pass through replay to be dead-lettered.
        return sum(len(rec["entries"]) if isinstance(rec, dict) else 1
                   for _, rec in self._read_pending())

    @property
    def dead_count(self) -> int:
        """Records moved to the dead-letter file (and not yet retried or dropped)."""
        return self.dead_letters.count

    @property
    def depth(self) -> int:
        """Entries waiting to be replayed."""
        return self._depth

    # -- writes -------------------------------------------------------------------------
    def append(self, session_id: str, entries: list[dict[str, Any]], **meta: Any) -> None:
        line = json.dumps({"session_id": session_id, "entries": entries, **meta}, default=str)
        with self._lock, self.path.open("a+b") as fh:
            if self._start_line(fh):
                self._depth += 1  # the fragment is now an unreadable line waiting for replay
            fh.write(line.encode() + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            self._depth += len(entries)

    @staticmethod
    def _start_line(fh: Any) -> bool:
        """Terminate a torn last line, so what follows starts a line of its own. True when
        there was one."""
        if line_ended(fh):
            return False
        fh.write(b"\n")
        return True

    # -- replay -------------------------------------------------------------------------
    async def replay(self, write: Writer) -> int:
        """Write pending records in order; stops at the first transient failure (the database
        went away again) and leaves the rest for the next try; dead-letters a record that
        fails otherwise, and goes on. Returns entries written (not those dead-lettered)."""
        done = 0
        for end, record in self._read_pending():
            if isinstance(record, bytes):
                log.error("spool: dead-lettering an unreadable line (a torn write?)")
                self.dead_letters.add("unreadable spool line (a write torn by a crash?)",
                                      raw=record)
                self._set_offset(end)
                with self._lock:
                    self._depth = max(0, self._depth - 1)
                continue
            entries = record["entries"]
            try:
                await write(record["session_id"], entries)
            except TRANSIENT_ERRORS:
                raise
            except Exception as exc:  # noqa: BLE001 - the record's own fault: set it aside
                reason = str(exc) if isinstance(exc, PermanentSpoolError) else (
                    f"{type(exc).__name__}: {exc}")
                log.error("spool: dead-lettering a record for %s: %s", record["session_id"],
                          reason)
                self.dead_letters.add(reason, record=record)
            else:
                done += len(entries)
            self._set_offset(end)
            with self._lock:
                self._depth = max(0, self._depth - len(entries))
        self.replayed += done
        with self._lock:
            if self.path.exists() and self._offset() >= self.path.stat().st_size:
                self.path.unlink()
                self.offset_path.unlink(missing_ok=True)
                self._depth = 0
        return done


def line_ended(fh: Any) -> bool:
    """Whether the file open in `fh` (binary, readable) is empty or ends with a newline."""
    fh.seek(0, os.SEEK_END)
    if fh.tell() == 0:
        return True
    fh.seek(-1, os.SEEK_END)
    ended = fh.read(1) == b"\n"
    fh.seek(0, os.SEEK_END)
    return ended


def _parse(line: bytes) -> dict[str, Any] | bytes:
    """A spool record, or the raw line when it is not one."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return line.rstrip(b"\n")
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("session_id"), str)
        or not isinstance(record.get("entries"), list)
    ):
        return line.rstrip(b"\n")
    return record
