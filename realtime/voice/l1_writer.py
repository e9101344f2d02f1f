"""The loop's L1 writes, off the turn's path, stored one at a time in the order they were said.

A turn needs two things from memory before the model can start: the corrected line (its own
message to the model) and the hot context. The insert's round trip is not one of them: the
conversation already holds the line, and the service's guard spools a write PostgreSQL
refuses. So the loop corrects each line inline (`MemoryService.prepare_entries`, in order,
so the session's scene memory takes names as they were said) and hands the store to this
queue, which one task drains in order while the model answers.

Nothing is lost: a store the guard cannot reach PostgreSQL for is spooled by the service
itself; any other failure is logged and leaves the message marked not in L1, so the
`Consolidator` writes it later under the same idempotency key (which also makes a store that
did land harmless to repeat). `flush()` waits for everything queued so far: before a
consolidation, at shutdown, and before a turn's hot context, so that context always sees the
earlier turns' lines (the queue is empty by then unless PostgreSQL is slow).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

from realtime.transcript_writer import PreparedWrite
from realtime.voice.context_manager import ConversationMessage

log = logging.getLogger(__name__)

OnStored = Callable[[dict[str, Any]], None]


class EntryStore(Protocol):
    async def store_entries(self, prepared: PreparedWrite) -> dict[str, Any]: ...


class L1Writer:
    def __init__(self, store: EntryStore) -> None:
        self._store = store
        self._queue: asyncio.Queue[
            tuple[PreparedWrite, ConversationMessage | None, OnStored | None]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self.stored = 0
        self.failed = 0  # stores left to the Consolidator
        self._pending = 0

    def submit(self, prepared: PreparedWrite, message: ConversationMessage | None = None,
               on_stored: OnStored | None = None) -> None:
        """Queue a prepared write; `message` is marked in L1 once it is stored (or spooled)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain(), name="voice-l1-writer")
        self._pending += 1
        self._queue.put_nowait((prepared, message, on_stored))

    @property
    def pending(self) -> int:
        """Writes queued or being stored."""
        return self._pending

    async def flush(self) -> None:
        """Wait until every write queued so far is stored or left to the Consolidator."""
        await self._queue.join()

    async def close(self) -> None:
        """Flush, then stop the task."""
        if self._task is None:
            return
        try:
            await self.flush()
        finally:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _drain(self) -> None:
        while True:
            prepared, message, on_stored = await self._queue.get()
            try:
                result = await self._store.store_entries(prepared)
            except Exception:
                self.failed += 1
                log.exception("storing a line of session %s failed; the consolidator writes "
                              "it later", prepared.session_id)
            else:
                self.stored += 1
                if message is not None:
                    message.in_l1 = True
                if on_stored is not None:
                    on_stored(result)
            finally:
                self._pending -= 1
                self._queue.task_done()
