"""The voice routes in the app: mounted only when engines are given (`glyphoxa serve
--voice`), and nothing of the voice loop or its speech models imported otherwise."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import httpx
import numpy as np
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app as cli
from glyphoxa_pipelines.providers.speech import Synthesized, Transcript
from realtime.api.app import create_app
from realtime.voice.audio import wav_bytes
from realtime.voice.chat import OpenAIChat
from realtime.voice.engines import VoiceEngines
from tests.voice.conftest import VoiceCampaign

RATE = 16_000


class SilentRecognizer:
    """Hears nothing: the turn ends before the chat model or TTS would be reached."""

    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, samples: np.ndarray, sample_rate: int, *,
                   hotwords: str | None = None) -> Transcript:
        self.calls += 1
        return Transcript("")


class NoVoice:
    def synthesize(self, text: str) -> Synthesized:
        raise AssertionError("nothing was to be said")


def speech_like() -> bytes:
    t = np.arange(RATE) / RATE
    tone = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    return wav_bytes(Synthesized(np.concatenate([tone, np.zeros(RATE, np.float32)]), RATE))


async def test_voice_routes_only_when_engines_are_given(
    voice_service: Any, voice_campaign: VoiceCampaign,
) -> None:
    url = f"/v1/voice/sessions/{voice_campaign.session_id}/npcs/thaldrin/turns"
    stt = SilentRecognizer()
    engines = VoiceEngines(stt, OpenAIChat("unused", base_url="http://127.0.0.1:9"), NoVoice())
    plain = create_app(voice_service, mount_mcp=False, open_service=False)
    voiced = create_app(voice_service, mount_mcp=False, open_service=False, voice=engines)
    headers = {"Content-Type": "audio/wav"}
    for app, expected in ((plain, 404), (voiced, 200)):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            r = await c.post(url, content=speech_like(), headers=headers)
        assert r.status_code == expected, r.text
    assert stt.calls >= 1
    assert r.json()["turns"][0]["heard"] == "" and r.json()["audio_wav"] is None


def test_the_plain_app_imports_no_voice_code() -> None:
    code = (
        "import sys\n"
        "from realtime.api.app import create_app\n"
        "from realtime.service import MemoryService\n"
        "create_app(MemoryService('postgresql://x@127.0.0.1:1/x'), mount_mcp=False)\n"
        "loaded = [m for m in sys.modules if m.startswith(('realtime.voice', 'faster_whisper',"
        " 'piper', 'ctranslate2'))]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_serve_voice_needs_a_chat_model(monkeypatch: Any) -> None:
    monkeypatch.delenv("GLYPHOXA_LLM_MODEL", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--voice", "--port", "1"])
    assert result.exit_code == 2 and "GLYPHOXA_LLM_MODEL" in result.output
