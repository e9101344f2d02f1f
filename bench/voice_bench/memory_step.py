"""The turn's memory step alone (`bench/voice_loop.py --memory-step`, `--memory-under-stt`):
the L1 write and the hot context timed without the rest of the loop."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.voice_bench.scoring import pct
from bench.voice_bench.stages import instrument
from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech
from realtime.service import MemoryService
from realtime.voice.engines import live_whisper

VARIANTS = ("sequential", "together", "queued", "ahead")

async def memory_under_stt(svc: MemoryService, session_id: str, npc: str, tts: TextToSpeech,
                           lines: list[tuple[str, float]], rounds: int) -> dict[str, Any]:
    """Where the memory's share goes under STT load: the turn's memory work (the L1 write,
    then the hot context) timed with no decode running, with decodes back to back on one
    worker thread with a one-thread engine (the live setting), and on asyncio's shared pool
    with the engine's default threads (the loop as first built); interleaved, one run."""
    import uuid as _uuid
    from datetime import UTC, datetime

    from realtime.schemas import EntryIn

    clip = tts.synthesize(lines[0][0])
    conditions = {"idle": None, "worker-1-thread": live_whisper(),
                  "shared-pool-default-threads": SpeechToText()}
    for engine in conditions.values():
        if engine is not None:
            engine.transcribe(clip.samples, clip.sample_rate)  # loaded and warm
    times: dict[str, list[float]] = {name: [] for name in conditions}
    pool = ThreadPoolExecutor(1)
    for i in range(rounds):
        for name, engine in conditions.items():
            stop = asyncio.Event()

            async def load(engine: Any = engine, stop: asyncio.Event = stop,
                           name: str = name) -> None:
                while engine is not None and not stop.is_set():
                    executor = pool if name == "worker-1-thread" else None
                    await asyncio.get_running_loop().run_in_executor(
                        executor, lambda: engine.transcribe(clip.samples, clip.sample_rate))

            background = asyncio.create_task(load())
            await asyncio.sleep(0.3)  # a decode is under way
            text = lines[i % len(lines)][0]
            t = time.perf_counter()
            await svc.write_entries(session_id, [EntryIn(
                idempotency_key=f"bench-{_uuid.uuid4().hex}", text=text, speaker_id="player",
                speaker_name="player", role="player", spoken_at=datetime.now(UTC))])
            await svc.hot_context(session_id, npc)
            times[name].append((time.perf_counter() - t) * 1000)
            stop.set()
            await background
    pool.shutdown()
    return {name: {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "n": len(v)}
            for name, v in times.items()}


async def memory_step(svc: MemoryService, session_id: str, npc: str,
                      lines: list[tuple[str, float]], rounds: int,
                      variants: tuple[str, ...] = VARIANTS) -> dict[str, Any]:
    """The turn's memory step alone, the loop's successive orders interleaved in one run
    (which goes first rotates): 0.3 s before the utterance closes a partial with the first
    60 % of the line has been sent (the passes'); then

    - "sequential" (as first built): the L1 write, then the hot context, which waits for
      the pre-fetch the write's final text started;
    - "together" (the third pass): the early final's whole text went to pre-fetch with that
      partial, and the write and the hot context run at once;
    - "queued" (now): the same pre-fetch; the hot context and the line's correction at once,
      the insert queued off the turn's path (`realtime/voice/l1_writer.py`): stored after
      the step, untimed, before the next round;
    - "ahead" (now, when the early final is the transcript): as "queued", the hot context
      read at the early final, during the hangover (`VoiceLoop._read_ahead`): the step
      waits for the correction and that read's result.

    The step is timed from the transcript to what the model needs being ready (the turn's
    memory share), and each stage inside it (`stages.py`)."""
    import uuid as _uuid
    from datetime import UTC, datetime

    from realtime.schemas import EntryIn

    times: dict[str, list[float]] = {n: [] for n in variants}
    # each part's finish, from the step's start (sequential: the read's includes the write)
    parts: dict[str, list[float]] = {f"{n}_{w}": [] for n in times for w in ("write", "read")}
    pending = dict.fromkeys(times, 0)  # steps that found a pre-fetch still in flight
    clock = instrument(svc)
    try:
        for i in range(rounds):
            text = lines[i % len(lines)][0]
            words_ = text.split()
            prefix = " ".join(words_[:max(1, int(len(words_) * 0.6))])
            order = list(variants[i % len(variants):] + variants[:i % len(variants)])
            for name in order:
                await svc.partial(session_id, prefix, npc)
                if name != "sequential":
                    await svc.partial(session_id, text, npc)
                ahead = asyncio.create_task(svc.hot_context(session_id, npc, count_turn=False)) \
                    if name == "ahead" else None
                await asyncio.sleep(0.3)  # the VAD's hangover
                entry = EntryIn(idempotency_key=f"bench-{_uuid.uuid4().hex}", text=text,
                                speaker_id="player", speaker_name="player", role="player",
                                npc_id=npc, spoken_at=datetime.now(UTC))
                pending[name] += svc.prefetcher.pending(session_id)
                t = time.perf_counter()

                async def timed(what: str, step: Any, t: float = t, name: str = name) -> Any:
                    with clock.step(name, what):
                        got = await step
                    parts[f"{name}_{what}"].append((time.perf_counter() - t) * 1000)
                    return got

                if name == "sequential":
                    await timed("write", svc.write_entries(session_id, [entry]))
                    await timed("read", svc.hot_context(session_id, npc))
                elif name == "together":
                    await asyncio.gather(timed("write", svc.write_entries(session_id, [entry])),
                                         timed("read", svc.hot_context(session_id, npc)))
                else:
                    read = ahead if ahead is not None else svc.hot_context(session_id, npc)
                    _, prepared = await asyncio.gather(
                        timed("read", read),
                        timed("write", svc.prepare_entries(session_id, [entry])))
                times[name].append((time.perf_counter() - t) * 1000)
                if name in ("queued", "ahead"):
                    with clock.step(name, "after the step"):
                        await svc.store_entries(prepared)
                svc.prefetch.clear(session_id)  # the next line starts cold, as a new topic
    finally:
        clock.restore()
    stages = clock.report()
    return {name: {"p50": pct(v, 0.5), "p95": pct(v, 0.95), "max": round(max(v), 2),
                   "n": len(v), "prefetch_in_flight": pending[name],
                   **{w: {"p50": pct(parts[f"{name}_{w}"], 0.5),
                          "p95": pct(parts[f"{name}_{w}"], 0.95)} for w in ("write", "read")},
                   "stages": stages.get(name, {})}
            for name, v in times.items()}


def print_memory_step(got: dict[str, Any]) -> None:
    """The step per variant, then its stages, p50 / p95 ms."""
    for name, r in got.items():
        print(f"{name:11} step p50 {r['p50']:6.2f} p95 {r['p95']:6.2f} max {r['max']:6.2f} ms "
              f"(write part {r['write']['p50']} / {r['write']['p95']}, read part "
              f"{r['read']['p50']} / {r['read']['p95']})")
        for stage, v in r["stages"].items():
            print(f"    {stage:40} p50 {v['p50']!s:>7} p95 {v['p95']!s:>7}  n {v['n']}")
