"""`glyphoxa voice --wav FILE --session S --npc N` end to end, in process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from realtime.voice.audio import read_wav, wav_bytes
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign

pytestmark = pytest.mark.slow


def test_voice_command_answers_a_wav(
    voice_campaign: VoiceCampaign, stt: Any, tts: Any, chat_stub: StreamingChatStub,
    tmp_path: Path,
) -> None:
    wav = tmp_path / "in.wav"
    wav.write_bytes(wav_bytes(tts.synthesize("Thaldrin, have you seen the Sunblade?")))
    out = tmp_path / "out.wav"
    result = CliRunner().invoke(app, [
        "voice", "--wav", str(wav), "--session", voice_campaign.session_id, "--npc", "thaldrin",
        "--out", str(out), "--model", "stub", "--llm-url", chat_stub.base_url,
        "--speaker", "ana",
    ])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    [turn] = report["turns"]
    assert "Sunblade" in turn["written"] and turn["tools"] == ["memory.search_sessions"]
    assert report["audio"] == str(out) and read_wav(out).seconds > 1.0

    missing = CliRunner().invoke(app, [
        "voice", "--wav", str(wav), "--session", "no-such-session", "--npc", "thaldrin",
        "--model", "stub", "--llm-url", chat_stub.base_url,
    ])
    assert missing.exit_code == 1 and "unknown session" in missing.output
