"""The NPC's answer spoken as it streams: text is cut into sentences, each synthesized in a
worker thread and played in order, while the model keeps generating the next one.

A sentence is the unit because TTS prosody needs one (word-by-word speech sounds broken) and
the first one is short enough that its audio starts well before the answer is complete.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field

from realtime.voice.interfaces import AudioSink, Synthesizer

# A sentence ends at . ! ? (or …) followed by whitespace; "Mr. " style abbreviations are rare
# in an NPC's speech and would only cut a sentence early, not lose it.
SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+")
MIN_SENTENCE_CHARS = 12  # "Aye." alone is joined to what follows: one synthesis call fewer


@dataclass
class SentenceSplitter:
    _pending: str = ""

    def feed(self, text: str) -> list[str]:
        """Complete sentences now available from the text streamed so far."""
        self._pending += text
        out: list[str] = []
        start = 0
        for match in SENTENCE_END.finditer(self._pending):
            piece = self._pending[start:match.end()].strip()
            if len(piece) < MIN_SENTENCE_CHARS:
                continue
            out.append(piece)
            start = match.end()
        self._pending = self._pending[start:]
        return out

    def flush(self) -> list[str]:
        rest, self._pending = self._pending.strip(), ""
        return [rest] if rest else []


@dataclass
class Speaker:
    """Synthesizes and plays queued sentences in order; `first_audio_at` is the perf_counter
    time the first clip reached the sink."""

    tts: Synthesizer
    sink: AudioSink
    first_audio_at: float | None = None
    audio_s: float = 0.0
    synth_s: list[float] = field(default_factory=list)
    _queue: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    def say(self, sentence: str) -> None:
        self._queue.put_nowait(sentence)

    async def finish(self) -> None:
        """Wait until everything queued has been played."""
        self._queue.put_nowait(None)
        if self._task is not None:
            await self._task

    async def _run(self) -> None:
        while (sentence := await self._queue.get()) is not None:
            began = time.perf_counter()
            audio = await asyncio.to_thread(self.tts.synthesize, sentence)
            self.synth_s.append(time.perf_counter() - began)
            if len(audio.samples) == 0:
                continue
            await self.sink.play(audio)
            if self.first_audio_at is None:
                self.first_audio_at = time.perf_counter()
            self.audio_s += audio.seconds
