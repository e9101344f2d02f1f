"""The speech-to-speech bridge against a local fake OpenAI-Realtime-style websocket server:
hot context in the instructions, the tier's tools run through the one dispatch and answered
as function_call_output, the NPC's audio to the sink, both transcripts consolidated to L1."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.server import ServerConnection, serve

from glyphoxa_pipelines.memory import SessionStore
from glyphoxa_pipelines.providers.speech import Synthesized
from realtime.tools import Tier
from realtime.voice.audio import BufferSink, WavSource
from realtime.voice.loop import VoiceConfig
from realtime.voice.openai_realtime import OpenAIRealtimeEngine
from realtime.voice.s2s import S2SLoop
from tests.voice.conftest import VoiceCampaign

NPC_AUDIO = (np.full(2400, 8192, dtype="<i2")).tobytes()  # 0.1 s at 24 kHz


class FakeRealtimeServer:
    """Answers a committed input with one function call, then (after its output) speech."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.url = ""

    async def handle(self, ws: ServerConnection) -> None:
        async def send(event: dict[str, Any]) -> None:
            await ws.send(json.dumps(event))

        responses = 0
        async for raw in ws:
            event = json.loads(raw)
            self.received.append(event)
            if event["type"] != "response.create":
                continue
            responses += 1
            if responses == 1:
                await send({"type": "conversation.item.input_audio_transcription.completed",
                            "transcript": "Thaldrin, what do you know of the Sunblade?"})
                await send({"type": "response.function_call_arguments.done",
                            "call_id": "call_1", "name": "memory__query_entities",
                            "arguments": json.dumps({"name": "Sunblade"})})
                await send({"type": "response.done"})
            else:
                delta = base64.b64encode(NPC_AUDIO).decode()
                await send({"type": "response.audio.delta", "delta": delta})
                await send({"type": "response.audio.delta", "delta": delta})
                await send({"type": "response.audio_transcript.done",
                            "transcript": "The Sunblade is a holy sword, friend."})
                await send({"type": "response.done"})


@pytest.fixture
async def fake_server() -> AsyncIterator[FakeRealtimeServer]:
    fake = FakeRealtimeServer()
    async with serve(fake.handle, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        fake.url = f"ws://127.0.0.1:{port}/v1/realtime?model=fake"
        yield fake


async def test_s2s_bridge_runs_memory_tools_and_writes_l1(
    voice_service: Any, voice_campaign: VoiceCampaign, fake_server: FakeRealtimeServer, db: Any,
) -> None:
    rate = 16_000
    t = np.arange(rate) / rate
    speech = Synthesized((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate)
    sink = BufferSink()
    loop = S2SLoop(voice_service,
                   VoiceConfig(voice_campaign.session_id, "thaldrin", tier=Tier.DEEP),
                   OpenAIRealtimeEngine(fake_server.url, api_key="k"), sink)
    result = await loop.run(WavSource(speech, speaker_id="ana"))

    kinds = [e["type"] for e in fake_server.received]
    assert kinds[0] == "session.update"
    session = fake_server.received[0]["session"]
    assert "Thaldrin Ashvale" in session["instructions"]  # the hot context, as text
    names = {tool["name"] for tool in session["tools"]}
    assert "memory__query_entities" in names and "function" not in session["tools"][0]

    appended = [e for e in fake_server.received if e["type"] == "input_audio_buffer.append"]
    pcm = b"".join(base64.b64decode(e["audio"]) for e in appended)
    # one second and the source's 0.6 s trailing silence, resampled from 16 to 24 kHz
    assert abs(len(pcm) // 2 - 38_400) < 200
    assert kinds.index("input_audio_buffer.commit") < kinds.index("response.create")

    [call] = result.tool_calls
    assert call.ok and call.tool == "memory.query_entities"
    [output] = [e for e in fake_server.received if e["type"] == "conversation.item.create"]
    assert output["item"]["type"] == "function_call_output"
    assert output["item"]["call_id"] == "call_1" and "holy sword" in output["item"]["output"]
    assert kinds.count("response.create") == 2  # the result was sent back for an answer

    clip = sink.joined()
    assert clip is not None and clip.sample_rate == 24_000 and len(clip.samples) == 4800
    assert result.written == 2
    entries = SessionStore(db).get_entries(voice_campaign.session_id)
    assert [(e.speaker_role, e.text) for e in entries] == [
        ("player", "Thaldrin, what do you know of the Sunblade?"),
        ("npc", "The Sunblade is a holy sword, friend."),
    ]
    assert entries[1].npc_id == "thaldrin"


async def test_s2s_over_the_http_api(
    voice_service: Any, voice_campaign: VoiceCampaign, fake_server: FakeRealtimeServer,
) -> None:
    import httpx

    from realtime.api.app import create_app
    from realtime.voice.audio import read_wav, wav_bytes
    from realtime.voice.engines import SpeechConfig, VoiceEngines, speech_to_speech

    rate = 16_000
    t = np.arange(rate) / rate
    body = wav_bytes(Synthesized((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), rate))
    unused: Any = None  # the cascaded engines: an S2S turn never touches them
    engines = VoiceEngines(unused, unused, unused,
                           speech_to_speech(SpeechConfig(s2s_url=fake_server.url)))
    bare = VoiceEngines(unused, unused, unused)
    url = f"/v1/voice/sessions/{voice_campaign.session_id}/npcs/thaldrin/s2s"
    results = []
    for with_engines in (engines, bare):
        app = create_app(voice_service, mount_mcp=False, open_service=False, voice=with_engines)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            results.append(await client.post(url, content=body, params={"speaker_id": "ana"},
                                              headers={"Content-Type": "audio/wav"}))
    ok, missing = results
    assert ok.status_code == 200, ok.text
    out = ok.json()
    assert out["heard"] == ["Thaldrin, what do you know of the Sunblade?"]
    assert out["replies"] == ["The Sunblade is a holy sword, friend."]
    assert out["tools"] == ["memory.query_entities"] and out["written"] == 2
    assert read_wav(base64.b64decode(out["audio_wav"])).seconds == 0.2
    assert missing.status_code == 503 and "GLYPHOXA_S2S_URL" in missing.text
