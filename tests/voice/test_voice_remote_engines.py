"""Speech to text and text to speech through OpenAI-compatible endpoints: the real `openai`
client against a local stub server, and the configuration that selects them."""

from __future__ import annotations

import io
import wave
from collections.abc import Iterator

import numpy as np
import pytest

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.providers.speech import (
    RemoteRecognizer,
    RemoteVoice,
    SpeechError,
    SpeechToText,
    TextToSpeech,
    TranscriptionError,
)
from realtime.voice.engines import EngineConfigError, SpeechConfig, build_engines
from tests.support.openai_stub import OpenAIStub


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    server = OpenAIStub()
    yield server
    server.close()


def stereo_wav(rate: int) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.array([16384, 0] * 100, dtype="<i2").tobytes())
    return buf.getvalue()


def test_remote_stt_sends_a_wav_and_the_hotwords_as_prompt(stub: OpenAIStub) -> None:
    stub.transcribe = lambda form: "  Thaldrin, where is the\n Sunblade? "
    samples = (0.2 * np.sin(np.arange(8000) / 5)).astype(np.float32)
    stt = RemoteRecognizer("whisper-1", base_url=stub.base_url)
    heard = stt.transcribe(samples, 16_000, hotwords="Thaldrin Ashvale, Sunblade")

    assert heard.text == "Thaldrin, where is the Sunblade?"
    assert heard.word_confidences == []  # the endpoint measures none: none are invented
    path, form = stub.requests[-1]
    assert path.endswith("/audio/transcriptions")
    assert form["model"] == "whisper-1" and form["prompt"] == "Thaldrin Ashvale, Sunblade"
    with wave.open(io.BytesIO(form["file"])) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnframes()) == (16_000, 2, 8000)

    stub.fail_next = 1
    with pytest.raises(TranscriptionError):
        stt.transcribe(samples, 16_000)


def test_remote_tts_decodes_the_wav_it_asked_for(stub: OpenAIStub) -> None:
    stub.speech = lambda body: stereo_wav(24_000)
    voice = RemoteVoice.create("tts-1", voice="onyx", base_url=stub.base_url)
    spoken = voice.synthesize("Mind the sparks.")
    assert spoken.sample_rate == 24_000 and len(spoken.samples) == 100
    assert np.allclose(spoken.samples, 0.25)  # 16384/32768 mixed with silence
    _, body = stub.requests[-1]
    assert body["response_format"] == "wav" and body["voice"] == "onyx"

    stub.speech = lambda body: b"ID3 not a wav"
    with pytest.raises(SpeechError):
        voice.synthesize("Again.")


def test_engines_follow_the_configuration(stub: OpenAIStub) -> None:
    settings = Settings(tts_model="tts-1", tts_base_url=stub.base_url)
    local = build_engines(SpeechConfig.from_env(settings, {}), chat_model="m",
                          chat_base_url=None)
    assert isinstance(local.stt, SpeechToText) and isinstance(local.tts, TextToSpeech)

    env = {"GLYPHOXA_STT_MODEL": "whisper-1", "GLYPHOXA_STT_BASE_URL": stub.base_url,
           "GLYPHOXA_VOICE_TTS": "remote"}
    remote = build_engines(SpeechConfig.from_env(settings, env), chat_model="m",
                           chat_base_url=None)
    assert isinstance(remote.stt, RemoteRecognizer) and remote.stt.base_url == stub.base_url
    assert isinstance(remote.tts, RemoteVoice)
    remote.load()  # nothing local to load: no model is touched

    with pytest.raises(EngineConfigError):
        build_engines(SpeechConfig.from_env(Settings(), {"GLYPHOXA_VOICE_TTS": "remote"}),
                      chat_model="m", chat_base_url=None)
