"""The voice loop over HTTP, for clients without Discord and for tests: one WAV in (one
speaker's audio, any length, any rate), the NPC's answers out.

`POST /v1/voice/sessions/{session_id}/npcs/{npc_id}/turns` with `Content-Type: audio/wav`
(16-bit PCM) answers JSON: each turn the audio held (what was heard, written, the tools
called, the reply, stage timings) and the NPC's speech as a base64 WAV (`audio_wav`, null
when it said nothing). `POST .../npcs/{npc_id}/s2s` takes the same WAV to the configured
speech-to-speech engine instead (`S2SLoop`: the hot context as its instructions, the memory
tools bridged, both sides' transcripts to L1); 503 when none is configured
(`GLYPHOXA_S2S_URL`). The router is built around a running service and loaded engines
(`voice_router`), so mounting it is the app's choice: the main API does not load speech
models unless asked to.
"""

from __future__ import annotations

import base64
import wave
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request

from glyphoxa_pipelines.providers.speech import Synthesized
from realtime.service import MemoryService
from realtime.voice.audio import BufferSink, WavSource, read_wav, wav_bytes
from realtime.voice.engines import VoiceEngines
from realtime.voice.loop import VoiceConfig, VoiceLoop, summarize
from realtime.voice.openai_realtime import RealtimeProtocolError
from realtime.voice.s2s import S2SLoop

MAX_WAV_BYTES = 16 * 1024 * 1024  # ~8 minutes of 16 kHz mono: one speaker's turn, not a file


__all__ = ["MAX_WAV_BYTES", "VoiceEngines", "voice_router"]


def voice_router(service: Callable[[], MemoryService], engines: VoiceEngines) -> APIRouter:
    """Routes over `service()` (called per request, so the app may open it later)."""
    router = APIRouter(prefix="/v1/voice", tags=["voice"])

    @router.post("/sessions/{session_id}/npcs/{npc_id}/turns")
    async def turns(
        session_id: str,
        npc_id: str,
        request: Request,
        speaker_id: str = Query("player", max_length=200),
        speaker_name: str = Query("", max_length=200),
        hotwords: bool = Query(True, description="Bias STT towards the campaign's names."),
    ) -> dict[str, Any]:
        audio = read_body(await request.body())
        sink = BufferSink()
        loop = VoiceLoop(service(), VoiceConfig(session_id, npc_id, hotwords=hotwords),
                         stt=engines.stt, chat=engines.chat, tts=engines.tts, sink=sink)
        results = await loop.run(WavSource(audio, speaker_id=speaker_id,
                                           speaker_name=speaker_name))
        spoken = sink.joined()
        out = summarize(results)
        out["audio_wav"] = base64.b64encode(wav_bytes(spoken)).decode() if spoken else None
        return out

    @router.post("/sessions/{session_id}/npcs/{npc_id}/s2s")
    async def s2s_turns(
        session_id: str,
        npc_id: str,
        request: Request,
        speaker_id: str = Query("player", max_length=200),
    ) -> dict[str, Any]:
        if engines.s2s is None:
            raise HTTPException(503, "no speech-to-speech engine is configured "
                                "(GLYPHOXA_S2S_URL)")
        audio = read_body(await request.body())
        sink = BufferSink()
        loop = S2SLoop(service(), VoiceConfig(session_id, npc_id), engines.s2s(), sink)
        try:
            result = await loop.run(WavSource(audio, speaker_id=speaker_id))
        except (OSError, RealtimeProtocolError) as exc:  # the engine failed, not the request
            raise HTTPException(502, f"speech-to-speech engine failed: {exc}") from exc
        spoken = sink.joined()
        return {
            "heard": result.player, "replies": result.npc,
            "tools": [o.tool for o in result.tool_calls], "audio_s": round(result.audio_s, 2),
            "written": result.written,
            "audio_wav": base64.b64encode(wav_bytes(spoken)).decode() if spoken else None,
        }

    return router


def read_body(body: bytes) -> Synthesized:
    """The request's WAV; a clear 413 / 422 for a body that is too large or not a WAV."""
    if len(body) > MAX_WAV_BYTES:
        raise HTTPException(413, f"audio over {MAX_WAV_BYTES} bytes")
    try:
        return read_wav(body)
    except (wave.Error, ValueError, EOFError) as exc:
        raise HTTPException(422, f"not a 16-bit PCM WAV: {exc}") from exc
