"""The voice loop on real (synthesized) speech: demo-campaign lines spoken by piper, answered
by the loop against the real service on an embedded PostgreSQL and a local streaming chat stub.

Each line is answered once per *path* (`--paths`, recipes in `PATHS`: the loop as first
built, "whole", against "streaming"; two more isolate one change each), the paths taking
turns going first, all in one run so the machine's load falls on them alike. Reports per
path, median and p95 in milliseconds from the moment the VAD closed the utterance (itself
500 ms after the last loud frame): transcript ready, L1 written, hot context ready, first LLM
token, first audio, turn done; the memory's share (the final transcript to what the model
needs: the line corrected and the hot context; the L1 insert is queued off the path); the STT
real-time factor of every decode (partials and finals); how much audio the final decode still
had to take; how late the event loop woke up (a CPU-bound neighbour in its thread shows
here); WER of the final transcripts. `--boosting` adds keyword boosting: the same audio
transcribed with and without the campaign's names as hotwords (entity-name error rate:
reference names not heard exactly; word error rate). Deterministic input: lines and
speaking rates come from a seeded draw, piper runs without noise. Ends with one JSON line.

    pip install -e '.[speech]'
    python bench/voice_loop.py --lines 10 [--paths whole,streaming] [--boosting]
    python bench/voice_loop.py --corpus STT_CORPUS/corpus.jsonl --split heldout --lines 36
    python bench/voice_loop.py --code ../wt-base ...   # the same bench on another checkout's code
    python bench/voice_loop.py --window-study STT_CORPUS/corpus.jsonl [--pads 3,5,8,12]

`--corpus`: the STT corpus's lines with names (CRD3 and demo, `bench/voice_bench/lines.py`),
its hash split (`--split`), each line in its own scene. `--code`: the project's packages are
imported from that checkout, the bench's own modules from this one, so two versions of the
code are measured by one script (run them alternately: one process holds one version).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _code_checkout(argv: list[str]) -> Path | None:
    """`--code PATH` from the command line, read before anything of the project is imported."""
    for i, arg in enumerate(argv):
        if arg == "--code" and i + 1 < len(argv):
            return Path(argv[i + 1]).resolve()
        if arg.startswith("--code="):
            return Path(arg.split("=", 1)[1]).resolve()
    return None


CODE = _code_checkout(sys.argv)
if CODE is not None:  # bind the project's packages to that checkout, then the bench's to ours
    sys.path.insert(0, str(CODE))
    import glyphoxa_pipelines  # noqa: F401
    import realtime  # noqa: F401

    sys.path.remove(str(CODE))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.voice_bench.lines import BenchLine, corpus_entities, corpus_lines  # noqa: E402
from bench.voice_bench.memory_step import (  # noqa: E402
    memory_step,
    memory_under_stt,
    print_memory_step,
)
from bench.voice_bench.scoring import (  # noqa: E402
    boosting,
    name_misses,
    names_in,
    pct,
    pick_lines,
    wer,
)
from bench.voice_bench.window_study import window_study  # noqa: E402
from glyphoxa_pipelines.campaign.campaign_file import EntitySpec, parse_campaign_file  # noqa: E402
from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader  # noqa: E402
from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN  # noqa: E402
from glyphoxa_pipelines.providers.speech import (  # noqa: E402
    SpeechToText,
    TextToSpeech,
    Transcript,
)
from realtime.service import MemoryService  # noqa: E402
from realtime.voice.audio import BufferSink, WavSource  # noqa: E402
from realtime.voice.chat import OpenAIChat  # noqa: E402
from realtime.voice.engines import freeze_loaded, live_whisper  # noqa: E402
from realtime.voice.hotwords import hotwords_text, ranked_names  # noqa: E402
from realtime.voice.loop import VoiceConfig, VoiceLoop  # noqa: E402
from tests.voice.chat_stub import StreamingChatStub  # noqa: E402

STAGES = ("transcript", "l1_written", "hot_context", "first_token", "first_audio", "done")
@dataclass(frozen=True)
class Path_:
    """One way of running the loop, compared side by side with the others in one run."""

    name: str
    engine: Callable[[], SpeechToText]
    streaming: bool
    stt_worker: bool
    previous_text: bool = False
    quick_partials: bool = False  # partial passes on `SpeechToText.for_partials()`
    config: tuple[tuple[str, Any], ...] = ()  # `VoiceConfig` fields set for this path


PATHS = {
    # the loop as first built: whole-utterance decodes in faster-whisper's 30 s window,
    # on asyncio's shared thread pool, the engine's default threads
    "whole": Path_("whole", SpeechToText, streaming=False, stt_worker=False),
    # the same decodes, the encoder on the utterance (isolates the STT settings)
    "whole-short": Path_("whole-short", live_whisper, streaming=False, stt_worker=False),
    # rolling passes + early final, short window, one STT thread of the loop's own; the
    # partial passes padded as long as their audio (>= 3 s), no 30 s fallback; the finals
    # twice as long as theirs (>= 4 s)
    "streaming": Path_("streaming", live_whisper, streaming=True, stt_worker=True,
                       quick_partials=True),
    # as the seventh stop left it: a pass every second with the whole hotword prompt (what
    # the fifth pass changed, undone)
    "streaming-s7": Path_("streaming-s7", live_whisper, streaming=True,
                          stt_worker=True, quick_partials=True,
                          config=(("partial_growth", 1.0), ("partial_hotword_tokens", None),
                                  ("early_as_pass", False), ("early_final_ms", 200.0))),
    # the quiet after the last loud frame cut before the padding (tried: worse finals' p95)
    "streaming-trimmed": Path_("streaming-trimmed", lambda: trimmed(live_whisper()),
                               streaming=True, stt_worker=True, quick_partials=True),
    # the early final after 200 ms of quiet, as before the fifth pass (now 300 ms)
    "streaming-early-200": Path_("streaming-early-200", live_whisper, streaming=True,
                                 stt_worker=True, quick_partials=True,
                                 config=(("early_final_ms", 200.0),)),
    # a dropped early final folded in as a pass (tried: less CPU, more WER; off by default)
    "streaming-early-pass": Path_("streaming-early-pass", live_whisper, streaming=True,
                                  stt_worker=True, quick_partials=True,
                                  config=(("early_as_pass", True),)),
    # only the partials' cadence as before (isolates the growing cadence)
    "streaming-every-1s": Path_("streaming-every-1s", live_whisper, streaming=True,
                                stt_worker=True, quick_partials=True,
                                config=(("partial_growth", 1.0),)),
    # finals padded 12 s every time (the third pass's "streaming"; isolates the finals' pad)
    "streaming-final-12s": Path_("streaming-final-12s", lambda: final_padded(None, None),
                                 streaming=True, stt_worker=True, quick_partials=True),
    # finals padded as the partials are: as long as their audio, 3 to 12 s (tried, dropped)
    "streaming-final-x1": Path_("streaming-final-x1", lambda: final_padded(1.0, 3.0),
                                streaming=True, stt_worker=True, quick_partials=True),
    # the same with every pass padded 12 s (isolates the partials' window)
    "streaming-12s": Path_("streaming-12s", lambda: final_padded(None, None), streaming=True,
                           stt_worker=True),
    # with the committed words as the tail's prompt (isolates the previous text)
    "streaming-context": Path_("streaming-context", live_whisper, streaming=True,
                               stt_worker=True, previous_text=True),
    # the same on the shared pool (isolates the worker thread)
    "streaming-pool": Path_("streaming-pool", live_whisper, streaming=True, stt_worker=False),
}


def trimmed(engine: Any) -> SpeechToText:
    """The engine with the quiet after the last loud frame cut before the padding."""
    return replace(engine, trim_trailing_quiet=True)


def final_padded(per_audio_s: float | None, min_pad_s: float | None) -> SpeechToText:
    """The live engine with its finals padded `per_audio_s` times their audio (between
    `min_pad_s` and 12 s; None: 12 s every time); the 30 s fallback kept."""
    engine = live_whisper()
    assert isinstance(engine, SpeechToText)
    return replace(engine, min_encoder_pad_s=min_pad_s, pad_per_audio_s=per_audio_s or 1.0)


class TimedRecognizer:
    """The engine, with each decode's wall time and audio length kept (real-time factor)."""

    def __init__(self, engine: SpeechToText, calls: list[tuple[float, float, str]] | None = None,
                 kind: str = "final", cpu: list[float] | None = None,
                 texts: list[str] | None = None) -> None:
        self.engine = engine
        # (seconds taken, seconds of audio, "partial" | "final"); shared by a path's engines
        self.calls: list[tuple[float, float, str]] = [] if calls is None else calls
        # the process's CPU seconds over each decode (ctranslate2 computes in threads of its
        # own; the event loop's few ms of work in the meantime are counted in too)
        self.cpu: list[float] = [] if cpu is None else cpu
        self.kind = kind
        # what the partial passes heard (what pre-fetch could act on), cleared per turn
        self.texts: list[str] = [] if texts is None else texts

    def transcribe(self, samples: Any, sample_rate: int, *, hotwords: str | None = None
                   ) -> Transcript:
        t, cpu = time.perf_counter(), time.process_time()
        out = self.engine.transcribe(samples, sample_rate, hotwords=hotwords)
        self.calls.append((time.perf_counter() - t, len(samples) / sample_rate, self.kind))
        self.cpu.append(time.process_time() - cpu)
        if self.kind == "partial":
            self.texts.append(out.text)
        return out


class GcPauses:
    """The garbage collector's pauses while turns run (they stop the event loop too)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []  # (generation, ms)
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses.append((info["generation"], (time.perf_counter() - self._start) * 1000))

    def report(self) -> dict[str, Any]:
        full = [ms for gen, ms in self.pauses if gen == 2]
        return {"collections": len(self.pauses), "full": len(full),
                "max_ms": round(max((ms for _, ms in self.pauses), default=0.0), 2),
                "full_max_ms": round(max(full, default=0.0), 2)}


async def loop_lag(lags: list[float], stop: asyncio.Event, every_s: float = 0.005) -> None:
    """How late the event loop wakes up: what a CPU-bound neighbour costs the memory work."""
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(every_s)
        lags.append((time.perf_counter() - t - every_s) * 1000)
async def run(args: argparse.Namespace, url: str, settings: Settings) -> dict[str, Any]:
    campaign = parse_campaign_file(SAMPLE_CAMPAIGN)
    spoken: list[BenchLine] | None = None
    if args.corpus is not None:
        spoken = corpus_lines(args.corpus, args.split, args.lines, args.skip)
        known = {n for e in campaign.entities for n in (e.name, *e.aliases)}
        campaign = campaign.model_copy(update={"entities": [
            *campaign.entities,
            *(EntitySpec(**e) for e in corpus_entities(spoken, known))]})
    with Database(url, max_size=2) as db:
        cid = CampaignLoader(db).load(campaign).campaign_id
    svc = MemoryService(url, settings=settings)
    await svc.open(warm_embedder=False)
    stub = StreamingChatStub()
    paths = [PATHS[name] for name in args.paths.split(",")]
    tts = TextToSpeech()
    t = time.perf_counter()
    engines = {p.name: TimedRecognizer(p.engine()) for p in paths}
    heard_partials: dict[str, list[str]] = {p.name: [] for p in paths}
    for timed in engines.values():
        timed.engine.load()
    partial_engines = {}
    for p in paths:
        final = engines[p.name]
        quick = final.engine.for_partials() if p.quick_partials else None
        partial_engines[p.name] = TimedRecognizer(quick or final.engine, final.calls, "partial",
                                                  final.cpu, heard_partials[p.name])
    tts.load()
    load_s = time.perf_counter() - t
    if not args.no_freeze:
        freeze_loaded()  # as `VoiceEngines.load` does in the service
    # the query encoder loads on the first search: warm it so turn 1 measures a turn
    await asyncio.to_thread(svc.embedder.embed_sync, "warm up")
    gc_pauses = GcPauses()
    per: dict[str, dict[str, list[float]]] = {
        p.name: {k: [] for k in (*STAGES, "memory", "write", "hot", "corrected", "tail_s",
                                 "early", "ahead", "wer", "words", "lag", "speech", "names",
                                 "name_misses", "final_names", "partial_hits")}
        for p in paths}
    try:
        entities = list((await svc.names(cid)).entities.values())  # type: ignore[union-attr]
        by_name = {e.name: e for e in entities}
        npc = by_name["Grimjaw"].id
        place = next(e.id for e in entities if e.type == "location")
        session = await svc.start_session(cid, f"{cid}-voice-bench", title="Voice bench",
                                          scene={"location": place, "present": [npc]})
        all_names = [n for e in entities for n in (e.name, *e.aliases)]
        boost = hotwords_text(ranked_names(entities, scene=session.scene))
        lines = pick_lines(all_names, args.lines, args.seed)[args.skip:]
        by_folded = {n.lower(): e.id for e in entities for n in (e.name, *e.aliases)}
        if args.memory_step:
            await memory_step(svc, session.id, npc, lines, 4)  # warm the caches
            load_before = os.getloadavg()
            got = await memory_step(svc, session.id, npc, lines, args.memory_step)
            print_memory_step(got)
            return {"bench": "voice_memory_step", "cpus": os.cpu_count(),
                    "rounds": args.memory_step, "memory_ms": got,
                    "load_avg_during": [round(x, 2) for x in load_before],
                    "load_avg": [round(x, 2) for x in os.getloadavg()]}
        if args.memory_under_stt:
            await memory_under_stt(svc, session.id, npc, tts, lines, 1)  # warm the caches
            return {"bench": "voice_memory_under_stt", "cpus": os.cpu_count(),
                    "rounds": args.memory_under_stt, "memory_ms": await memory_under_stt(
                        svc, session.id, npc, tts, lines, args.memory_under_stt),
                    "load_avg": [round(x, 2) for x in os.getloadavg()]}

        async def answer(path: Path_, audio: Any, lags: list[float]) -> Any:
            config = VoiceConfig(session.id, npc, partial_every_s=args.partial_every_s,
                                 streaming=path.streaming, stt_worker=path.stt_worker,
                                 previous_text=path.previous_text, **dict(path.config))
            loop = VoiceLoop(svc, config, stt=engines[path.name],
                             chat=OpenAIChat("stub", base_url=stub.base_url), tts=tts,
                             sink=BufferSink(), partial_stt=partial_engines[path.name])
            stop = asyncio.Event()
            watch = asyncio.create_task(loop_lag(lags, stop))
            [turn] = await loop.run(WavSource(audio, speaker_id="player", realtime=True))
            stop.set()
            await watch
            return turn

        # one unmeasured turn per path first: the first decode of a model and the service's
        # first hot context pay for warming caches, which would land on whoever went first
        warm = tts.synthesize("Grimjaw, good morning.")
        for path in paths:
            await answer(path, warm, [])
            engines[path.name].calls.clear()
            engines[path.name].cpu.clear()
        gc.callbacks.append(gc_pauses)
        todo = spoken if spoken is not None else [BenchLine(t, r) for t, r in lines]
        for i, line in enumerate(todo):
            text = line.text
            audio = tts.synthesize(text, length_scale=line.rate)
            if line.scene:  # the line in its own scene, so the prompt ranks its names first
                present = [by_folded[n.lower()] for n in line.scene if n.lower() in by_folded]
                await svc.set_scene(session.id, {"location": place,
                                                 "present": list(dict.fromkeys(
                                                     [npc, *present]))})
            order = paths if i % 2 == 0 else paths[::-1]  # neither path always goes first
            for path in order:
                lags: list[float] = []
                heard_partials[path.name].clear()
                turn = await answer(path, audio, lags)
                got = per[path.name]
                # pre-fetch's use of the partials: of the campaign names the final heard,
                # how many a partial pass had heard already
                final_names = names_in(turn.transcript.text, all_names)
                got["final_names"].append(len(final_names))
                got["partial_hits"].append(len(final_names & names_in(
                    " ".join(heard_partials[path.name]), all_names)))
                for s in STAGES:
                    if s in turn.timings:
                        got[s].append(turn.timings[s])
                tm = turn.timings
                got["memory"].append(tm["hot_context"] - tm["transcript"])
                got["write"].append(tm["l1_written"] - tm["transcript"])
                if "corrected" in tm:  # the write's inline half; the insert is queued now
                    got["corrected"].append(tm["corrected"] - tm["transcript"])
                # the read runs beside the write now (`hot_context_read`); it followed it
                if "hot_context_read" in tm:
                    got["hot"].append(tm["hot_context_read"] - tm["transcript"])
                else:
                    got["hot"].append(tm["hot_context"] - tm["l1_written"])
                got["tail_s"].append(turn.tail_s)
                got["early"].append(float(turn.early_final))
                got["ahead"].append(float(getattr(turn, "read_ahead", False)))
                e, w = wer(text, turn.transcript.text)
                got["wer"].append(e)
                got["words"].append(w)
                m, n = name_misses(text, turn.transcript.text, all_names)
                got["name_misses"].append(m)
                got["names"].append(n)
                got["speech"].append(turn.speech_s)
                got["lag"].extend(lags)
                print(f"[{i + 1}/{len(todo)}] {path.name:14} {turn.speech_s:4.1f}s speech, "
                      f"transcript {tm['transcript']:6.0f} ms, memory "
                      f"{tm['hot_context'] - tm['transcript']:5.1f} ms, tail {turn.tail_s:.1f}s"
                      f"{' early' if turn.early_final else ''}: {turn.text[:50]!r}", flush=True)
        boosted = boosting(tts, engines[paths[0].name].engine, [(x.text, x.rate) for x in todo],
                           boost, all_names) \
            if args.boosting else None
    finally:
        if gc_pauses in gc.callbacks:
            gc.callbacks.remove(gc_pauses)
        stub.close()
        await svc.close()

    def p50_95(values: list[float]) -> dict[str, float | None]:
        return {"p50": pct(values, 0.5), "p95": pct(values, 0.95)}

    report: dict[str, Any] = {}
    for path in paths:
        got, calls = per[path.name], engines[path.name].calls
        report[path.name] = {
            "stages_ms": {s: p50_95(got[s]) for s in STAGES},
            "memory_ms": p50_95(got["memory"]), "write_ms": p50_95(got["write"]),
            "hot_context_ms": p50_95(got["hot"]), "corrected_ms": p50_95(got["corrected"]),
            "stt_rtf": p50_95([took / max(audio_s, 1e-3) for took, audio_s, _ in calls]),
            "stt_cpu_rtf": p50_95([cpu / max(audio_s, 1e-3) for cpu, (_, audio_s, _)
                                   in zip(engines[path.name].cpu, calls, strict=True)]),
            **{f"stt_cpu_rtf_{kind}": p50_95([cpu / max(audio_s, 1e-3) for cpu, (_, audio_s, k)
                                              in zip(engines[path.name].cpu, calls, strict=True)
                                              if k == kind])
               for kind in ("partial", "final")},
            **{f"stt_rtf_{kind}": p50_95([took / max(audio_s, 1e-3)
                                          for took, audio_s, k in calls if k == kind])
               for kind in ("partial", "final")},
            # all decoding an utterance cost, per second of it (passes, early final, final)
            "stt_cpu_per_audio_s": round(sum(c[0] for c in calls)
                                         / max(sum(got["speech"]), 1e-3), 3),
            **{f"stt_s_per_speech_s_{kind}": round(
                sum(c[0] for c in calls if c[2] == kind) / max(sum(got["speech"]), 1e-3), 3)
               for kind in ("partial", "final")},
            # the same in CPU seconds (the process's, over each decode): less at the mercy
            # of the machine's load than wall time, which a shared machine multiplies
            **{f"stt_cpu_s_per_speech_s{suffix}": round(
                sum(c for c, (_, _, k) in zip(engines[path.name].cpu, calls, strict=True)
                    if kind in (None, k)) / max(sum(got["speech"]), 1e-3), 3)
               for suffix, kind in (("", None), ("_partial", "partial"), ("_final", "final"))},
            "stt_calls": len(calls),
            # (wall RTF, seconds of audio, seconds taken) of the five slowest finals per
            # second of audio: what the finals' p95 is made of
            "slowest_finals": sorted(((round(took / max(a, 1e-3), 2), round(a, 2),
                                       round(took, 3)) for took, a, k in calls if k == "final"),
                                     reverse=True)[:5],
            # of the campaign names in the finals, the share a partial pass heard first
            "partial_name_hits": round(sum(got["partial_hits"])
                                       / max(sum(got["final_names"]), 1), 3),
            "final_names": int(sum(got["final_names"])),
            "final_tail_s": p50_95(got["tail_s"]),
            "early_finals": int(sum(got["early"])),
            "contexts_read_ahead": int(sum(got["ahead"])),
            "wer": round(sum(got["wer"]) / max(sum(got["words"]), 1), 3),
            "entity_error_rate": round(sum(got["name_misses"]) / max(sum(got["names"]), 1), 3),
            "names": int(sum(got["names"])),
            "loop_lag_ms": {**p50_95(got["lag"]), "max": round(max(got["lag"], default=0), 2)},
        }
    return {
        "bench": "voice_loop", "lines": len(todo), "cpus": os.cpu_count(),
        "code": str(CODE or ROOT), "corpus": str(args.corpus) if args.corpus else None,
        "split": args.split if args.corpus else None, "skip": args.skip,
        "load_avg": [round(x, 2) for x in os.getloadavg()], "model_load_s": round(load_s, 2),
        "vad_end_silence_ms": 500, "partial_every_s": args.partial_every_s,
        "gc": gc_pauses.report(), "gc_frozen": not args.no_freeze,
        "paths": report, "hotwords": {**boosted, "prompt": boost} if boosted else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lines", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", type=Path, default=None, metavar="CORPUS",
                    help="speak the STT corpus's lines with names (bench/build_stt_corpus.py) "
                    "instead of the demo draw")
    ap.add_argument("--split", default="heldout", choices=("tune", "heldout"),
                    help="with --corpus: which half of its hash split")
    ap.add_argument("--code", type=Path, default=None,
                    help="import the project from this checkout (read before the imports)")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N drawn lines (a held-out run: --lines 16 --skip 10)")
    ap.add_argument("--paths", default="whole,streaming",
                    help=f"comma-separated, side by side per line: {', '.join(PATHS)}")
    ap.add_argument("--partial-every-s", type=float, default=1.0)
    ap.add_argument("--boosting", action="store_true",
                    help="also measure hotwords: each line transcribed with and without them")
    ap.add_argument("--no-freeze", action="store_true",
                    help="leave the loaded models in the garbage collector's sight")
    ap.add_argument("--home", type=Path, default=None, help="GLYPHOXA_HOME (default: temporary)")
    ap.add_argument("--memory-under-stt", type=int, default=0, metavar="ROUNDS",
                    help="instead: the memory's share timed with and without decodes running")
    ap.add_argument("--memory-step", type=int, default=0, metavar="ROUNDS",
                    help="instead: the turn's memory step, its orders side by side "
                    "(sequential, together, queued, ahead) and its stages")
    ap.add_argument("--window-study", type=Path, default=None, metavar="CORPUS",
                    help="instead: the encoder-window study on an STT corpus.jsonl "
                    "(bench/build_stt_corpus.py), tune and held-out halves")
    ap.add_argument("--pads", default="3,5,8,12", help="window study: paddings in seconds")
    ap.add_argument("--per-split", type=int, default=12, help="window study: lines per half")
    args = ap.parse_args()
    if args.window_study is not None:
        if not args.window_study.is_file():
            ap.error(f"no STT corpus at {args.window_study}")
        pads = [float(p) for p in args.pads.split(",")]
        print(json.dumps(window_study(args.window_study, pads, args.per_split)))
        return
    if args.corpus is not None and not args.corpus.is_file():
        print(json.dumps({"bench": "voice_loop", "skipped": f"no STT corpus at {args.corpus}"}))
        return
    unknown = set(args.paths.split(",")) - set(PATHS)
    if unknown:
        ap.error(f"unknown path(s) {sorted(unknown)}; known: {', '.join(PATHS)}")
    home = (args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-bench-voice-"))).resolve()
    home.chmod(0o755)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"))
    url = resolve_url(settings)
    load_before = os.getloadavg()
    try:
        result = asyncio.run(run(args, url, settings))
    finally:
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)
            shutil.rmtree(home, ignore_errors=True)
    result["load_avg_before"] = [round(x, 2) for x in load_before]
    if "paths" not in result:
        print(json.dumps(result))
        return
    names = list(result["paths"])
    print(f"\nload average before {result['load_avg_before']}, after {result['load_avg']}")
    print(f"{'ms from end of speech (p50/p95)':34}" + "".join(f"{n:>22}" for n in names))

    def row(label: str, get: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        cells = [get(result["paths"][n]) for n in names]
        print(f"{label:34}" + "".join(f"{c['p50']!s:>11}{c['p95']!s:>11}" for c in cells))

    for stage in STAGES:
        row(stage, lambda r, s=stage: r["stages_ms"][s])
    row("memory (until the model can start)", lambda r: r["memory_ms"])
    row("  correction (the write's inline half)", lambda r: r["corrected_ms"])
    row("  L1 written (queued now: after)", lambda r: r["write_ms"])
    row("  hot context (from the transcript)", lambda r: r["hot_context_ms"])
    row("STT real-time factor, per decode", lambda r: r["stt_rtf"])
    row("  partial passes", lambda r: r["stt_rtf_partial"])
    row("  finals (early or not)", lambda r: r["stt_rtf_final"])
    row("STT CPU-time real-time factor", lambda r: r["stt_cpu_rtf"])
    row("  partial passes", lambda r: r["stt_cpu_rtf_partial"])
    row("  finals (early or not)", lambda r: r["stt_cpu_rtf_final"])
    row("final decode's audio (s)", lambda r: r["final_tail_s"])
    row("event-loop lag (ms)", lambda r: r["loop_lag_ms"])
    print(f"{'WER':34}" + "".join(f"{result['paths'][n]['wer']!s:>22}" for n in names))
    print(f"{'entity-name error rate':34}" + "".join(
        f"{result['paths'][n]['entity_error_rate']!s:>22}" for n in names))
    print(f"{'STT seconds per speech second':34}" + "".join(
        f"{result['paths'][n]['stt_cpu_per_audio_s']!s:>22}" for n in names))
    for kind in ("partial", "final"):
        print(f"{'  ' + kind + ' decodes':34}" + "".join(
            f"{result['paths'][n]['stt_s_per_speech_s_' + kind]!s:>22}" for n in names))
    for suffix in ("", "_partial", "_final"):
        print(f"{'STT CPU s per speech s' + suffix:34}" + "".join(
            f"{result['paths'][n]['stt_cpu_s_per_speech_s' + suffix]!s:>22}" for n in names))
    print(f"{'final names a partial heard first':34}" + "".join(
        f"{result['paths'][n]['partial_name_hits']!s:>22}" for n in names))
    print(f"garbage collector during the turns: {result['gc']}")
    if result["hotwords"]:
        for label in ("plain", "boosted"):
            h = result["hotwords"][label]
            print(f"hotwords {label:8}: entity errors {h['entity_error_rate']:.3f} of "
                  f"{h['names']} names, WER {h['wer']:.3f}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
