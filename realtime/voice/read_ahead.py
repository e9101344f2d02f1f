"""The hot context read ahead of a turn, per speaker, while the VAD's hangover runs.

The turn needs the hot context, which does not depend on the final transcript's words, only
on what pre-fetch brought. So each speaker's context is read twice ahead of the turn:

1. when their early final is *triggered* (200 ms of quiet), with what the partial passes
   pre-fetched; on a loaded machine the early decode lands after the VAD has closed, and
   this read is then the one that is ready;
2. when the early final is decoded and its text sent to pre-fetch, so the read also has
   what that text brought (the read waits for that pre-fetch, off the turn's path).

The turn takes the freshest read that is done (or, if none is, the first to finish); the
others are left to finish on their own. A new trigger (the speaker went on and paused again)
replaces the speaker's reads. Reads are not counted as turns: the turn counts the one it uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_DISCARDED: set[asyncio.Task[Any]] = set()  # held until done, so none is collected mid-read


def discard(task: asyncio.Task[Any]) -> None:
    """Let an unneeded task finish on its own (a read cancelled mid-statement costs the pool
    its connection); its outcome, even a failure, is not wanted."""
    if task.done():
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not warn of it
        return
    _DISCARDED.add(task)

    def done(t: asyncio.Task[Any]) -> None:
        _DISCARDED.discard(t)
        if not t.cancelled():
            t.exception()

    task.add_done_callback(done)


def _succeeded(task: asyncio.Task[Any]) -> bool:
    return task.done() and not task.cancelled() and task.exception() is None


class ReadAhead(Generic[T]):
    def __init__(self, read: Callable[[], Awaitable[T]]) -> None:
        self._read = read
        self._tasks: dict[str, list[asyncio.Task[T]]] = {}

    def start(self, speaker_id: str, *, restart: bool) -> None:
        """Begin a read for the speaker; `restart` drops the reads begun before it."""
        if restart:
            self.drop(speaker_id)

        async def read() -> T:
            return await self._read()

        self._tasks.setdefault(speaker_id, []).append(asyncio.create_task(read()))

    def drop(self, speaker_id: str) -> None:
        for task in self._tasks.pop(speaker_id, []):
            discard(task)

    def close(self) -> None:
        for speaker_id in list(self._tasks):
            self.drop(speaker_id)

    def take_ready(self, speaker_id: str) -> T | None:
        """The freshest read that has already succeeded, taken without waiting (the turn
        then does not pass through the event loop for it); None leaves the reads in place
        for `take`."""
        tasks = self._tasks.get(speaker_id, [])
        ready = [t for t in tasks if _succeeded(t)]
        if not ready:
            return None
        del self._tasks[speaker_id]
        for task in tasks:
            if task is not ready[-1]:
                discard(task)
        return ready[-1].result()

    async def take(self, speaker_id: str) -> T | None:
        """The freshest read that succeeded (waiting for the first to finish if none has);
        None when there was none or every one failed (the caller reads now)."""
        tasks = self._tasks.pop(speaker_id, [])
        if not tasks:
            return None
        if not any(_succeeded(t) for t in tasks):
            pending = [t for t in tasks if not t.done()]
            if pending:
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        ready = [t for t in tasks if _succeeded(t)]
        for task in tasks:
            if not ready or task is not ready[-1]:
                discard(task)
        return ready[-1].result() if ready else None
