"""Keeping the voice connection up: reconnect on a disconnect signal, with backoff.

Discord drops voice connections (region moves, gateway resumes, network blips). The session is
not over when that happens, so the bot reconnects and carries on with the same state (which
session, which channel, who is speaking): `connect(state)` gets the same object every time.

Driven by a signal, not polling: the connection's disconnect callback calls `disconnected()`,
which wakes the loop. Retries wait 1 s, doubling to at most 30 s, for at most 10 tries, then
give up and say so (`on_give_up`) rather than hammer Discord forever. The sleep is injected so
tests run the schedule on a fake clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

S = TypeVar("S")
C = TypeVar("C")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Backoff:
    first_s: float = 1.0
    factor: float = 2.0
    cap_s: float = 30.0
    tries: int = 10

    def delays(self) -> list[float]:
        """The wait before each try, in order."""
        return [min(self.cap_s, self.first_s * self.factor**i) for i in range(self.tries)]


class Reconnector(Generic[S, C]):
    """Reconnects `connect(state)` after each disconnect signal until closed."""

    def __init__(
        self,
        connect: Callable[[S], Awaitable[C]],
        state: S,
        *,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
        on_give_up: Callable[[S, BaseException | None], Awaitable[None]] | None = None,
    ) -> None:
        self.state = state
        self.backoff = backoff or Backoff()
        self.connection: C | None = None
        self.reconnects = 0
        self.failed_tries = 0
        self.gave_up = False
        self._connect = connect
        self._sleep = sleep
        self._on_give_up = on_give_up
        self._signal = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    @property
    def closing(self) -> bool:
        return self._closing

    def start(self, connection: C | None = None) -> None:
        """Watch for disconnects of `connection` (already open) from now on."""
        self.connection = connection
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run())

    def disconnected(self) -> None:
        """The disconnect signal: safe to call from any callback, any number of times."""
        if not self._closing:
            self._signal.set()

    async def run(self) -> None:
        while not self._closing:
            await self._signal.wait()
            self._signal.clear()
            if self._closing:
                return
            self.connection = None
            if not await self.reconnect():
                return

    async def reconnect(self) -> bool:
        """Try with backoff; True once connected again, False when closed or out of tries."""
        last: BaseException | None = None
        for delay in self.backoff.delays():
            await self._sleep(delay)
            if self._closing:
                return False
            try:
                self.connection = await self._connect(self.state)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - every failure is one more try
                last = exc
                self.failed_tries += 1
                log.warning("voice reconnect failed (retrying): %s", exc)
                continue
            self.reconnects += 1
            self._signal.clear()  # a stale signal from the broken connection
            return True
        self.gave_up = True
        log.error("voice reconnect gave up after %d tries", self.backoff.tries)
        if self._on_give_up is not None:
            await self._on_give_up(self.state, last)
        return False

    async def close(self) -> None:
        """Stop reconnecting, so the intentional disconnect that follows is not 'repaired'."""
        self._closing = True
        self._signal.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
