"""The full-text leg of session search at full scale, side by side, call by call on the same
questions: every word ranked (the leg before it was bounded: `SemanticIndex.fulltext_search`,
`ts_rank`), the bounded leg as two statements in a transaction under a SET LOCAL limit (the
leg before it became one statement), and the leg as the tool runs it now (one statement, word
counts from `chunk_lexeme_counts`: `realtime/session_search/fulltext.py`), with how often the
last two answer alike (they must, always); then the whole `memory.search_sessions` (query
embedding included, its cache cleared every call) as it ran before this leg became one
statement (that leg, and the query embedded on a worker thread) and as it runs now, the two
alternating call by call (which goes first alternates too), with how often they return the
same results. `--natural` adds a question in plain English (stop and common words) to each of
the bench's keyword questions.

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
from collections.abc import Iterator
from contextlib import contextmanager
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
    search_before: list[float] = []
    same_search = 0
    npc = args.npc
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
            timed: dict[bool, float] = {}
            answers: dict[bool, Any] = {}
            for before in (i % 2 == 0, i % 2 == 1):
                svc.embedder._cache.clear()
                with as_before(svc, before):
                    t = time.perf_counter()
                    answers[before] = await svc.call_tool(
                        "memory.search_sessions", {"query": q}, ToolScope(cid, None, npc))
                    timed[before] = (time.perf_counter() - t) * 1000
            if i < 10:
                continue  # warm-up
            every.append(a)
            two_step.append(b)
            one.append(c)
            search_before.append(timed[True])
            search.append(timed[False])
            # the same results (the answer also carries its own elapsed time)
            same_search += answers[True]["results"] == answers[False]["results"]
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
        "search_sessions_before": stats(search_before),
        "search_sessions": stats(search),
        "p50_ratio_search_now_over_before": round(
            stats(search)["p50_ms"] / stats(search_before)["p50_ms"], 3),
        "p95_ratio_search_now_over_before": round(
            stats(search)["p95_ms"] / stats(search_before)["p95_ms"], 3),
        "same_results_now_vs_before": same_search,
    }


@contextmanager
def as_before(svc: Any, before: bool) -> Iterator[None]:
    """The tool as it ran before the one-statement leg: the two-step leg in a transaction
    under a SET LOCAL limit, and the query embedded on a worker thread (`before`); else as
    it runs now. Swapped in for one call, then restored."""
    from glyphoxa_pipelines.db import StatementTimeoutError
    from glyphoxa_pipelines.db.operations import statement_timeout_op
    from glyphoxa_pipelines.memory.visibility import chunk_visible
    from realtime.session_search import search
    from realtime.session_search.fulltext import fulltext_two_step_op
    from realtime.session_search.legs import fulltext_leg

    async def two_step_leg(host: Any, campaign_id: str, query: str, n: int, filters: Any,
                           config: Any) -> Any:
        params = {"s": filters["session_id"], "sp": filters["speaker"],
                  "after": filters["after"], "before": filters["before"]}
        op = fulltext_two_step_op(campaign_id, query, n, params, cap=config.common_word_chunks,
                                  words=config.fulltext_words,
                                  scope=(chunk_visible("c"), {"listener": filters["listener"]}))
        try:
            hits, _ = await host.run(statement_timeout_op(op, config.fulltext_guard_ms))
        except StatementTimeoutError:
            return None
        return hits

    inline = svc.embedder._inline_max_chars
    if before:
        search.fulltext_leg = two_step_leg
        svc.embedder._inline_max_chars = 0
    try:
        yield
    finally:
        search.fulltext_leg = fulltext_leg
        svc.embedder._inline_max_chars = inline


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--home", type=Path, required=True, help="GLYPHOXA_HOME of a built dataset")
    ap.add_argument("--campaign", default="bench-realtime")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--npc", default="e00000", help="whose recall the tool searches")
    ap.add_argument("--natural", action="store_true",
                    help="add a plain-English question beside each keyword question")
    args = ap.parse_args()
    out = asyncio.run(run(args))
    print(f"load {out['load_average_1m']}, {out['questions']} questions: every word "
          f"{out['every_word']}; bounded, two statements {out['bounded_two_step']}; one "
          f"statement {out['bounded_one_statement']} (p50 x{out['p50_ratio_one_over_two_step']},"
          f" p95 x{out['p95_ratio_one_over_two_step']}); same answer "
          f"{out['same_answer_one_vs_two_step']} of {out['questions']}")
    print(f"search_sessions before {out['search_sessions_before']}, now "
          f"{out['search_sessions']} (p50 x{out['p50_ratio_search_now_over_before']}, p95 "
          f"x{out['p95_ratio_search_now_over_before']}); same results "
          f"{out['same_results_now_vs_before']} of {out['questions']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
