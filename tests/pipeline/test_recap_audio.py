"""Spoken recaps: `session_recap` sends the recap text to an OpenAI-compatible `/audio/speech`
endpoint (a local stub server, through the real `openai` client) and stores the file's path;
a failing endpoint keeps the text recap; without a speech model there is no audio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.memory import RecapStore
from glyphoxa_pipelines.pipeline.runner import run_session_chain
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.providers.speech import SpeechSynthesizer

AUDIO = b"ID3\x04\x00fake-mp3-frames" * 64


def _speech_requests(stub: Any) -> list[dict[str, Any]]:
    return [body for path, body in stub.requests if path == "/v1/audio/speech"]


def test_configured_speech_writes_the_audio_and_stores_its_path(
    db: Any,
    facts_session: tuple[str, str],
    pipeline_services: PipelineServices,
    openai_stub: Any,
    glyphoxa_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, session_id = facts_session
    openai_stub.speech = lambda body: AUDIO
    monkeypatch.setenv("GLYPHOXA_TTS_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("GLYPHOXA_TTS_MODEL", "stub-tts")
    monkeypatch.setenv("GLYPHOXA_TTS_VOICE", "onyx")
    services = PipelineServices(
        db, Settings.from_env(), embedder_factory=lambda: pipeline_services.embedder
    )

    outcome = run_session_chain(services, session_id)["session_recap"]

    expected = glyphoxa_home / "recaps" / f"{session_id}.mp3"
    assert expected.read_bytes() == AUDIO
    assert sorted(p.name for p in expected.parent.glob(f"*{session_id}*")) == [expected.name]
    recap = RecapStore(db).get(session_id)
    assert recap.audio_path == str(expected)
    assert outcome.metadata["audio_path"] == str(expected)
    assert outcome.metadata["audio_bytes"] == len(AUDIO)
    assert "audio_error" not in outcome.metadata
    [body] = _speech_requests(openai_stub)
    assert body == {
        "model": "stub-tts",
        "voice": "onyx",
        "input": recap.text,
        "response_format": "mp3",
    }


def test_failing_speech_endpoint_keeps_the_text_recap(
    db: Any, facts_session: tuple[str, str], pipeline_services: PipelineServices, openai_stub: Any
) -> None:
    _, session_id = facts_session
    openai_stub.fail_next = 1000  # every request answers 500
    speech = SpeechSynthesizer(
        model="stub-tts", base_url=openai_stub.base_url, max_retries=3, max_wait_s=0.05
    )
    services = PipelineServices(
        db,
        pipeline_services.settings,
        embedder_factory=lambda: pipeline_services.embedder,
        speech_factory=lambda: speech,
    )

    outcome = run_session_chain(services, session_id)["session_recap"]

    assert all(c.passed for c in outcome.checks)
    recap = RecapStore(db).get(session_id)
    assert recap.text.strip()
    assert recap.audio_path is None
    assert outcome.metadata["audio_path"] is None
    assert "audio_bytes" not in outcome.metadata
    assert "failed" in outcome.metadata["audio_error"]
    assert len(_speech_requests(openai_stub)) == 3  # retried by with_backoff, then given up


def test_without_a_speech_model_there_is_no_audio(
    db: Any,
    facts_session: tuple[str, str],
    pipeline_services: PipelineServices,
    glyphoxa_home: Path,
) -> None:
    _, session_id = facts_session
    assert pipeline_services.settings.tts_model is None
    assert pipeline_services.speech is None

    outcome = run_session_chain(pipeline_services, session_id)["session_recap"]

    assert RecapStore(db).get(session_id).audio_path is None
    assert outcome.metadata["audio_path"] is None
    assert not {"audio_bytes", "audio_error", "audio_model"} & set(outcome.metadata)
    assert not list((glyphoxa_home / "recaps").glob(f"{session_id}.*"))


def test_speech_model_and_voice_are_part_of_the_recap_version(tmp_path: Path) -> None:
    from glyphoxa_pipelines.pipeline.versions import code_versions

    text_only = code_versions(Settings(home=tmp_path))
    spoken = code_versions(Settings(home=tmp_path, tts_model="tts-1"))
    other_voice = code_versions(Settings(home=tmp_path, tts_model="tts-1", tts_voice="nova"))
    recap = "session_recap"
    assert len({text_only[recap], spoken[recap], other_voice[recap]}) == 3
    # nothing else moves: a new voice re-speaks recaps, it does not re-embed or re-extract
    for name in text_only:
        if name != recap:
            assert text_only[name] == spoken[name] == other_voice[name]
