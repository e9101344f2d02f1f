"""Work moved off the turn's path, on the real service and database: the hot context read
ahead during the VAD's hangover when the early final is the transcript (counted as one turn,
seeing the earlier turns' lines), and partial passes that back off when decoding is slow."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from glyphoxa_pipelines.providers.speech import Transcript, TranscriptWord
from realtime.voice.audio import BufferSink, WavSource
from realtime.voice.chat import OpenAIChat
from realtime.voice.interfaces import AudioFrame
from realtime.voice.listening import Listener, ListenSettings
from realtime.voice.loop import VoiceConfig, VoiceLoop
from realtime.voice.vad import EnergyVad
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign
from tests.voice.scripted import Silent, two_utterances

RATE = 16_000


class EchoRecognizer:
    """Hears the next scripted line in any window (the loop's wiring is under test)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.decodes = 0

    def transcribe(self, samples: Any, sample_rate: int, *, hotwords: str | None = None
                   ) -> Transcript:
        self.decodes += 1
        return Transcript(self.lines[0] if self.decodes == 1 else self.lines[-1])


async def test_the_hot_context_is_read_during_the_hangover_and_counted_once(
    voice_service: Any, voice_campaign: VoiceCampaign, chat_stub: StreamingChatStub,
) -> None:
    sid = voice_campaign.session_id
    chat_stub.respond = lambda body: {"content": "Aye, that I do."}
    loop = VoiceLoop(voice_service, VoiceConfig(sid, "thaldrin", partial_every_s=0),
                     stt=EchoRecognizer(["Have you seen Mirela today?",
                                         "Where did she go after that?"]),
                     chat=OpenAIChat("stub", base_url=chat_stub.base_url), tts=Silent(),
                     sink=BufferSink())
    before = voice_service.turn_count(sid, "thaldrin")
    first, second = await loop.run(WavSource(two_utterances(lead_in=4000), speaker_id="ana",
                                             speaker_name="Ana", realtime=True))
    assert first.early_final and second.early_final
    assert first.read_ahead and second.read_ahead
    assert voice_service.turn_count(sid, "thaldrin") == before + 2  # read ahead, counted once
    # turn 2's context was read ahead after turn 1's line and reply were stored
    prompt = chat_stub.requests[1]["messages"][0]["content"]
    assert "Have you seen Mirela today?" in prompt and "Aye, that I do." in prompt


class SlowRecognizer:
    """Every decode takes `took_s` of wall time and hears one word per second of audio."""

    def __init__(self, took_s: float) -> None:
        self.took_s = took_s
        self.started: list[float] = []

    async def __call__(self, samples: np.ndarray, rate: int, context: str,
                       partial: bool = False) -> Transcript:
        self.started.append(time.monotonic())
        await asyncio.sleep(self.took_s)
        n = int(len(samples) / rate)
        return Transcript(" ".join(["word"] * n), tuple(
            TranscriptWord("word", k + 0.1, k + 0.6, 0.9) for k in range(n)))


async def passes_over(seconds: float, took_s: float) -> SlowRecognizer:
    recognizer = SlowRecognizer(took_s)

    async def on_partial(text: str) -> None:
        return None

    listener = Listener(EnergyVad(), recognizer, on_partial, ListenSettings(partial_every_s=0.3, partial_growth=1.0))
    loud = np.full(RATE // 50, 0.3, np.float32)
    for _ in range(int(seconds * 50)):  # 20 ms frames, paced as a live source is
        listener.feed(AudioFrame(loud, RATE, "ana"))
        await asyncio.sleep(0.02)
    await listener.drain()
    return recognizer


async def test_partial_passes_back_off_when_decoding_is_slow() -> None:
    quick, slow = await asyncio.gather(passes_over(3.0, 0.02), passes_over(3.0, 0.6))
    # quick decodes: a pass every 0.3 s of speech; slow ones: each waits as long again as the
    # last took, so passes start at least 1.2 s apart instead of back to back (0.6 s)
    assert len(quick.started) >= 7
    gaps = np.diff(slow.started)
    assert len(slow.started) >= 2 and float(gaps.min()) >= 1.15


async def test_the_turn_takes_the_freshest_read_that_is_ready() -> None:
    from realtime.voice.read_ahead import ReadAhead

    gates: list[asyncio.Event] = []
    results = iter(["at the trigger", "after the early final", "again"])

    async def read() -> str:
        gate = asyncio.Event()
        gates.append(gate)
        value = next(results)
        await gate.wait()
        if value == "again":
            raise RuntimeError("the database went away")
        return value

    ahead: ReadAhead[str] = ReadAhead(read)
    ahead.start("ana", restart=True)
    ahead.start("ana", restart=False)
    await asyncio.sleep(0)
    gates[0].set()  # only the first read is done when the turn comes: it is taken
    assert await ahead.take("ana") == "at the trigger"
    assert await ahead.take("ana") is None  # taken once

    ahead.start("bo", restart=True)
    await asyncio.sleep(0)
    taking = asyncio.create_task(ahead.take("bo"))  # none is done: the first to finish
    await asyncio.sleep(0)
    assert not taking.done()
    gates[2].set()  # that read fails: nothing read ahead, the turn reads now
    assert await taking is None

    results = iter(["old", "new", "newest"])
    gates.clear()
    ahead.start("cy", restart=True)
    ahead.start("cy", restart=True)  # the speaker went on: the first is dropped
    ahead.start("cy", restart=False)
    await asyncio.sleep(0)
    for gate in gates:
        gate.set()
    await asyncio.sleep(0.01)
    assert await ahead.take("cy") == "newest"  # both ready: the later one


async def test_a_read_already_done_is_taken_without_waiting() -> None:
    from realtime.voice.read_ahead import ReadAhead

    release = asyncio.Event()
    values = iter(["done", "slow"])

    async def read() -> str:
        value = next(values)
        if value == "slow":
            await release.wait()
        return value

    ahead: ReadAhead[str] = ReadAhead(read)
    ahead.start("ana", restart=True)
    assert ahead.take_ready("ana") is None  # nothing has run yet: left for `take`
    ahead.start("ana", restart=False)
    await asyncio.sleep(0)
    assert ahead.take_ready("ana") == "done"  # the slow later read is not waited for
    assert ahead.take_ready("ana") is None and await ahead.take("ana") is None
    release.set()
