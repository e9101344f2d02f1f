"""The voice loop on real (synthesized) speech: demo-campaign lines spoken by piper, answered
by the loop against the real service on an embedded PostgreSQL and a local streaming chat stub.

Reports, per stage, median and p95 in milliseconds from the moment the VAD closed the
utterance: transcript ready, L1 written, hot context ready, first LLM token, first audio,
turn done; the memory's share (write + hot context); the STT real-time factor; and keyword
boosting measured on the same audio transcribed with and without the campaign's names as
hotwords (entity-name error rate: reference names not heard exactly; word error rate).
Deterministic: lines and speaking rates come from a seeded draw, piper runs without noise.
Ends with one JSON line.

    pip install -e '.[speech]'
    python bench/voice_loop.py --lines 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from glyphoxa_pipelines.campaign.campaign_file import parse_campaign_file  # noqa: E402
from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader  # noqa: E402
from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN, SAMPLE_SESSIONS_DIR  # noqa: E402
from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech  # noqa: E402
from realtime.service import MemoryService  # noqa: E402
from realtime.voice.audio import BufferSink, WavSource  # noqa: E402
from realtime.voice.chat import OpenAIChat  # noqa: E402
from realtime.voice.hotwords import hotwords_text, ranked_names  # noqa: E402
from realtime.voice.loop import VoiceConfig, VoiceLoop  # noqa: E402
from tests.voice.chat_stub import StreamingChatStub  # noqa: E402

STAGES = ("transcript", "l1_written", "hot_context", "first_token", "first_audio", "done")
RATES = (0.85, 1.0, 1.2)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 2)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def wer(ref: str, hyp: str) -> tuple[int, int]:
    """(edit distance in words, reference length)."""
    r, h = words(ref), words(hyp)
    row = list(range(len(h) + 1))
    for i, rw in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hw in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rw != hw))
    return row[len(h)], len(r)


def name_misses(ref: str, hyp: str, names: list[str]) -> tuple[int, int]:
    """(reference names not heard exactly, reference names) — whole words, case-insensitive."""
    found = [n for n in names if re.search(rf"\b{re.escape(n)}\b", ref, re.IGNORECASE)]
    found = [n for n in found if not any(n != m and n in m and re.search(
        rf"\b{re.escape(m)}\b", ref, re.IGNORECASE) for m in found)]  # "Hask" inside "Captain Hask"
    missed = sum(1 for n in found if not re.search(rf"\b{re.escape(n)}\b", hyp, re.IGNORECASE))
    return missed, len(found)


def pick_lines(names: list[str], count: int, seed: int) -> list[tuple[str, float]]:
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in names), re.IGNORECASE)
    lines = []
    for path in sorted(SAMPLE_SESSIONS_DIR.glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(raw)
            if row.get("role") in ("player", "dm") and pattern.search(row["text"]):
                lines.append(row["text"])
    rng = random.Random(seed)
    rng.shuffle(lines)
    return [(line, rng.choice(RATES)) for line in lines[:count]]


async def run(args: argparse.Namespace, url: str, settings: Settings) -> dict[str, Any]:
    with Database(url, max_size=2) as db:
        cid = CampaignLoader(db).load(parse_campaign_file(SAMPLE_CAMPAIGN)).campaign_id
    svc = MemoryService(url, settings=settings)
    await svc.open(warm_embedder=False)
    stub = StreamingChatStub()
    stt, tts = SpeechToText(), TextToSpeech()
    t = time.perf_counter()
    stt.load()
    tts.load()
    load_s = time.perf_counter() - t
    # the query encoder loads on the first search: warm it so turn 1 measures a turn
    await asyncio.to_thread(svc.embedder.embed_sync, "warm up")
    try:
        entities = list((await svc.names(cid)).entities.values())  # type: ignore[union-attr]
        by_name = {e.name: e for e in entities}
        npc = by_name["Grimjaw"].id
        place = next(e.id for e in entities if e.type == "location")
        session = await svc.start_session(cid, f"{cid}-voice-bench", title="Voice bench",
                                          scene={"location": place, "present": [npc]})
        all_names = [n for e in entities for n in (e.name, *e.aliases)]
        boost = hotwords_text(ranked_names(entities, scene=session.scene))
        lines = pick_lines(all_names, args.lines, args.seed)
        stage: dict[str, list[float]] = {s: [] for s in STAGES}
        memory, rtf_final = [], []
        counts = {"plain": [0, 0, 0, 0], "boosted": [0, 0, 0, 0]}  # name miss, names, wer, words
        for i, (text, rate) in enumerate(lines):
            audio = tts.synthesize(text, length_scale=rate)
            for label, hot in (("plain", None), ("boosted", boost)):
                heard = stt.transcribe(audio.samples, audio.sample_rate, hotwords=hot).text
                m, n = name_misses(text, heard, all_names)
                e, w = wer(text, heard)
                c = counts[label]
                c[0], c[1], c[2], c[3] = c[0] + m, c[1] + n, c[2] + e, c[3] + w
            config = VoiceConfig(session.id, npc, partial_every_s=0 if args.fast else 1.0)
            loop = VoiceLoop(svc, config, stt=stt,
                             chat=OpenAIChat("stub", base_url=stub.base_url), tts=tts,
                             sink=BufferSink())
            source = WavSource(audio, speaker_id="player", realtime=not args.fast)
            [turn] = await loop.run(source)
            for s in STAGES:
                if s in turn.timings:
                    stage[s].append(turn.timings[s])
            memory.append(turn.timings["hot_context"] - turn.timings["transcript"])
            rtf_final.append(turn.timings["transcript"] / 1000 / max(turn.speech_s, 1e-3))
            print(f"[{i + 1}/{len(lines)}] {turn.speech_s:4.1f}s speech, transcript "
                  f"{turn.timings['transcript']:6.0f} ms, first audio "
                  f"{turn.timings.get('first_audio', float('nan')):6.0f} ms: {turn.text[:60]!r}",
                  flush=True)
    finally:
        stub.close()
        await svc.close()

    def rates(c: list[int]) -> dict[str, float]:
        return {"entity_error_rate": round(c[0] / max(c[1], 1), 3), "names": c[1],
                "wer": round(c[2] / max(c[3], 1), 3)}

    plain, boosted = rates(counts["plain"]), rates(counts["boosted"])
    return {
        "bench": "voice_loop", "lines": len(lines), "cpus": os.cpu_count(),
        "load_avg": round(os.getloadavg()[0], 2), "model_load_s": round(load_s, 2),
        "paced": not args.fast, "vad_end_silence_ms": 500,
        "stages_ms": {s: {"p50": pct(v, 0.5), "p95": pct(v, 0.95)} for s, v in stage.items()},
        "memory_ms": {"p50": pct(memory, 0.5), "p95": pct(memory, 0.95)},
        "stt_rtf": {"p50": pct(rtf_final, 0.5), "p95": pct(rtf_final, 0.95)},
        "hotwords": {"plain": plain, "boosted": boosted, "prompt": boost},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lines", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--fast", action="store_true",
                    help="feed the audio unpaced, partials off (default: paced like a "
                    "microphone, partials transcribed while the line is spoken)")
    ap.add_argument("--home", type=Path, default=None, help="GLYPHOXA_HOME (default: temporary)")
    args = ap.parse_args()
    home = (args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-bench-voice-"))).resolve()
    home.chmod(0o755)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"))
    url = resolve_url(settings)
    try:
        result = asyncio.run(run(args, url, settings))
    finally:
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)
            shutil.rmtree(home, ignore_errors=True)
    print(f"{'stage (ms from end of speech)':32} {'p50':>8} {'p95':>8}")
    for name, s in result["stages_ms"].items():
        print(f"{name:32} {s['p50']!s:>8} {s['p95']!s:>8}")
    print(f"{'memory (write + hot context)':32} {result['memory_ms']['p50']!s:>8} "
          f"{result['memory_ms']['p95']!s:>8}")
    for label in ("plain", "boosted"):
        h = result["hotwords"][label]
        print(f"hotwords {label:8}: entity errors {h['entity_error_rate']:.3f} of "
              f"{h['names']} names, WER {h['wer']:.3f}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
