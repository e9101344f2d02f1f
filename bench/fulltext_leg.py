"""The full-text leg of session search at full scale, side by side, call by call on the same
questions: every word ranked (the leg before it was bounded: `SemanticIndex.fulltext_search`,
`ts_rank`), the bounded leg as two statements in a transaction under a SET LOCAL limit (the
leg before it became one statement), and the leg as the tool runs it now (one statement, word
counts from `chunk_lexeme_counts`: `realtime/session_search/fulltext.py`), with how often the
last two answer alike (they must, always); then the whole `memory.search_sessions` (query
embedding included). `--natural` adds a question in plain English (stop and common words) to
each of the bench's keyword questions.

    python bench/realtime.py --no-http --home /tmp/rt      # builds the 50k-chunk campaign
    python bench/fulltext_leg.py --home /tmp/rt             # reuses it

Times are noisy on a shared machine: read the ratio. Last line one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import scale_dataset  # noqa: E402


def stats(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p95_ms": round(float(np.percentile(ms, 95)), 3), "n": len(ms)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url
    from glyphoxa_pipelines.db.operations import statement_timeout_op
    from glyphoxa_pipelines.memory import SemanticIndex
    from realtime.service import MemoryService
    from realtime.session_search import SESSION_SEARCH
    from realtime.session_search.fulltext import fulltext_op, fulltext_two_step_op
    from realtime.tools import ToolScope

    settings = Settings(home=args.home.resolve(), database_url=os.environ.get(
        "GLYPHOXA_DATABASE_URL"))
    svc = MemoryService(resolve_url(settings), settings=settings,
                        spool_dir=settings.home / "spool-fulltext")
    await svc.open(warm_embedder=False)
    await asyncio.to_thread(svc.embedder.embed_sync, "warm up")
    rng = np.random.default_rng(11)  # bench/realtime.py's questions
    words = scale_dataset.GAME_WORDS
    queries = [" ".join(rng.choice(words, size=int(rng.integers(3, 7))))
               for _ in range(args.calls + 10)]
    if args.natural:
        queries = [q for k in queries for q in (
            k, f"What did the {k.split()[0]} say about the {k.split()[-1]} in the city last time?")]
    cid, cfg = args.campaign, SESSION_SEARCH
    params = {"s": None, "sp": None, "after": None, "before": None}
    n = cfg.leg_size(cfg.top_k)
    bounds = {"cap": cfg.common_word_chunks, "words": cfg.fulltext_words}
    every, two_step, one, kept, common, same_top, same = [], [], [], [], [], 0, 0
    search: list[float] = []
    try:
        for i, q in enumerate(queries):
            t = time.perf_counter()
            old = await svc.run(SemanticIndex.fulltext_search.op(svc.index, cid, q, n,
                                                                 rank="frequency"))
            a = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            ref, _ = await svc.run(statement_timeout_op(
                fulltext_two_step_op(cid, q, n, params, **bounds), cfg.fulltext_guard_ms))
            b = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            new, pick = await svc.run(fulltext_op(cid, q, n, params, **bounds),
                                      transaction=False)
            c = (time.perf_counter() - t) * 1000
            svc.embedder._cache.clear()
            t = time.perf_counter()
            await svc.call_tool("memory.search_sessions", {"query": q}, ToolScope(cid, None, None))
            d = (time.perf_counter() - t) * 1000
            if i < 10:
                continue  # warm-up
            every.append(a)
            two_step.append(b)
            one.append(c)
            search.append(d)
            kept.append(len(pick.kept))
            common.append(len(pick.common))
            same_top += bool(old and new and old[0].chunk.id == new[0].chunk.id)
            same += [(h.chunk.id, h.score) for h in ref] == [(h.chunk.id, h.score) for h in new]
    finally:
        await svc.close()
    e, b, o = stats(every), stats(two_step), stats(one)
    return {
        "bench": "fulltext_leg",
        "campaign": cid,
        "questions": len(one),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "every_word": e,
        "bounded_two_step": b,
        "bounded_one_statement": o,
        "p50_ratio_one_over_two_step": round(o["p50_ms"] / b["p50_ms"], 3),
        "p95_ratio_one_over_two_step": round(o["p95_ms"] / b["p95_ms"], 3),
        "same_answer_one_vs_two_step": same,
        "words_kept_mean": round(float(np.mean(kept)), 2),
        "words_common_mean": round(float(np.mean(common)), 2),
        "same_top_chunk_as_every_word": same_top,
        "search_sessions": stats(search),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--home", type=Path, required=True, help="GLYPHOXA_HOME of a built dataset")
    ap.add_argument("--campaign", default="bench-realtime")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--natural", action="store_true",
                    help="add a plain-English question beside each keyword question")
    args = ap.parse_args()
    out = asyncio.run(run(args))
    print(f"load {out['load_average_1m']}, {out['questions']} questions: every word "
          f"{out['every_word']}; bounded, two statements {out['bounded_two_step']}; one "
          f"statement {out['bounded_one_statement']} (p50 x{out['p50_ratio_one_over_two_step']},"
          f" p95 x{out['p95_ratio_one_over_two_step']}); same answer "
          f"{out['same_answer_one_vs_two_step']} of {out['questions']}; search_sessions "
          f"{out['search_sessions']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
