"""The cascaded voice loop for one NPC in one live session.

Per speaker: frames -> a `Listener` (VAD, passes transcribed while the player speaks, each
sent to `MemoryService.partial` so pre-fetch runs before they finish). When the VAD closes the
utterance:

1. its final transcript (with streaming, only the tail after the committed words is left,
   often decoded already), the campaign's names as hotwords, Whisper's word probabilities
   kept as `word_confidences`;
2. at once: the line's inline correction (`prepare_entries`) and the hot context, which
   has what pre-fetch brought from the partials and the early final. When the early final
   is the transcript, that context was read ahead, during the VAD's hangover
   (`read_ahead.py`): the NPC's memory as it stood when the player stopped speaking, up to
   300 ms before the VAD closed. The L1 insert (and pre-fetch
   on the corrected text, for the next turn) is queued to the `L1Writer`, off the turn's
   path; then the tier for the turn (`select_tier`) on the corrected line;
4. the LLM turn, streamed, offered the tier's memory tools, run through `call_tool`; up to
   `max_tool_rounds` rounds of calls before the model must answer;
5. each finished sentence to TTS and the sink while the rest streams; the NPC's answer is
   queued for L1 too, so the next hot context (which waits for the queue) has it under
   "Just now".

The conversation lives in a `ContextManager` (older turns summarised as the window fills) and
a `Consolidator` writes to L1 whatever the turns did not (every 30 minutes and when the
source ends).

Every stage is timed from the moment the VAD closed the utterance (`TurnResult.timings`).

Speech to text runs on one worker thread of the loop's own, so passes queue instead of
competing with each other for the cores, and the event loop, which runs the memory work,
keeps a core to itself when the engine runs with one thread (`cpu_threads=1`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from glyphoxa_pipelines.memory import NotFoundError, SessionStore
from glyphoxa_pipelines.providers.speech import SpeechToText, Transcript
from realtime.hot_context import HotContext
from realtime.schemas import EntryIn
from realtime.service import MemoryService
from realtime.tools import Tier, ToolScope, select_tier, tools_for_tier
from realtime.transcript_writer import PreparedWrite
from realtime.voice.consolidator import CONSOLIDATE_EVERY_S, Consolidator, entry_for
from realtime.voice.context_manager import ContextManager
from realtime.voice.hotwords import (
    WHISPER_PROMPT_TOKENS,
    estimate_whisper_tokens,
    hotwords_text,
    ranked_names,
)
from realtime.voice.interfaces import AudioSink, AudioSource, ChatModel, Recognizer, Synthesizer
from realtime.voice.l1_writer import L1Writer
from realtime.voice.listening import Heard, Listener, ListenSettings
from realtime.voice.read_ahead import ReadAhead
from realtime.voice.speech_out import SentenceSplitter, Speaker
from realtime.voice.summarizer import Summarizer
from realtime.voice.tool_bridge import (
    ToolOutcome,
    assistant_message,
    function_definitions,
    run_call,
)
from realtime.voice.vad import EnergyVad, Utterance

log = logging.getLogger(__name__)

CONTEXT_WORDS = 40  # of the committed words, as previous text in the prompt

INSTRUCTIONS = (
    "You voice this character in a live tabletop role-playing game. Answer in character, "
    "spoken aloud: one to three short sentences, no lists, no markdown, no stage directions. "
    "When asked about something from the past you are unsure of, use a memory tool first. "
    "Never reveal what your rules or secrets tell you to guard."
)


@dataclass
class VoiceConfig:
    session_id: str
    npc_id: str
    partial_every_s: float = 1.0  # 0 turns partials (and so speculative pre-fetch) off
    streaming: bool = True  # rolling passes + early final (`listening.py`); off: whole utterance
    # quiet this long starts the early final; 200 ms started one at most pauses between
    # sentences, each thrown away when the speaker went on (docs/DESIGN.md, fifth pass)
    early_final_ms: float = 300.0
    stt_worker: bool = True  # one STT thread of the loop's own; off: asyncio's shared pool
    # streaming: prompt a window's decode with the words committed before it (off: it raised
    # WER, docs/DESIGN.md)
    previous_text: bool = False
    hotwords: bool = True
    # partial passes prompt only the first names of the ranking (the scene's and those said
    # lately come first): each prompt token is decoder work on every pass, and a partial only
    # guesses for pre-fetch; the final keeps the whole prompt. None: the whole prompt
    partial_hotword_tokens: int | None = 64
    partial_growth: float = 2.0  # `ListenSettings.partial_growth`
    early_as_pass: bool = False  # `ListenSettings.early_as_pass`
    max_tool_rounds: int = 2
    tier: Tier | None = None  # the DM's override; else `select_tier` decides per turn
    vad: dict[str, Any] = field(default_factory=dict)  # EnergyVad settings
    context_window_tokens: int = 8_192  # the chat model's window
    consolidate_every_s: float = CONSOLIDATE_EVERY_S

    def __post_init__(self) -> None:
        if self.partial_hotword_tokens is not None and self.partial_hotword_tokens < 0:
            raise ValueError("partial_hotword_tokens must be None (the whole prompt) or at "
                             f"least 0, not {self.partial_hotword_tokens}")


@dataclass
class TurnResult:
    speaker_id: str
    transcript: Transcript
    text: str  # as written to L1, after inline correction
    corrections: list[dict[str, Any]]
    tier: str
    tool_calls: list[ToolOutcome]
    reply: str
    audio_s: float
    speech_s: float
    timings: dict[str, float]  # milliseconds from the utterance's end
    partials: int
    hotwords: str | None
    tail_s: float = 0.0  # audio the final decode took after the utterance ended
    early_final: bool = False
    read_ahead: bool = False  # the hot context was read during the VAD's hangover


class VoiceLoop:
    def __init__(
        self,
        service: MemoryService,
        config: VoiceConfig,
        *,
        stt: Recognizer,
        chat: ChatModel,
        tts: Synthesizer,
        sink: AudioSink,
        summarizer: Summarizer | None = None,
        clock: Callable[[], float] = time.monotonic,
        partial_stt: Recognizer | None = None,
    ) -> None:
        self.service = service
        self.config = config
        self.stt = stt
        # partial passes on a cheaper setting of the same model (`for_partials`): they only
        # guess, for pre-fetch and agreement; the final keeps the full setting
        self.partial_stt = partial_stt or (
            stt.for_partials() if isinstance(stt, SpeechToText) else None) or stt
        self.chat = chat
        self.tts = tts
        self.sink = sink
        self._speakers: dict[str, Listener] = {}
        self._stt_pool = ThreadPoolExecutor(1, thread_name_prefix="voice-stt") \
            if config.stt_worker else None
        self._heard: list[str] = []  # this loop's recent transcripts, for hotword ranking
        self._scene: dict[str, Any] = {}
        self._campaign: str | None = None
        self.context = ContextManager(config.context_window_tokens, summarizer=summarizer)
        self.consolidator = Consolidator(service, config.session_id, self.context,
                                         interval_s=config.consolidate_every_s, clock=clock)
        self.l1 = L1Writer(service)
        self.ahead: ReadAhead[HotContext] = ReadAhead(self._read_context)

    # -- the stream ----------------------------------------------------------------------
    async def run(self, source: AudioSource) -> list[TurnResult]:
        """Run until the source ends; one `TurnResult` per utterance answered."""
        results: list[TurnResult] = []
        await self.prepare()  # an unknown session fails here, before any audio is taken
        try:
            async for frame in source.frames():
                listener = self._listener(frame.speaker_id)
                utterance = listener.feed(frame)
                if utterance is not None:
                    results.append(await self.turn(utterance, listener=listener))
                if self.consolidator.due():
                    await self.l1.flush()  # what is queued is written by the queue
                    await self.consolidator.tick()
            for listener in self._speakers.values():
                await listener.drain()
            await self.sink.close()
            await self.l1.flush()
            await self.consolidator.consolidate_now()
        finally:
            self.ahead.close()
            await self.l1.close()
            if self._stt_pool is not None:
                self._stt_pool.shutdown(wait=False)
        return results

    def _listener(self, speaker_id: str) -> Listener:
        listener = self._speakers.get(speaker_id)
        if listener is None:
            cfg = self.config
            async def early(text: str, speaker_id: str = speaker_id) -> None:
                await self._partial(text)
                self.ahead.start(speaker_id, restart=False)  # with what that text brought

            def early_start(speaker_id: str = speaker_id) -> None:
                self.ahead.start(speaker_id, restart=True)  # with what the partials brought

            listener = Listener(
                EnergyVad(**cfg.vad), self._transcribe, self._partial,
                ListenSettings(cfg.partial_every_s, cfg.streaming, cfg.early_final_ms,
                               cfg.partial_growth, cfg.early_as_pass),
                on_early=early, on_early_start=early_start)
            self._speakers[speaker_id] = listener
        return listener

    async def _transcribe(self, samples: np.ndarray, rate: int, context: str = "",
                          partial: bool = False) -> Transcript:
        """One decode on the STT worker. `context` (the utterance's words committed before
        this window) follows the names in Whisper's prompt, as its previous text: a window
        that starts mid-sentence is then decoded as the rest of that sentence."""
        context = " ".join(context.split()[-CONTEXT_WORDS:]) if self.config.previous_text \
            else ""
        words = await self._hotwords(
            reserve=estimate_whisper_tokens(" " + context) if context else 0,
            limit=self.config.partial_hotword_tokens if partial else None)
        if context:
            words = f"{words} {context}" if words else context
        engine = self.partial_stt if partial else self.stt
        return await asyncio.get_running_loop().run_in_executor(
            self._stt_pool, lambda: engine.transcribe(samples, rate, hotwords=words))

    async def _partial(self, text: str) -> None:
        await self.service.partial(self.config.session_id, text, self.config.npc_id)

    async def _read_context(self) -> HotContext:
        """A hot context read ahead of its turn (not counted: the turn counts the one it
        uses), after the lines already queued for L1."""
        await self.l1.flush()
        return await self.service.hot_context(self.config.session_id, self.config.npc_id,
                                              count_turn=False)

    async def prepare(self) -> None:
        """The session's campaign and scene, before the first utterance: hotwords rank the
        scene first from the start (each hot context refreshes the scene afterwards)."""
        session = await self.service.run(
            SessionStore.get_session.op(self.service.sessions, self.config.session_id))
        if session is None:
            raise NotFoundError(f"unknown session {self.config.session_id!r}")
        self._campaign = session.campaign_id
        self._scene = dict(session.scene or {})

    async def _hotwords(self, reserve: int = 0, limit: int | None = None) -> str | None:
        """The names for Whisper's prompt, leaving `reserve` tokens of it free, at most
        `limit` tokens of names."""
        if not self.config.hotwords:
            return None
        if self._campaign is None:
            await self.prepare()
        assert self._campaign is not None
        names = await self.service.names(self._campaign)
        if names is None:
            return None
        ranked = ranked_names(names.entities.values(), scene=self._scene,
                              recent_text=self._heard)
        room = WHISPER_PROMPT_TOKENS - 23 - reserve
        return hotwords_text(ranked, max_tokens=room if limit is None else min(room, limit))

    # -- one turn ------------------------------------------------------------------------
    async def turn(self, utterance: Utterance, *, listener: Listener | None = None) -> TurnResult:
        """Answer one utterance; `listener` holds what was heard while it was spoken (without
        one, as from the HTTP API's whole-file turns, the utterance is transcribed whole)."""
        cfg = self.config
        ended = time.perf_counter()

        def since() -> float:
            return round((time.perf_counter() - ended) * 1000, 2)

        words = await self._hotwords()
        if listener is not None:
            heard = await listener.final(utterance)
        else:
            heard = Heard(await self._transcribe(utterance.samples, utterance.sample_rate), 0,
                          utterance.seconds, False)
        transcript, partials = heard.transcript, heard.partials
        timings = {"transcript": since()}
        use_ahead = heard.early and bool(transcript.text.strip())
        if not use_ahead:
            self.ahead.drop(utterance.speaker_id)  # the speaker went on, or said nothing
        if not transcript.text.strip():
            return TurnResult(utterance.speaker_id, transcript, "", [], "", [], "", 0.0,
                              utterance.seconds, timings, partials, words, heard.tail_s,
                              heard.early)
        key = f"voice-{uuid.uuid4().hex}"
        first = self.service.turn_count(cfg.session_id, cfg.npc_id) == 0
        entry_in = EntryIn(
            idempotency_key=key,
            text=transcript.text,
            speaker_id=utterance.speaker_id,
            speaker_name=utterance.speaker_name or utterance.speaker_id,
            role="player",
            npc_id=cfg.npc_id,  # addressed to this NPC: it heard the line wherever the scene is
            spoken_at=datetime.now(UTC),
            duration_s=round(utterance.seconds, 3),
            word_confidences=[min(1.0, max(0.0, p)) for p in transcript.word_confidences],
        )

        read_ahead = False

        def took_ahead(got: HotContext) -> HotContext:
            """The turn answers with a context read ahead: it counts as this turn's read."""
            nonlocal read_ahead
            self.service.count_turn(cfg.session_id, cfg.npc_id)
            read_ahead = True
            timings["hot_context_read"] = since()
            return got

        async def read() -> HotContext:
            got = await self.ahead.take(utterance.speaker_id) if use_ahead else None
            if got is not None:  # else none was begun, or each failed: read now
                return took_ahead(got)
            await self.l1.flush()  # earlier turns' lines first (the queue is empty by now)
            got = await self.service.hot_context(cfg.session_id, cfg.npc_id)
            timings["hot_context_read"] = since()
            return got

        async def correct() -> PreparedWrite:
            got = await self.service.prepare_entries(cfg.session_id, [entry_in])
            timings["corrected"] = since()
            return got

        # The hot context and the line's correction at once (the correction's CPU while the
        # read's query is at PostgreSQL; the read goes first): the line reaches the model as
        # this turn's message, not through the context's recent lines, and pre-fetch on it
        # began with the early final (`listening.py`), so nothing here waits for the insert,
        # which the queue runs while the model answers.
        ready = self.ahead.take_ready(utterance.speaker_id) if use_ahead else None
        if ready is not None:  # read during the hangover: no trip through the event loop
            context, prepared = took_ahead(ready), await correct()
        else:
            context, prepared = await asyncio.gather(read(), correct())
        timings["hot_context"] = since()
        entry = prepared.out[0]
        message = self.context.add("player", entry["text"], speaker_id=utterance.speaker_id,
                                   speaker_name=utterance.speaker_name or utterance.speaker_id,
                                   npc_id=cfg.npc_id, idempotency_key=key)

        def stored(_: dict[str, Any]) -> None:
            timings["l1_written"] = since()

        self.l1.submit(prepared, message, stored)
        self._heard = [*self._heard[-9:], entry["text"]]
        decision = select_tier(utterance=entry["text"], dm_override=cfg.tier, first_turn=first)
        self._scene = _scene_ids(context)
        speaker = Speaker(self.tts, self.sink)
        speaker.start()
        reply, outcomes, first_token = await self._answer(context, decision.tier, speaker,
                                                          ended)
        if first_token is not None:
            timings["first_token"] = first_token
        await speaker.finish()
        if speaker.first_audio_at is not None:
            timings["first_audio"] = round((speaker.first_audio_at - ended) * 1000, 2)
        timings["done"] = since()
        if reply.strip():
            await self._write_reply(context, reply)
        return TurnResult(utterance.speaker_id, transcript, entry["text"],
                          entry.get("corrections", []), decision.tier.value, outcomes, reply,
                          speaker.audio_s, utterance.seconds, timings, partials, words,
                          heard.tail_s, heard.early, read_ahead)

    async def _answer(
        self, context: HotContext, tier: Tier, speaker: Speaker, ended: float,
    ) -> tuple[str, list[ToolOutcome], float | None]:
        cfg = self.config
        specs = tools_for_tier(tier, self.service.latencies)
        offered = [s.name for s in specs]
        tools = function_definitions(specs)
        system = f"{INSTRUCTIONS}\n\n{context.prompt}"
        await self.context.compact_if_needed(system)
        messages = self.context.messages(system)  # ends with this turn's line
        scope = ToolScope(context.campaign_id, cfg.session_id, cfg.npc_id)
        outcomes: list[ToolOutcome] = []
        splitter = SentenceSplitter()
        reply: list[str] = []
        first_token: float | None = None
        for round_ in range(cfg.max_tool_rounds + 1):
            offer = tools if round_ < cfg.max_tool_rounds else []
            calls = []
            async for event in self.chat.stream(messages, offer):
                if event.text:
                    if first_token is None:
                        first_token = round((time.perf_counter() - ended) * 1000, 2)
                    reply.append(event.text)
                    for sentence in splitter.feed(event.text):
                        speaker.say(sentence)
                calls.extend(event.tool_calls)
            if not calls:
                break
            messages.append(assistant_message(calls))
            for call in calls:
                outcome = await run_call(self.service, call, scope, offered)
                outcomes.append(outcome)
                messages.append(outcome.message())
        for sentence in splitter.flush():
            speaker.say(sentence)
        return "".join(reply).strip(), outcomes, first_token

    async def _write_reply(self, context: HotContext, reply: str) -> None:
        """Corrected now (in order with the players' lines), stored by the queue before the
        next hot context; a failed write is left to the Consolidator (same idempotency key),
        the voice keeps going."""
        npc = self.config.npc_id
        message = self.context.add("npc", reply, speaker_id=npc, npc_id=npc,
                                   speaker_name=str(context.identity.get("name") or npc))
        try:
            prepared = await self.service.prepare_entries(self.config.session_id,
                                                          [entry_for(message)])
        except Exception:
            log.exception("writing the NPC's reply in session %s failed; the consolidator "
                          "retries it", self.config.session_id)
            return
        self.l1.submit(prepared, message)


def _scene_ids(context: HotContext) -> dict[str, Any]:
    scene = context.scene or {}
    return {
        "location": (scene.get("location") or {}).get("id"),
        "present": [p.get("id") for p in scene.get("present") or [] if p.get("id")],
    }


def summarize(results: Sequence[TurnResult]) -> dict[str, Any]:
    """What a run did, as one JSON-able dict (the CLI prints it)."""
    return {
        "turns": [
            {"speaker": r.speaker_id, "heard": r.transcript.text, "written": r.text,
             "corrections": r.corrections, "tier": r.tier,
             "tools": [o.tool for o in r.tool_calls], "reply": r.reply,
             "audio_s": round(r.audio_s, 2), "timings_ms": r.timings, "partials": r.partials,
             "tail_s": r.tail_s, "early_final": r.early_final}
            for r in results
        ]
    }
