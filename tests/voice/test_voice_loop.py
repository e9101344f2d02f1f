"""The voice loop end to end from a WAV file: real STT (faster-whisper tiny.en), inline
correction and the L1 write on the real service and embedded PostgreSQL, a streaming
OpenAI-compatible stub reached through the real `openai` client that calls a memory tool, and
real TTS (piper) into a WAV file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glyphoxa_pipelines.memory import SessionStore
from realtime.voice.audio import WavFileSink, WavSource, read_wav, wav_bytes
from realtime.voice.chat import OpenAIChat
from realtime.voice.loop import VoiceConfig, VoiceLoop
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign

pytestmark = pytest.mark.slow

LINE = "Thaldrin, tell me what you know about the Sunblade."


def entity_lookup(body: dict[str, Any]) -> dict[str, Any]:
    """Ask `memory.query_entities` for the Sunblade, then answer from what it returned."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return {"content": "The Sunblade? A holy sword. Gone now. Mind the sparks."}
    return {"tool_calls": [{"name": "memory__query_entities",
                            "arguments": {"name": "Sunblade"}}]}


async def test_wav_in_npc_speech_out(
    voice_service: Any, voice_campaign: VoiceCampaign, stt: Any, tts: Any,
    chat_stub: StreamingChatStub, db: Any, tmp_path: Path,
) -> None:
    chat_stub.respond = entity_lookup
    spoken = tts.synthesize(LINE)
    wav = tmp_path / "player.wav"
    wav.write_bytes(wav_bytes(spoken))
    out = tmp_path / "npc.wav"
    loop = VoiceLoop(
        voice_service, VoiceConfig(voice_campaign.session_id, "thaldrin"),
        stt=stt, chat=OpenAIChat("stub", base_url=chat_stub.base_url), tts=tts,
        sink=WavFileSink(path=out),
    )
    results = await loop.run(WavSource.from_file(wav, speaker_id="ana", speaker_name="Ana"))

    assert len(results) == 1
    turn = results[0]
    assert "sunblade" in turn.text.lower()
    assert turn.hotwords and turn.hotwords.startswith("The Gilded Tankard")  # scene first

    # the tool ran through the service's dispatch, scoped to the NPC, and its answer went back
    [call] = turn.tool_calls
    assert call.ok and call.tool == "memory.query_entities"
    assert any(e["name"] == "Sunblade" for e in call.result["results"])
    second = chat_stub.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "holy sword" in second[-1]["content"]
    assert chat_stub.requests[0]["stream"] is True
    offered = {t["function"]["name"] for t in chat_stub.requests[0]["tools"]}
    assert "memory__query_entities" in offered

    # L1: the player's corrected words with Whisper's confidences, then the NPC's answer
    entries = SessionStore(db).get_entries(voice_campaign.session_id)
    player = [e for e in entries if e.speaker_role == "player"]
    npc = [e for e in entries if e.speaker_role == "npc"]
    assert len(player) == 1 and "sunblade" in player[0].text.lower()
    assert player[0].word_confidences and len(player[0].word_confidences) == len(
        player[0].raw_text.split())
    assert len(npc) == 1 and npc[0].npc_id == "thaldrin"
    assert npc[0].text.startswith("The Sunblade?")

    # audio: every sentence spoken, in a WAV file, in time order of the stages
    audio = read_wav(out)
    assert audio.seconds > 1.5 and float(abs(audio.samples).max()) > 0.05
    t = turn.timings
    # the insert is off the turn's path (`l1_writer.py`): the model starts after the
    # correction and the hot context only; the line is stored after the hot context
    assert t["transcript"] <= t["corrected"] <= t["hot_context"] <= t["first_token"]
    assert t["hot_context"] <= t["l1_written"]
    assert t["first_token"] <= t["first_audio"] <= t["done"]


async def test_http_turn_endpoint(
    voice_service: Any, voice_campaign: VoiceCampaign, stt: Any, tts: Any,
    chat_stub: StreamingChatStub,
) -> None:
    import base64

    import httpx

    from realtime.api.app import create_app
    from realtime.voice.engines import VoiceEngines

    chat_stub.respond = entity_lookup
    engines = VoiceEngines(stt, OpenAIChat("stub", base_url=chat_stub.base_url), tts)
    app = create_app(voice_service, mount_mcp=False, open_service=False, voice=engines)
    body = wav_bytes(tts.synthesize(LINE))
    url = f"/v1/voice/sessions/{voice_campaign.session_id}/npcs/thaldrin/turns"
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        r = await client.post(url, content=body, params={"speaker_name": "Ana"},
                              headers={"Content-Type": "audio/wav"})
        bad = await client.post(url, content=b"RIFF not a wav",
                                headers={"Content-Type": "audio/wav"})
        unknown = await client.post("/v1/voice/sessions/nope/npcs/thaldrin/turns",
                                    content=body, headers={"Content-Type": "audio/wav"})
    assert r.status_code == 200, r.text
    [turn] = r.json()["turns"]
    assert turn["tools"] == ["memory.query_entities"] and turn["reply"].startswith("The Sunblade")
    assert read_wav(base64.b64decode(r.json()["audio_wav"])).seconds > 1.0
    assert bad.status_code == 422 and bad.json()["error"] == "invalid request"
    assert unknown.status_code == 404
