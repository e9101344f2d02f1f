"""The loop's parts on their own: VAD boundaries, hotword order and limit, sentence cuts, and
bad tool calls answered to the model instead of raised (on the real service)."""

from __future__ import annotations

from typing import Any

import numpy as np

from glyphoxa_pipelines.memory import Entity
from glyphoxa_pipelines.providers.speech import Synthesized
from realtime.tools import ToolScope, get_spec
from realtime.voice.audio import WavSource, discord_pcm, read_wav, wav_bytes
from realtime.voice.hotwords import hotwords_text, ranked_names
from realtime.voice.interfaces import AudioFrame, ToolCall
from realtime.voice.speech_out import SentenceSplitter
from realtime.voice.tool_bridge import function_definitions, run_call
from realtime.voice.vad import EnergyVad
from tests.voice.conftest import VoiceCampaign

RATE = 16_000


def tone(seconds: float, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def quiet(seconds: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    return (0.001 * rng.standard_normal(int(seconds * RATE))).astype(np.float32)


def run_vad(samples: np.ndarray, vad: EnergyVad) -> list[Any]:
    out = []
    for start in range(0, len(samples), RATE // 50):
        u = vad.feed(AudioFrame(samples[start:start + RATE // 50], RATE))
        if u is not None:
            out.append(u)
    return out


def test_vad_splits_on_long_silence_not_on_a_pause() -> None:
    audio = np.concatenate([quiet(0.5), tone(1.0), quiet(0.2), tone(0.5), quiet(0.8),
                            tone(0.6), quiet(0.8)])
    found = run_vad(audio, EnergyVad(end_silence_ms=500))
    assert len(found) == 2  # the 0.2 s pause stays inside the first utterance
    assert 0.25 <= found[0].start_s <= 0.5 and 1.6 < found[0].seconds < 2.5
    assert found[1].start_s > 2.5


def test_vad_ignores_a_click_and_silence() -> None:
    audio = np.concatenate([quiet(0.5), tone(0.04), quiet(1.0)])
    assert run_vad(audio, EnergyVad()) == []


async def test_wav_source_round_trip_and_trailing_silence() -> None:
    clip = Synthesized(tone(0.5), RATE)
    back = read_wav(wav_bytes(clip))
    assert back.sample_rate == RATE and abs(back.seconds - 0.5) < 1e-3
    frames = [f async for f in WavSource(back, frame_ms=20).frames()]
    assert sum(len(f.samples) for f in frames) == int((0.5 + 0.6) * RATE)
    pcm = discord_pcm(clip)
    assert len(pcm) == int(0.5 * 48_000) * 2 * 2  # 48 kHz, stereo, 16-bit


def entity(eid: str, etype: str, name: str, *aliases: str) -> Entity:
    return Entity("c", eid, etype, name, list(aliases))


def test_hotwords_scene_then_recent_then_by_type_within_the_limit() -> None:
    ents = [
        entity("sword", "item", "Sunblade"),
        entity("borga", "npc", "Borga"),
        entity("kragh", "location", "Kraghammer"),
        entity("thal", "npc", "Thaldrin Ashvale", "Thaldrin"),
        entity("tank", "location", "The Gilded Tankard", "Gilded Tankard"),
    ]
    names = ranked_names(ents, scene={"location": "tank", "present": ["thal"]},
                         recent_text=["we went to kraghammer yesterday"])
    assert names == ["The Gilded Tankard", "Gilded Tankard", "Thaldrin Ashvale", "Thaldrin",
                     "Kraghammer", "Borga", "Sunblade"]
    short = hotwords_text(names, max_tokens=12)
    assert short == "The Gilded Tankard Gilded Tankard"  # cut at a name, never inside one
    assert hotwords_text([]) is None


def test_sentences_are_cut_as_they_complete() -> None:
    s = SentenceSplitter()
    assert s.feed("Aye. The Sunblade was") == []  # "Aye." alone is too short to speak
    assert s.feed(" stolen! Who asks") == ["Aye. The Sunblade was stolen!"]
    assert s.feed("? ") == []
    assert s.flush() == ["Who asks?"]


async def test_bad_tool_calls_are_answered_not_raised(
    voice_service: Any, voice_campaign: VoiceCampaign
) -> None:
    scope = ToolScope(voice_campaign.campaign_id, voice_campaign.session_id, "thaldrin")
    offered = ["memory.query_entities"]
    defs = function_definitions([get_spec("memory.query_entities")])
    assert defs[0]["function"]["name"] == "memory__query_entities"
    cases = {
        ToolCall("a", "memory__search_graph", "{}"): "not available",
        ToolCall("b", "memory__query_entities", "{not json"): "not JSON",
        ToolCall("c", "memory__query_entities", "[1]"): "JSON object",
        ToolCall("d", "memory__query_entities", '{"depth": "deep"}'): "depth",
    }
    for call, problem in cases.items():
        outcome = await run_call(voice_service, call, scope, offered)
        assert not outcome.ok and problem in outcome.result["error"]
        assert outcome.message()["tool_call_id"] == call.id
    good = await run_call(voice_service, ToolCall("e", "memory__query_entities",
                                                  '{"name": "Thaldrin"}'), scope, offered)
    assert good.ok and good.result["results"][0]["id"] == "thaldrin"


class FakeVoiceClient:
    """Stands in for discord.VoiceClient: records what it was asked to play."""

    def __init__(self) -> None:
        self.playing: Any = None

    def is_playing(self) -> bool:
        return self.playing is not None

    def play(self, source: Any) -> None:
        self.playing = source


async def test_discord_playback_and_receive_adapters() -> None:
    from types import SimpleNamespace

    from realtime.voice.discord_audio import FRAME_BYTES, DiscordPlayback, VoiceReceiveSource

    client = FakeVoiceClient()
    playback = DiscordPlayback(client)
    await playback.play(Synthesized(tone(0.05), RATE))
    assert client.playing is playback
    frames = []
    while chunk := playback.read():
        frames.append(chunk)
    assert len(frames) == 3 and all(len(f) == FRAME_BYTES for f in frames)  # 50 ms, padded

    source = VoiceReceiveSource()
    user = SimpleNamespace(id=42, display_name="Ana")
    pcm = (np.full(960 * 2, 1000, dtype="<i2")).tobytes()  # 20 ms stereo at 48 kHz
    source.write(user, SimpleNamespace(pcm=pcm))
    source.write(None, SimpleNamespace(pcm=pcm))  # an unknown SSRC: no user, dropped
    source.close()
    got = [f async for f in source.frames()]
    assert len(got) == 1 and got[0].speaker_id == "42" and got[0].speaker_name == "Ana"
    assert got[0].sample_rate == 48_000 and len(got[0].samples) == 960


def test_partial_passes_use_a_shorter_window_of_the_same_model(stt: Any, tts: Any) -> None:
    from glyphoxa_pipelines.providers.speech import SpeechToText
    from realtime.voice.loop import VoiceConfig, VoiceLoop

    partial = stt.for_partials()
    assert partial.load() is stt.load()  # one model in memory, two settings
    assert partial.min_encoder_pad_s == 3.0 and not partial.fallback_full_window
    assert partial.pad_per_audio_s == 1.0
    # finals: padded twice their audio, 4 s at least, the 30 s fallback kept
    assert stt.fallback_full_window and stt.min_encoder_pad_s == 4.0
    assert stt.pad_per_audio_s == 2.0
    assert SpeechToText().for_partials() is None  # faster-whisper's own window: nothing to cut
    clip = tts.synthesize("Grimjaw, good morning.")
    heard = partial.transcribe(clip.samples, clip.sample_rate, hotwords="Grimjaw").text
    assert "morning" in heard.lower()
    unused: Any = None
    loop = VoiceLoop(unused, VoiceConfig("s", "npc"), stt=stt, chat=unused, tts=unused,
                     sink=unused)
    assert loop.partial_stt is not stt and loop.partial_stt.min_encoder_pad_s == 3.0




def test_the_padding_follows_the_audio_between_its_bounds(stt: Any) -> None:
    """The encoder's window is the audio plus its padding: a 1 s tail pays for 5 s of encoder
    in a final (not 13) and 4 s in a partial; 12 s of padding at most."""
    from glyphoxa_pipelines.providers.speech import SpeechToText

    partial = stt.for_partials()
    assert [stt.encoder_pad(s) for s in (0.5, 1.0, 3.0, 7.0)] == [4.0, 4.0, 6.0, 12.0]
    assert [partial.encoder_pad(s) for s in (0.5, 1.0, 5.0, 13.0)] == [3.0, 3.0, 5.0, 12.0]
    assert SpeechToText(encoder_pad_s=12.0).encoder_pad(1.0) == 12.0  # no bounds: fixed
    assert SpeechToText().encoder_pad(1.0) is None  # faster-whisper's own 30 s window


def test_a_final_that_loops_tries_the_full_pad_before_the_30_s_window(
    stt: Any, monkeypatch: Any,
) -> None:
    """A short tail padded to 4 s that loops is decoded again with 12 s of silence; only if
    that loops too does the 30 s window run. Partials never retry: they give up empty."""
    from glyphoxa_pipelines.providers.speech import Transcript, whisper

    tried: list[float] = []

    def decode(model: Any, audio: Any, *, pad_s: float, **_: Any) -> Transcript | None:
        tried.append(pad_s)
        return Transcript("Grimjaw lives in Ironhold") if pad_s >= 12.0 else None  # 4 s loops

    monkeypatch.setattr(whisper, "decode_short", decode)
    tail = np.zeros(16_000, np.float32)  # 1 s of audio
    assert stt.transcribe(tail, 16_000).text == "Grimjaw lives in Ironhold"
    assert tried == [4.0, 12.0]
    tried.clear()
    assert stt.for_partials().transcribe(tail, 16_000).text == ""
    assert tried == [3.0]
    assert stt.pads_to_try(12.0) == (12.0,)  # already the full pad: straight to the window


def test_the_quiet_after_the_last_loud_frame_is_cut_before_the_padding() -> None:
    from glyphoxa_pipelines.providers.speech.whisper_window import without_trailing_quiet

    said = np.concatenate([quiet(0.2), tone(1.0), quiet(0.5)])
    cut = without_trailing_quiet(said, RATE)
    assert abs(len(cut) / RATE - 1.3) < 0.02  # lead kept, 0.1 s of the trailing quiet kept
    assert np.array_equal(cut, said[:len(cut)])
    silent = np.zeros(RATE, np.float32)
    assert len(without_trailing_quiet(silent, RATE)) == RATE  # nothing loud: nothing cut
    loud_to_the_end = tone(1.0)
    assert len(without_trailing_quiet(loud_to_the_end, RATE)) == RATE


def test_a_final_is_padded_by_its_speech_not_by_the_quiet_after_it(
    stt: Any, monkeypatch: Any,
) -> None:
    """2.5 s of speech and the VAD's 1.5 s of quiet: the padding is twice 2.6 s, not twice
    4 s, and the decoder sees the speech and 0.1 s of the quiet before it."""
    from dataclasses import replace

    from glyphoxa_pipelines.providers.speech import Transcript, whisper

    seen: list[tuple[float, float]] = []

    def decode(model: Any, audio: Any, *, pad_s: float, **_: Any) -> Transcript | None:
        seen.append((round(len(audio) / RATE, 2), round(pad_s, 2)))
        return Transcript("Grimjaw")

    monkeypatch.setattr(whisper, "decode_short", decode)
    line = np.concatenate([tone(2.5), quiet(1.5)])
    replace(stt, trim_trailing_quiet=True).transcribe(line, RATE)
    stt.transcribe(line, RATE)  # the default keeps the quiet (it made the finals' p95 worse)
    assert seen == [(2.6, 5.2), (4.0, 8.0)]


async def test_partial_passes_prompt_fewer_names_than_the_final(
    voice_service: Any, voice_campaign: VoiceCampaign,
) -> None:
    from glyphoxa_pipelines.providers.speech import Transcript
    from realtime.voice.loop import VoiceConfig, VoiceLoop

    prompts: dict[str, str | None] = {}

    class Recording:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        def transcribe(self, samples: Any, rate: int, *, hotwords: str | None = None
                       ) -> Transcript:
            prompts[self.kind] = hotwords
            return Transcript("")

    unused: Any = None
    loop = VoiceLoop(voice_service, VoiceConfig(voice_campaign.session_id, "thaldrin",
                                                partial_hotword_tokens=10),
                     stt=Recording("final"), partial_stt=Recording("partial"), chat=unused,
                     tts=unused, sink=unused)
    audio = tone(1.0)
    await loop._transcribe(audio, RATE, "", partial=True)
    await loop._transcribe(audio, RATE, "", partial=False)
    final, partial = prompts["final"] or "", prompts["partial"] or ""
    assert partial and final.startswith(partial) and len(partial) < len(final)
    assert partial.startswith("The Gilded Tankard")  # the scene still comes first
