"""Interaction doubles: what a slash command or a button sees of Discord, recording what the
bot sends, so commands run with no network."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import discord

GUILD = 1111  # the test guild, mapped to each test's campaign


@dataclass
class Sent:
    content: str | None
    embed: discord.Embed | None
    view: discord.ui.View | None
    ephemeral: bool
    kind: str = "message"

    @property
    def text(self) -> str:
        parts = [self.content or ""]
        if self.embed is not None:
            parts += [self.embed.title or "", self.embed.description or "",
                      self.embed.footer.text or ""]
        return "\n".join(parts)


class FakeResponse:
    def __init__(self, log: list[Sent]) -> None:
        self._log = log
        self._done = False
        self.deferred: dict[str, bool] | None = None

    def is_done(self) -> bool:
        return self._done

    def _answer(self) -> None:
        assert not self._done, "Discord accepts one response per interaction"
        self._done = True

    async def send_message(self, content: str | None = None, *, embed: discord.Embed | None = None,
                           view: discord.ui.View | None = None, ephemeral: bool = False) -> None:
        self._answer()
        self._log.append(Sent(content, embed, view, ephemeral))

    async def defer(self, *, ephemeral: bool = False, thinking: bool = False) -> None:
        self._answer()
        self.deferred = {"ephemeral": ephemeral, "thinking": thinking}

    async def edit_message(self, *, content: str | None = None,
                           embed: discord.Embed | None = None,
                           view: discord.ui.View | None = None) -> None:
        self._answer()
        self._log.append(Sent(content, embed, view, False, kind="edit"))


class FakeFollowup:
    def __init__(self, log: list[Sent]) -> None:
        self._log = log

    async def send(self, content: str | None = None, *, embed: discord.Embed | None = None,
                   view: discord.ui.View | None = None, ephemeral: bool = False) -> None:
        self._log.append(Sent(content, embed, view, ephemeral, kind="followup"))


@dataclass
class FakeUser:
    id: int = 42
    roles: list[Any] = field(default_factory=list)
    guild_permissions: Any = field(default_factory=lambda: SimpleNamespace(manage_guild=False))
    voice: Any = None


def member(*roles: str, manager: bool = False, voice_channel: Any = None) -> FakeUser:
    return FakeUser(
        roles=[SimpleNamespace(name=r) for r in roles],
        guild_permissions=SimpleNamespace(manage_guild=manager),
        voice=SimpleNamespace(channel=voice_channel) if voice_channel is not None else None,
    )


class FakeInteraction:
    def __init__(self, guild_id: int | None, user: FakeUser) -> None:
        self.guild_id = guild_id
        self.user = user
        self.sent: list[Sent] = []
        self.response = FakeResponse(self.sent)
        self.followup = FakeFollowup(self.sent)

    @property
    def last(self) -> Sent:
        assert self.sent, "the bot answered nothing"
        return self.sent[-1]


class FakeAttachment:
    def __init__(self, filename: str, data: bytes) -> None:
        self.filename = filename
        self._data = data
        self.size = len(data)

    async def read(self) -> bytes:
        return self._data


class FakeVoiceClient:
    def __init__(self, channel: FakeChannel) -> None:
        self.channel = channel
        self.disconnects = 0
        self.played: list[Any] = []

    async def disconnect(self, *, force: bool = False) -> None:
        self.disconnects += 1

    def is_playing(self) -> bool:
        return False


class FakeChannel:
    def __init__(self, channel_id: int, guild_id: int, failures: int = 0) -> None:
        self.id = channel_id
        self.name = f"voice-{channel_id}"
        self.guild = SimpleNamespace(id=guild_id)
        self.failures = failures
        self.clients: list[FakeVoiceClient] = []
        self.options: list[dict[str, Any]] = []

    async def connect(self, **options: Any) -> FakeVoiceClient:
        self.options.append(options)
        if self.failures:
            self.failures -= 1
            raise TimeoutError("voice handshake timed out")
        client = FakeVoiceClient(self)
        self.clients.append(client)
        return client
