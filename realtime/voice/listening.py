"""One speaker's open utterance: the VAD, the passes transcribed while they speak, the final.

Two ways to hear an utterance, kept side by side so the bench compares them in one run:

- streaming (the default): partial passes over the audio not yet committed
  (`StreamingTranscript`), each one's words sent on as a partial (pre-fetch); and an *early
  final*: once the speaker has been quiet `early_final_ms`, the uncommitted tail is decoded
  right away instead of after the VAD's full `end_silence_ms` hangover. If the speaker stays
  quiet until the VAD closes, nothing was added but silence, so that decode is the final; if
  they speak again it is dropped. The end of speech then waits for a tail that is usually
  decoded already.
- whole (the loop as first built): partials transcribe all the speech so far, and the final
  transcribes the whole utterance once the VAD has closed it.

At most one pass per speaker is in flight, and a final waits for the partial before it: the
CPU they share is what the turn needs next. Passes back off when decoding falls behind (a
loaded machine): the next one starts no sooner after the last ended than that one took, so
partials hold the STT worker at most half the time and the early final finds it free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from glyphoxa_pipelines.providers.speech import Transcript
from realtime.voice.interfaces import AudioFrame
from realtime.voice.streaming_stt import StreamingTranscript
from realtime.voice.vad import EnergyVad, Utterance

log = logging.getLogger(__name__)

# (audio, rate, the utterance's words already committed before this audio, a partial pass?)
Transcribe = Callable[[np.ndarray, int, str, bool], Awaitable[Transcript]]
OnPartial = Callable[[str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ListenSettings:
    partial_every_s: float = 1.0  # 0 turns partials (and so speculative pre-fetch) off
    streaming: bool = True
    early_final_ms: float = 300.0  # quiet this long: decode the tail before the VAD closes
    # each pass waits this many times longer than the one before it (1: a fixed cadence):
    # a pass re-decodes the whole uncommitted window, so a fixed cadence costs the square of
    # the utterance's length, while what pre-fetch needs (the names said so far) and what
    # the early final leaves to decode change little after the first passes
    partial_growth: float = 2.0
    # a dropped early final folded in as a pass (`_as_a_pass`): off, it cut partial CPU by a
    # third but raised WER and name errors on held-out lines (docs/DESIGN.md)
    early_as_pass: bool = False

    def __post_init__(self) -> None:
        if not self.partial_growth >= 1.0:  # also refuses NaN
            raise ValueError(f"partial_growth must be at least 1 (a fixed cadence), "
                             f"not {self.partial_growth}")


@dataclass(frozen=True, slots=True)
class Heard:
    """An utterance's final transcript and how it was reached."""

    transcript: Transcript
    partials: int
    tail_s: float  # audio the final decode took after the utterance had ended
    early: bool  # the early final was used


class Listener:
    def __init__(self, vad: EnergyVad, transcribe: Transcribe, on_partial: OnPartial,
                 settings: ListenSettings, on_early: OnPartial | None = None,
                 on_early_start: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.vad = vad
        # How long a pass took is read off this clock (a live source's wall time); a caller
        # feeding recorded audio faster than real time passes the audio's own time instead.
        self._clock = clock
        self._transcribe = transcribe
        self._on_partial = on_partial
        self._on_early = on_early or on_partial  # the early final's text
        self._on_early_start = on_early_start  # an early final was begun
        self.settings = settings
        self._reset()

    def _reset(self) -> None:
        self._stream: StreamingTranscript | None = None
        self._job: asyncio.Task[None] | None = None
        self._early: tuple[asyncio.Task[tuple[Transcript, float, float]], float] | None = None
        self._next_partial_s = 0.0
        self._partials = 0
        self._pass_free_at = 0.0  # monotonic time before which no partial pass starts

    def feed(self, frame: AudioFrame) -> Utterance | None:
        """The frame into the VAD; passes scheduled; the utterance when it has ended."""
        utterance = self.vad.feed(frame)
        if utterance is None and self.vad.active:
            if self._stream is None:
                self._stream = StreamingTranscript(frame.sample_rate)
            self._schedule(frame.sample_rate)
        return utterance

    def _schedule(self, rate: int) -> None:
        s = self.settings
        if s.streaming and self.vad.quiet_ms >= s.early_final_ms:
            if self._early is None:
                self._early = (asyncio.create_task(self._early_final(self.vad.speech_so_far(),
                                                                     rate)),
                               self.vad.voiced_ms)
                if self._on_early_start is not None:
                    self._on_early_start()
            return
        if self._early is not None and self.vad.quiet_ms < s.early_final_ms:
            # spoke again: that decode missed the new words, but it is a pass over the
            # window all the same (a pause is where a sentence ends, a clean cut)
            if s.streaming and s.early_as_pass:
                self._as_a_pass(self._early[0])
                self._next_partial_s = len(self.vad.speech_so_far()) / rate
            self._early = None
        if s.partial_every_s <= 0 or (self._job is not None and not self._job.done()):
            return
        if self._clock() < self._pass_free_at:
            return  # the last pass was slow: leave the worker free as long as it took
        samples = self.vad.speech_so_far()
        heard_s = len(samples) / rate
        every_s = s.partial_every_s * s.partial_growth ** self._partials
        if heard_s < self._next_partial_s + every_s:
            return
        self._next_partial_s = heard_s
        self._partials += 1
        self._job = asyncio.create_task(self._partial(samples, rate))

    async def _partial(self, samples: np.ndarray, rate: int) -> None:
        """Best effort: a partial only warms pre-fetch (and, streaming, commits words), so
        its failure is logged, not raised."""
        try:
            stream = self._stream
            began = self._clock()
            if self.settings.streaming and stream is not None:
                window, offset = stream.window(samples)
                heard = await self._transcribe(window, rate, stream.committed_text(), True)
                stream.update(heard, offset, len(samples) / rate)
                text = stream.so_far()
            else:
                text = (await self._transcribe(samples, rate, "", True)).text
            ended = self._clock()
            self._pass_free_at = ended + (ended - began)
            if text.strip():
                await self._on_partial(text)
        except Exception:
            log.exception("partial transcription failed")

    async def _tail(self, samples: np.ndarray, rate: int) -> tuple[Transcript, float, float]:
        """The audio after the committed words, decoded (after any partial in flight)."""
        await self.drain()
        stream = self._stream
        if stream is None or not self.settings.streaming:
            return await self._transcribe(samples, rate, "", False), 0.0, len(samples) / rate
        window, offset = stream.window(samples)
        return (await self._transcribe(window, rate, stream.committed_text(), False), offset,
                len(window) / rate)

    async def _early_final(self, samples: np.ndarray, rate: int
                           ) -> tuple[Transcript, float, float]:
        """The tail decoded before the VAD closes, and its whole text sent on as a partial:
        pre-fetch then starts on what is most likely the final transcript while the VAD's
        hangover runs, so the turn's hot context finds it fetched instead of waiting for it."""
        stream = self._stream
        tail, offset, tail_s = await self._tail(samples, rate)
        text = stream.final(tail, offset).text if stream is not None else tail.text
        if text.strip():
            try:
                await self._on_early(text)
            except Exception:  # best effort, like any partial: the final stands without it
                log.exception("pre-fetch on the early final failed")
        return tail, offset, tail_s

    def _as_a_pass(self, early: asyncio.Task[tuple[Transcript, float, float]]) -> None:
        """A dropped early final, once decoded, folded into the stream as a partial pass: a
        speaker who pauses between sentences made the early final decode the whole
        uncommitted window at every pause, and all that work was thrown away; as a pass it
        commits the words it agrees on, so the final's tail is shorter."""
        stream = self._stream
        if stream is None:
            return

        def fold(task: asyncio.Task[tuple[Transcript, float, float]]) -> None:
            if task.cancelled() or task.exception() is not None or stream is not self._stream:
                return
            tail, offset, tail_s = task.result()
            stream.update(tail, offset, offset + tail_s)

        early.add_done_callback(fold)

    async def drain(self) -> None:
        """Wait for the partial in flight, if any (its errors are already logged)."""
        if self._job is not None:
            with contextlib.suppress(Exception):
                await self._job

    async def final(self, utterance: Utterance) -> Heard:
        """The utterance's transcript: the early final when only silence followed it, else
        the tail decoded now."""
        early = self._early
        stream, partials = self._stream, self._partials
        used = early is not None and early[1] == utterance.voiced_ms
        try:
            if used and early is not None:
                tail, offset, tail_s = await early[0]
            else:
                tail, offset, tail_s = await self._tail(utterance.samples,
                                                        utterance.sample_rate)
        finally:
            self._reset()
        transcript = stream.final(tail, offset) if stream is not None and \
            self.settings.streaming else tail
        return Heard(transcript, partials, round(tail_s, 3), used)
