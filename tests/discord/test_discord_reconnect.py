"""The Reconnector's schedule on a fake clock, its signal-driven loop, and the voice links
built on it (fake voice channels, no network)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from discord_fakes import FakeChannel

from realtime.discord.reconnect import Backoff, Reconnector
from realtime.discord.voice_link import VoiceLinks, VoiceState


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@dataclass
class State:
    session_id: str
    seen_by_connect: list[int] = field(default_factory=list)


def test_backoff_schedule() -> None:
    assert Backoff().delays() == [1, 2, 4, 8, 16, 30, 30, 30, 30, 30]


async def test_gives_up_after_ten_tries_on_the_schedule() -> None:
    clock = FakeClock()
    given_up: list[tuple[State, BaseException | None]] = []

    async def connect(state: State) -> str:
        raise ConnectionError("voice server unreachable")

    async def give_up(state: State, error: BaseException | None) -> None:
        given_up.append((state, error))

    state = State("s1")
    rec = Reconnector(connect, state, sleep=clock.sleep, on_give_up=give_up)
    assert await rec.reconnect() is False
    assert clock.waits == [1, 2, 4, 8, 16, 30, 30, 30, 30, 30] and clock.now == 181
    assert rec.gave_up and rec.failed_tries == 10
    assert given_up[0][0] is state and isinstance(given_up[0][1], ConnectionError)


async def test_reconnects_with_the_same_state_when_signalled() -> None:
    clock = FakeClock()
    tries = 0

    async def connect(state: State) -> str:
        nonlocal tries
        tries += 1
        state.seen_by_connect.append(id(state))
        if tries < 3:
            raise ConnectionError("not yet")
        return f"conn-{tries}"

    state = State("s1")
    rec = Reconnector(connect, state, sleep=clock.sleep)
    rec.start("conn-0")
    await asyncio.sleep(0.01)
    assert clock.waits == [] and tries == 0  # no polling: nothing happens without a signal
    rec.disconnected()
    rec.disconnected()  # repeated callbacks are one signal
    for _ in range(50):
        await asyncio.sleep(0)
    assert clock.waits == [1, 2, 4] and rec.connection == "conn-3" and rec.reconnects == 1
    assert rec.state is state and state.seen_by_connect == [id(state)] * 3
    assert state.session_id == "s1"

    clock.waits.clear()
    rec.disconnected()  # a second drop starts the schedule afresh
    for _ in range(50):
        await asyncio.sleep(0)
    assert clock.waits == [1] and rec.connection == "conn-4" and rec.reconnects == 2
    await rec.close()
    rec.disconnected()  # ignored once closed
    await asyncio.sleep(0.01)
    assert clock.waits == [1]


async def test_voice_links_repair_drops_but_not_intentional_leaves() -> None:
    clock = FakeClock()
    links = VoiceLinks(sleep=clock.sleep)
    table = FakeChannel(10, guild_id=7)
    await links.join(table, "session-a")
    assert table.options == [{"reconnect": False, "self_deaf": False}]
    link = links.link(7)
    assert link is not None and isinstance(link.state, VoiceState)

    table.failures = 1
    links.disconnected(7)
    for _ in range(50):
        await asyncio.sleep(0)
    assert clock.waits == [1, 2] and len(table.clients) == 2
    assert links.link(7) is link and link.state.session_id == "session-a"

    await links.join(table, "session-b")  # same channel: keeps the connection
    assert len(table.clients) == 2 and link.state.session_id == "session-b"

    await links.leave(7)
    assert table.clients[-1].disconnects == 1 and links.link(7) is None
    links.disconnected(7)  # the gateway's echo of our own leave
    await asyncio.sleep(0.01)
    assert len(table.clients) == 2 and clock.waits == [1, 2]
    assert await links.play(7, "/nonexistent.mp3") is False
