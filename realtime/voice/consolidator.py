"""Writing the conversation to L1 on a schedule and at shutdown.

The cascaded loop writes a player's line inline (correction and pre-fetch need it at once),
but other lines reach the conversation without a write of their own: a speech-to-speech
engine's transcripts, an NPC reply whose inline write failed. Every `interval_s` (30 minutes)
and at shutdown (`consolidate_now`), the messages logged since the write cursor that are not
yet in L1 go through `MemoryService.write_entries`, synthetic summaries skipped. The cursor
moves only past what was written, and each message carries its idempotency key, so a retry
after a failure writes nothing twice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from realtime.schemas import EntryIn
from realtime.voice.context_manager import ContextManager, ConversationMessage

CONSOLIDATE_EVERY_S = 30 * 60


class EntryWriter(Protocol):
    async def write_entries(self, session_id: str, items: Sequence[Any]) -> dict[str, Any]: ...


def entry_for(message: ConversationMessage) -> EntryIn:
    return EntryIn(
        idempotency_key=message.idempotency_key,
        text=message.content,
        speaker_id=message.speaker_id,
        speaker_name=message.speaker_name or message.speaker_id,
        role=message.role,
        npc_id=message.npc_id,
        spoken_at=datetime.now(UTC),
    )


class Consolidator:
    def __init__(
        self,
        writer: EntryWriter,
        session_id: str,
        context: ContextManager,
        *,
        interval_s: float = CONSOLIDATE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.writer = writer
        self.session_id = session_id
        self.context = context
        self.interval_s = interval_s
        self.clock = clock
        self.cursor = 0  # the last log sequence number known to be in L1 (or synthetic)
        self.last_run = clock()
        self.written = 0
        self._lock = asyncio.Lock()

    def due(self) -> bool:
        return self.clock() - self.last_run >= self.interval_s

    async def tick(self) -> int:
        """Consolidate if the interval has passed; the number of messages written."""
        return await self.consolidate_now() if self.due() else 0

    async def consolidate_now(self) -> int:
        """Write every logged message after the cursor not yet in L1; advance the cursor."""
        async with self._lock:
            self.last_run = self.clock()
            pending = self.context.since(self.cursor)
            todo = [m for m in pending if not m.synthetic and not m.in_l1 and m.content.strip()]
            if todo:
                await self.writer.write_entries(self.session_id, [entry_for(m) for m in todo])
                for m in todo:
                    m.in_l1 = True
                self.written += len(todo)
            if pending:
                self.cursor = pending[-1].seq
                self.context.forget_through(self.cursor)
            return len(todo)
