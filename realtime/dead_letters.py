"""Spooled records that could not be replayed: kept, counted, listed, retried or dropped.

A record moves here when the database refuses it for a reason that waiting will not fix (its
session was deleted, a value PostgreSQL cannot store) or when its spool line is unreadable (a
write torn by a crash). Moving it lets replay go on with the records behind it; keeping it
means nothing acknowledged is lost without a trace. `glyphoxa spool` lists, retries and drops
dead letters, possibly while the service runs: every change to a file happens under an
exclusive `flock` on a side lock file, held only for the read or rewrite itself.

One JSON object per line: `id`, `dead_at`, `error`, and either the record (`session_id`,
`entries`, its metadata) or `raw` (the unreadable line's text).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.memory import NewEntry


class DeadLetterFile:
    """The dead letters of one spool file (`<spool>.dead`)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self.count = len(self._read())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self._lock_path, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def add(self, error: str, *, record: dict[str, Any] | None = None,
            raw: bytes | None = None) -> dict[str, Any]:
        """Append one dead letter (fsynced: the spool forgets the record right after)."""
        letter: dict[str, Any] = {
            "id": uuid.uuid4().hex[:12],
            "dead_at": datetime.now(UTC).isoformat(),
            "error": error,
        }
        if record is not None:
            letter.update({k: v for k, v in record.items() if k not in letter})
        if raw is not None:
            letter["raw"] = raw.decode("utf-8", errors="replace")
        line = json.dumps(letter, default=str, ensure_ascii=True) + "\n"
        with self._locked(), self.path.open("ab") as fh:
            fh.write(line.encode())
            fh.flush()
            os.fsync(fh.fileno())
        self.count += 1
        return letter

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_bytes().splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    out.append({"id": None, "error": "unreadable dead letter",
                                "raw": line.decode("utf-8", errors="replace")})
        return out

    def list(self) -> list[dict[str, Any]]:
        with self._locked():
            letters = self._read()
        self.count = len(letters)
        return letters

    def remove(self, ids: Iterable[str]) -> int:
        """Drop the dead letters with these ids; returns how many went."""
        wanted = set(ids)
        with self._locked():
            letters = self._read()
            keep = [d for d in letters if d.get("id") not in wanted]
            if len(keep) != len(letters):
                tmp = self.path.with_name(self.path.name + ".tmp")
                tmp.write_text("".join(json.dumps(d, ensure_ascii=True) + "\n" for d in keep))
                os.replace(tmp, self.path)
                if not keep:
                    self.path.unlink(missing_ok=True)
        self.count = len(keep)
        return len(letters) - len(keep)


def dead_letter_files(directory: Path) -> list[DeadLetterFile]:
    """Every spool's dead letters in `directory` (one per worker that ever spooled)."""
    return [DeadLetterFile(p) for p in sorted(Path(directory).glob("*.dead"))]


def new_entries(entries: list[dict[str, Any]]) -> list[NewEntry]:
    """Spooled entry dicts back to the entries the store writes."""
    return [
        NewEntry(**{**e, "spoken_at": datetime.fromisoformat(e["spoken_at"])
                    if e.get("spoken_at") else None})
        for e in entries
    ]


def retry(files: Iterable[DeadLetterFile], ids: set[str] | None,
          write: Callable[[str, list[NewEntry]], Any]) -> tuple[list[str], dict[str, str]]:
    """Write dead letters again (all, or those in `ids`) with `write(session_id, entries)`
    (idempotent: a letter that had partly landed lands once). Those written are removed; the
    rest stay. Returns (ids written, {id: why not})."""
    written: list[str] = []
    failed: dict[str, str] = {}
    for dead in files:
        done = []
        for letter in dead.list():
            lid = letter.get("id")
            if not lid or (ids is not None and lid not in ids):
                continue
            if "raw" in letter or "session_id" not in letter:
                failed[lid] = "an unreadable line: nothing to write (inspect it, then drop it)"
                continue
            try:
                write(letter["session_id"], new_entries(letter.get("entries", [])))
            except Exception as exc:  # noqa: BLE001 - reported per letter, the rest go on
                failed[lid] = f"{type(exc).__name__}: {exc}"
                continue
            done.append(lid)
        dead.remove(done)
        written += done
    return written, failed
