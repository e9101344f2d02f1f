"""Discord voice receive from recorded packets: opus frames per SSRC with the SPEAKING mapping,
through `PacketReceiver` and `VoiceReceiveSource` into the loop (real STT, memory, TTS)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glyphoxa_pipelines.memory import SessionStore
from realtime.voice.audio import BufferSink
from realtime.voice.chat import OpenAIChat
from realtime.voice.loop import VoiceConfig, VoiceLoop
from realtime.voice.packet_recording import read_recording, replay
from realtime.voice.voice_receive import (
    STEREO_FRAME_BYTES,
    OpusMissing,
    OpusPacket,
    PacketReceiver,
    Speaker,
    ensure_opus,
)
from tests.voice import packet_fixture
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign


@pytest.fixture(scope="module", autouse=True)
def opus() -> None:
    try:
        ensure_opus()
    except OpusMissing as exc:
        pytest.skip(str(exc))


class Collect:
    def __init__(self) -> None:
        self.pcm: dict[str, list[bytes]] = {}

    def write(self, user: Any, data: Any) -> None:
        self.pcm.setdefault(user.id, []).append(bytes(data))


def tone_packets(n: int) -> list[bytes]:
    t = np.arange(960 * n) / 48_000
    mono = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    return packet_fixture.opus_packets(np.repeat(mono, 2).tobytes())


def test_receiver_holds_conceals_drops_and_fills() -> None:
    out = Collect()
    receiver = PacketReceiver(out, fill_s=0.1)
    payloads = tone_packets(10)
    ana = Speaker("111", "Ana")
    receiver.packet(OpusPacket(7, 100, payloads[0]), 0.00)  # before the SPEAKING event
    receiver.speaking(7, ana)
    for i in (1, 2, 4, 3, 5):  # 3 arrives after 4: late, and 3 was concealed before it
        receiver.packet(OpusPacket(7, 100 + i, payloads[i]), 0.02 * i)
    receiver.packet(OpusPacket(9, 1, payloads[0]), 0.1)  # nobody is ssrc 9 yet
    receiver.tick(1.0)  # ana went quiet: 100 ms of silence, then nothing more
    s = receiver.stats
    assert (s.held, s.decoded, s.concealed, s.late) == (1, 5, 1, 1)
    assert s.silence_frames == 5 and s.unmapped_dropped == 0
    frames = out.pcm["111"]
    assert len(frames) == 6 + 5 and all(len(f) == STEREO_FRAME_BYTES for f in frames)
    loud = np.frombuffer(b"".join(frames[1:5]), dtype="<i2")
    assert np.abs(loud).max() > 3000  # the tone came through the codec
    assert not any(np.frombuffer(b"".join(frames[-5:]), dtype="<i2"))
    assert "222" not in out.pcm and "9" not in out.pcm


def test_a_broken_recording_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 0, "ssrc": 1, "seq": 1, "opus": "AAA="}\n{"t": 1, "ssrc": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a voice packet recording line"):
        list(read_recording(path))


LOOKUP = {"content": "Aye. Mind the sparks."}


@pytest.mark.slow
async def test_recorded_packets_through_the_loop(
    voice_service: Any, voice_campaign: VoiceCampaign, stt: Any, tts: Any,
    chat_stub: StreamingChatStub, db: Any, tmp_path: Path,
) -> None:
    from realtime.voice.discord_audio import VoiceReceiveSource

    recording = tmp_path / "voice.jsonl"
    assert packet_fixture.make(recording, tts) > 200
    chat_stub.respond = lambda body: LOOKUP
    source = VoiceReceiveSource()
    receiver = PacketReceiver(source)
    loop = VoiceLoop(voice_service, VoiceConfig(voice_campaign.session_id, "thaldrin"),
                     stt=stt, chat=OpenAIChat("stub", base_url=chat_stub.base_url), tts=tts,
                     sink=BufferSink())

    async def feed() -> None:
        try:
            await asyncio.to_thread(replay, recording, receiver)
        finally:
            source.close()

    feeding = asyncio.create_task(feed())
    results = await loop.run(source)
    await feeding

    s = receiver.stats
    # concealed: the lost packet, and the late one (filled in when the one after it came)
    assert s.held == packet_fixture.SPEAKING_LATE_PACKETS and s.concealed == 2 and s.late == 1
    assert [(r.speaker_id, r.reply) for r in results] == [
        ("111", LOOKUP["content"]), ("222", LOOKUP["content"])]
    assert "sunblade" in results[0].text.lower()
    assert "tankard" in results[1].text.lower()
    entries = SessionStore(db).get_entries(voice_campaign.session_id)
    players = [(e.speaker_id, e.speaker_name) for e in entries if e.speaker_role == "player"]
    assert players == [("111", "Ana"), ("222", "Bo")]
