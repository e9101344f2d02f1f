"""Which speech and chat engines the voice loop runs on, chosen by configuration.

Offline by default (faster-whisper and piper from their registry packages). An
OpenAI-compatible transcription endpoint is used when GLYPHOXA_STT_MODEL is set (at
GLYPHOXA_STT_BASE_URL); the `/audio/speech` endpoint the recaps use (GLYPHOXA_TTS_MODEL,
GLYPHOXA_TTS_BASE_URL, GLYPHOXA_TTS_VOICE) when GLYPHOXA_VOICE_TTS=remote: a separate switch,
because configuring spoken recaps must not move the live voice off the local engine.
Nothing loads here: local engines load on first use, or when `load()` is called.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from glyphoxa_pipelines.config import Settings
from realtime.voice.chat import OpenAIChat
from realtime.voice.interfaces import ChatModel, Recognizer, Synthesizer
from realtime.voice.s2s import SpeechToSpeech


@dataclass
class VoiceEngines:
    stt: Recognizer
    chat: ChatModel
    tts: Synthesizer
    # a new speech-to-speech engine per conversation (each holds its own connection); None
    # when none is configured
    s2s: Callable[[], SpeechToSpeech] | None = None

    def load(self) -> None:
        """Load local models now (a server does this at start, not on the first turn)."""
        for engine in (self.stt, self.tts):
            load = getattr(engine, "load", None)
            if callable(load):
                load()
        freeze_loaded()


def freeze_loaded() -> None:
    """What is alive once the models are loaded lives as long as the process: out of the
    garbage collector's sight (`gc.freeze`), a full collection during a turn no longer walks
    the models' objects, which is a pause on the event loop that runs the memory work."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class SpeechConfig:
    stt_model: str | None = None  # set: the remote transcription endpoint
    stt_base_url: str | None = None
    remote_tts: bool = False
    tts_model: str | None = None
    tts_base_url: str | None = None
    tts_voice: str = "alloy"
    s2s_url: str | None = None  # set: an OpenAI-Realtime-style websocket for /s2s turns
    s2s_api_key: str | None = None

    @classmethod
    def from_env(cls, settings: Settings, env: Mapping[str, str] | None = None) -> SpeechConfig:
        env = os.environ if env is None else env
        return cls(
            stt_model=env.get("GLYPHOXA_STT_MODEL") or None,
            stt_base_url=env.get("GLYPHOXA_STT_BASE_URL") or None,
            remote_tts=env.get("GLYPHOXA_VOICE_TTS", "local").lower() == "remote",
            tts_model=settings.tts_model, tts_base_url=settings.tts_base_url,
            tts_voice=settings.tts_voice,
            s2s_url=env.get("GLYPHOXA_S2S_URL") or None,
            s2s_api_key=env.get("GLYPHOXA_S2S_API_KEY") or None,
        )


class EngineConfigError(ValueError):
    """The configuration names a remote engine without what it needs."""


def recognizer(config: SpeechConfig) -> Recognizer:
    from glyphoxa_pipelines.providers.speech import RemoteRecognizer

    if config.stt_model:
        return RemoteRecognizer(config.stt_model, base_url=config.stt_base_url)
    return live_whisper()


def live_whisper() -> Recognizer:
    """The bundled tiny.en as the live loop runs it: the encoder on the utterance plus
    padding by its length (not on 30 s), and one thread, so the other core is left to the
    event loop and its memory work."""
    from glyphoxa_pipelines.providers.speech import SpeechToText
    from glyphoxa_pipelines.providers.speech.whisper import (
        FINAL_MIN_PAD_S,
        FINAL_PAD_PER_AUDIO_S,
        LIVE_ENCODER_PAD_S,
    )

    return SpeechToText(encoder_pad_s=LIVE_ENCODER_PAD_S, cpu_threads=1,
                        min_encoder_pad_s=FINAL_MIN_PAD_S, pad_per_audio_s=FINAL_PAD_PER_AUDIO_S)


def synthesizer(config: SpeechConfig) -> Synthesizer:
    from glyphoxa_pipelines.providers.speech import RemoteVoice, TextToSpeech

    if not config.remote_tts:
        return TextToSpeech()
    if not config.tts_model:
        raise EngineConfigError("GLYPHOXA_VOICE_TTS=remote needs GLYPHOXA_TTS_MODEL")
    return RemoteVoice.create(config.tts_model, voice=config.tts_voice,
                              base_url=config.tts_base_url)


def build_engines(config: SpeechConfig, *, chat_model: str, chat_base_url: str | None
                  ) -> VoiceEngines:
    return VoiceEngines(recognizer(config), OpenAIChat(chat_model, base_url=chat_base_url),
                        synthesizer(config), speech_to_speech(config))


def speech_to_speech(config: SpeechConfig) -> Callable[[], SpeechToSpeech] | None:
    if not config.s2s_url:
        return None
    from realtime.voice.openai_realtime import OpenAIRealtimeEngine

    url, key = config.s2s_url, config.s2s_api_key
    return lambda: OpenAIRealtimeEngine(url, api_key=key)


def engines_from_env(settings: Settings, env: Mapping[str, str] | None = None) -> VoiceEngines:
    """The engines `glyphoxa serve --voice` runs: the chat model must be configured."""
    if not settings.llm_model:
        raise EngineConfigError("the voice needs a chat model: set GLYPHOXA_LLM_MODEL")
    return build_engines(SpeechConfig.from_env(settings, env), chat_model=settings.llm_model,
                         chat_base_url=settings.llm_base_url)
