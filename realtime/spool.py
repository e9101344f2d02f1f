"""On-disk spool for L1 writes while PostgreSQL is unreachable: nothing said is lost.

Records are JSON lines appended (and fsynced) to a file the process holds an exclusive lock
on; a byte offset file remembers how far replay got. Replay writes records in file order through
the idempotent entry writer, so a crash between writing and advancing the offset replays a
record again and it still lands exactly once (same idempotency keys). Records that can never
land (their session was deleted) move to a dead-letter file instead of blocking the queue.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Writer = Callable[[str, list[dict[str, Any]]], Awaitable[Any]]


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
        self._adopt_orphans(name)
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
                with other.open("rb") as src, self.path.open("ab") as dst:
                    src.seek(offset)
                    for line in src:
                        if line.endswith(b"\n"):
                            dst.write(line)
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

    def _read_pending(self) -> list[tuple[int, dict[str, Any]]]:
        """(end offset, record) of every complete line after the replay offset."""
        if not self.path.exists():
            return []
        out = []
        with self.path.open("rb") as fh:
            fh.seek(self._offset())
            pos = fh.tell()
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # a torn final write: ignored until completed (never, after a crash)
                pos += len(line)
                with contextlib.suppress(json.JSONDecodeError):
                    out.append((pos, json.loads(line)))
        return out

    def _count_pending(self) -> int:
        return sum(len(rec.get("entries", [])) for _, rec in self._read_pending())

    @property
    def depth(self) -> int:
        """Entries waiting to be replayed."""
        return self._depth

    # -- writes -------------------------------------------------------------------------
    def append(self, session_id: str, entries: list[dict[str, Any]], **meta: Any) -> None:
        line = json.dumps({"session_id": session_id, "entries": entries, **meta}, default=str)
        with self._lock, self.path.open("ab") as fh:
            fh.write(line.encode() + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            self._depth += len(entries)

    # -- replay -------------------------------------------------------------------------
    async def replay(self, write: Writer) -> int:
        """Write pending records in order; stops at the first failure (the database went
        away again) and leaves the rest for the next try. Returns entries replayed."""
        done = 0
        for end, record in self._read_pending():
            entries = record.get("entries", [])
            try:
                await write(record["session_id"], entries)
            except PermanentSpoolError as exc:
                log.error("spool: dead-lettering a record for %s: %s", record["session_id"], exc)
                with self.dead_path.open("a") as fh:
                    fh.write(json.dumps({**record, "error": str(exc)}, default=str) + "\n")
            self._set_offset(end)
            with self._lock:
                self._depth = max(0, self._depth - len(entries))
            done += len(entries)
        self.replayed += done
        with self._lock:
            if self.path.exists() and self._offset() >= self.path.stat().st_size:
                self.path.unlink()
                self.offset_path.unlink(missing_ok=True)
                self._depth = 0
        return done
