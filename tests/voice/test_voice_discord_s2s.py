"""Speech-to-speech over Discord: recorded voice packets (two players, the second's SPEAKING
event late, a packet lost, one late) through the receiver and its DAVE hook, the floor, a
fake OpenAI-Realtime-style server and Discord playback; the floor on its own; the DAVE hook
on real opus packets and on a real `davey` session."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve

from glyphoxa_pipelines.memory import SessionStore
from realtime.voice.dave import DaveSessionDecryptor
from realtime.voice.interfaces import AudioFrame
from realtime.voice.loop import VoiceConfig
from realtime.voice.openai_realtime import OpenAIRealtimeEngine
from realtime.voice.packet_recording import replay
from realtime.voice.s2s_floor import Floor
from realtime.voice.voice_receive import (
    STEREO_FRAME_BYTES,
    OpusMissing,
    OpusPacket,
    PacketReceiver,
    Speaker,
    ensure_opus,
)
from tests.voice import packet_fixture
from tests.voice.conftest import VoiceCampaign

RATE = 48_000
FRAME = RATE // 50
NPC_AUDIO = np.full(2400, 8192, dtype="<i2").tobytes()  # 0.1 s at 24 kHz
HEARD = ("Thaldrin, tell me what you know about the Sunblade.",
         "Thaldrin, do you still drink at the Gilded Tankard?")
SAID = ("The Sunblade is a holy sword, friend.", "Every night, when the forge is cold.")


@pytest.fixture(scope="module")
def opus() -> None:
    try:
        ensure_opus()
    except OpusMissing as exc:
        pytest.skip(str(exc))


# -- the floor: one speaker at a time -------------------------------------------------------
def frames(speaker: str, pattern: str) -> list[AudioFrame]:
    """20 ms frames: 'x' a loud one, '.' a silent one."""
    t = np.arange(FRAME) / RATE
    loud = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    quiet = np.zeros(FRAME, dtype=np.float32)
    return [AudioFrame(loud if c == "x" else quiet, RATE, speaker) for c in pattern]


def test_the_floor_sends_one_speaker_at_a_time_and_commits_each_utterance() -> None:
    floor = Floor()
    cough = frames("cy", "..xxxx" + "." * 64)  # 80 ms: opens the VAD, too short to be speech
    ana = frames("ana", "." * 10 + "x" * 30 + "." * 30)  # 0.6 s of speech, then 0.6 s quiet
    bo = frames("bo", "." * 15 + "x" * 40 + "." * 15)  # starts while Ana holds the floor
    dee = frames("dee", "." * 20 + "x" * 15 + "." * 35)  # a remark over Ana, done before her
    log: list[tuple[str, bool]] = []  # (speaker, commit) per frame sent
    for row in zip(cough, ana, bo, dee, strict=True):
        for frame in row:
            step = floor.feed(frame)
            log += [(f.speaker_id, False) for f in step.send]
            if step.commit:
                log.append((str(step.speaker_id), True))
    for frame in frames("bo", "x" * 20 + "." * 30):  # Bo goes on, then stops
        step = floor.feed(frame)
        log += [(f.speaker_id, False) for f in step.send]
        if step.commit:
            log.append((str(step.speaker_id), True))

    assert [who for who, commit in log if commit] == ["ana", "bo"]
    ana_done = log.index(("ana", True))
    assert {who for who, _ in log[:ana_done]} == {"ana"}  # the cough held nothing back
    assert {who for who, _ in log[ana_done + 1:]} == {"bo"}  # Dee's remark was table talk
    # Bo was heard next, right after Ana's turn
    first_bo = next(i for i, (who, _) in enumerate(log) if who == "bo")
    assert first_bo == ana_done + 1 and not floor.open


# -- the DAVE hook --------------------------------------------------------------------------
class Collect:
    def __init__(self) -> None:
        self.pcm: list[bytes] = []

    def write(self, user: Any, data: Any) -> None:
        self.pcm.append(bytes(data))


class XorDecryptor:
    """Stands in for DAVE: frames from user 111 arrive XOR-ed with a key of theirs."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def decrypt(self, user_id: str, frame: bytes) -> bytes | None:
        self.calls.append(user_id)
        if frame.startswith(b"BAD"):
            return None
        return bytes(b ^ 0x5A for b in frame)


def tone(n: int) -> list[bytes]:
    t = np.arange(960 * n) / RATE
    mono = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    return packet_fixture.opus_packets(np.repeat(mono, 2).tobytes())


def test_the_dave_hook_decrypts_per_user_after_the_mapping(opus: None) -> None:
    plain, hooked = Collect(), Collect()
    decryptor = XorDecryptor()
    ordinary = PacketReceiver(plain)
    receiver = PacketReceiver(hooked, decryptor=decryptor)
    payloads = tone(6)
    ana = Speaker("111", "Ana")
    ordinary.speaking(7, ana)
    for i, p in enumerate(payloads):
        ordinary.packet(OpusPacket(7, i, p), 0.02 * i)
    encrypted = [bytes(b ^ 0x5A for b in p) for p in payloads]
    encrypted[3] = b"BAD" + encrypted[3]  # one frame the end-to-end layer refuses
    receiver.packet(OpusPacket(7, 0, encrypted[0]), 0.0)  # before SPEAKING: held, not decrypted
    assert decryptor.calls == []
    receiver.speaking(7, ana)
    for i in range(1, 6):
        receiver.packet(OpusPacket(7, i, encrypted[i]), 0.02 * i)
    assert decryptor.calls == ["111"] * 6
    s = receiver.stats
    assert (s.undecryptable, s.decoded, s.concealed, s.held) == (1, 5, 1, 1)
    # the frames around the refused one decode exactly as the plain stream's do
    assert hooked.pcm[:3] == plain.pcm[:3]
    assert len(hooked.pcm) == 6 and all(len(f) == STEREO_FRAME_BYTES for f in hooked.pcm)


def test_a_dave_session_without_keys_drops_frames_it_cannot_decrypt(opus: None) -> None:
    davey = pytest.importorskip("davey")
    session = davey.DaveSession(davey.DAVE_PROTOCOL_VERSION, 1, 2)  # no MLS group joined
    decryptor = DaveSessionDecryptor(session)
    out = Collect()
    receiver = PacketReceiver(out, decryptor=decryptor)
    receiver.speaking(7, Speaker("111", "Ana"))
    for i, p in enumerate(tone(3)):
        receiver.packet(OpusPacket(7, i, p), 0.02 * i)
    assert receiver.stats.undecryptable == 3 and out.pcm == []
    assert decryptor.failures == 3 and "Decryptor" in decryptor.last_error


# -- end to end: packets in, Discord playback out ---------------------------------------------
class FakeRealtime:
    """Per committed turn: the player's transcript; turn 1 calls a memory tool first."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.turn_bytes: list[int] = []  # input audio appended before each commit
        self.url = ""

    async def handle(self, ws: ServerConnection) -> None:
        async def send(event: dict[str, Any]) -> None:
            await ws.send(json.dumps(event))

        appended = 0
        turn = 0
        awaiting_tool = False
        async for raw in ws:
            event = json.loads(raw)
            self.received.append(event)
            kind = event["type"]
            if kind == "input_audio_buffer.append":
                appended += len(base64.b64decode(event["audio"]))
            elif kind == "input_audio_buffer.commit":
                self.turn_bytes.append(appended)
                appended = 0
            elif kind == "response.create":
                if not awaiting_tool:
                    turn += 1
                    await send({"type": "conversation.item.input_audio_transcription.completed",
                                "transcript": HEARD[turn - 1]})
                    if turn == 1:
                        awaiting_tool = True
                        await send({"type": "response.function_call_arguments.done",
                                    "call_id": "call_1", "name": "memory__query_entities",
                                    "arguments": json.dumps({"name": "Sunblade"})})
                        await send({"type": "response.done"})
                        continue
                awaiting_tool = False
                await send({"type": "response.audio.delta",
                            "delta": base64.b64encode(NPC_AUDIO).decode()})
                await send({"type": "response.audio_transcript.done",
                            "transcript": SAID[turn - 1]})
                await send({"type": "response.done"})


@pytest.fixture
async def fake_realtime() -> AsyncIterator[FakeRealtime]:
    fake = FakeRealtime()
    async with serve(fake.handle, "127.0.0.1", 0) as server:
        fake.url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/realtime"
        yield fake


class FakeVoiceClient:
    """discord.py's VoiceClient as playback sees it."""

    def __init__(self) -> None:
        self.sources: list[Any] = []

    def is_playing(self) -> bool:
        return False

    def play(self, source: Any) -> None:
        self.sources.append(source)


@pytest.mark.slow
async def test_s2s_over_discord_from_recorded_packets(
    opus: None, voice_service: Any, voice_campaign: VoiceCampaign, tts: Any,
    fake_realtime: FakeRealtime, db: Any, tmp_path: Path,
) -> None:
    from realtime.voice.discord_s2s import DiscordS2S

    recording = tmp_path / "voice.jsonl"
    packet_fixture.make(recording, tts)
    client = FakeVoiceClient()
    bridge = DiscordS2S(voice_service, VoiceConfig(voice_campaign.session_id, "thaldrin"),
                        OpenAIRealtimeEngine(fake_realtime.url, api_key="k"), client)

    async def feed() -> None:
        try:
            await asyncio.to_thread(replay, recording, bridge.receiver)
        finally:
            bridge.stop()

    feeding = asyncio.create_task(feed())
    result = await bridge.run()
    await feeding

    session = fake_realtime.received[0]["session"]
    assert "Thaldrin Ashvale" in session["instructions"]  # the hot context, as text
    # one commit per utterance, each with about that utterance's audio (24 kHz 16-bit), not
    # the 2.5 s of silence between the two players
    assert len(fake_realtime.turn_bytes) == 2
    for line, sent in zip(packet_fixture.LINES, fake_realtime.turn_bytes, strict=True):
        spoken_s = tts.synthesize(line.text).seconds
        assert spoken_s < sent / 48_000 < spoken_s + 1.0
    [call] = result.tool_calls
    assert call.ok and call.tool == "memory.query_entities"
    assert result.player == list(HEARD) and result.npc == list(SAID)

    # the engine's speech reached Discord as 48 kHz stereo 20 ms frames
    assert client.sources and client.sources[0] is bridge.playback
    played = []
    while frame := bridge.playback.read():
        played.append(frame)
    assert len(played) == 2 * 5 and all(len(f) == STEREO_FRAME_BYTES for f in played)

    entries = SessionStore(db).get_entries(voice_campaign.session_id)
    # (case aside: the write's inline correction spells the tavern as the campaign does)
    assert [(e.speaker_role, e.speaker_id, e.text.lower()) for e in entries] == [
        ("player", "111", HEARD[0].lower()), ("npc", "thaldrin", SAID[0].lower()),
        ("player", "222", HEARD[1].lower()), ("npc", "thaldrin", SAID[1].lower()),
    ]
