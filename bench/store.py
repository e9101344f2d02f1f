"""Memory store benchmark: latency of the realtime read paths and bulk ingest throughput at
campaign scale (50 sessions x 3,000 entries, 50k chunks, 2,000 entities, 10k facts).

    python bench/store.py            # full scale (several minutes)
    python bench/store.py --quick    # smaller, under a minute

Prints p50 / p95 per operation (>= 200 calls each), throughput, k-NN recall@10 against
exact search, and a last line with one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import scale_dataset  # noqa: E402

from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.memory import (  # noqa: E402
    KnowledgeGraph,
    NewEntry,
    SemanticIndex,
    SessionStore,
)
from glyphoxa_pipelines.memory.hot_read import hot_row_op  # noqa: E402
from glyphoxa_pipelines.memory.session_log import insert_entries_op  # noqa: E402

TARGETS_MS = {
    "hot_row": 5.0,
    "hot_row_live": 3.0,
    "write_entry_live": 3.0,
    "get_recent": 2.0,
    "identity_snapshot": 3.0,
    "neighbors_d2": 5.0,
    "knn_top10": 10.0,
    "knn_top10_session": 10.0,
}


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def measure(fn: Callable[[int], object], calls: int) -> dict[str, float]:
    for i in range(10):  # warm caches and prepared statements
        fn(i)
    samples = []
    for i in range(calls):
        t = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - t) * 1000)
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(percentile(samples, 95), 3),
        "calls": calls,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller scale, under a minute")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument(
        "--home",
        type=Path,
        default=None,
        help="GLYPHOXA_HOME for the bench server (default: a temporary folder)",
    )
    args = ap.parse_args()
    scale = scale_dataset.QUICK if args.quick else scale_dataset.FULL
    home = args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-bench-"))
    settings = Settings(home=home.resolve(), database_url=os.environ.get("GLYPHOXA_DATABASE_URL"))
    url = resolve_url(settings)
    try:
        with Database(url, max_size=4) as db:
            run(db, scale, args.calls)
    finally:
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)


def run(db: Database, scale: scale_dataset.Scale, calls: int) -> None:
    def progress(what: str, done: int, total: int) -> None:
        print(f"\r  building {what}: {done}/{total}", end="", file=sys.stderr, flush=True)

    print(f"building dataset: {scale}", flush=True)
    ds = scale_dataset.build(db, scale, progress=progress)
    print(file=sys.stderr)
    cid = ds.campaign_id
    log, graph, index = SessionStore(db), KnowledgeGraph(db), SemanticIndex(db)
    rng = np.random.default_rng(7)
    sessions = ds.session_ids
    npcs = ds.npc_ids
    ents = ds.entity_ids
    queries = scale_dataset.clustered_embeddings(rng, calls + 10)
    words = ["dragon", "crown poison", "ledger barracks", "wizard tower", "secret door key"]
    pairs = [(ents[int(a)], ents[int(b)]) for a, b in rng.integers(0, len(ents), (calls + 10, 2))]

    run_id = time.time_ns()

    def hot(i: int, identity: bool) -> object:
        # The realtime service's hot-context read, with its defaults (60 lines, 30 facts, 5 min).
        return db.run(
            hot_row_op(
                sessions[i % len(sessions)],
                npcs[i % len(npcs)],
                recent_limit=60,
                fact_limit=30,
                window_s=300.0,
                with_identity=identity,
            ),
            transaction=False,
        )

    def write_live(i: int) -> object:
        # The live write path: one utterance, one statement, no transaction.
        entry = NewEntry(f"bench-{run_id}-{i}", "The dragon is awake.", speaker_name="Bench")
        return db.run(insert_entries_op(sessions[i % len(sessions)], [entry]), transaction=False)

    results = {
        "hot_row": measure(lambda i: hot(i, True), calls),
        "hot_row_live": measure(lambda i: hot(i, False), calls),
        "write_entry_live": measure(write_live, calls),
        "get_recent": measure(
            lambda i: log.get_recent(sessions[i % len(sessions)], timedelta(minutes=5)), calls
        ),
        "identity_snapshot": measure(
            lambda i: graph.identity_snapshot(cid, npcs[i % len(npcs)]), calls
        ),
        "neighbors_d2": measure(
            lambda i: graph.neighbors(cid, ents[i % len(ents)], depth=2, max_nodes=100), calls
        ),
        "find_path_d4": measure(lambda i: graph.find_path(cid, *pairs[i], max_depth=4), calls),
        "fulltext_l1": measure(lambda i: log.search(cid, words[i % len(words)], limit=10), calls),
        "knn_top10": measure(lambda i: index.search(cid, queries[i], 10), calls),
        "knn_top10_session": measure(
            lambda i: index.search(cid, queries[i], 10, session_id=sessions[i % len(sessions)]),
            calls,
        ),
    }
    # recall@10 of the HNSW search against exact cosine search
    recalls, recalls_s = [], []
    for i in range(min(calls, 200)):
        q = queries[i]
        exact = np.argsort(-(ds.embeddings @ q))[:10]
        got = {h.chunk.id for h in index.search(cid, q, 10)}
        recalls.append(len(got & {ds.chunk_ids[j] for j in exact}) / 10)
        s = i % len(sessions)
        mask = np.where(ds.chunk_sessions == s)[0]
        exact_s = mask[np.argsort(-(ds.embeddings[mask] @ q))[:10]]
        got_s = {h.chunk.id for h in index.search(cid, q, 10, session_id=sessions[s])}
        recalls_s.append(len(got_s & {ds.chunk_ids[j] for j in exact_s}) / 10)
    t = ds.timings
    summary = {
        "bench": "store",
        "scale": {
            "sessions": scale.sessions,
            "entries": scale.entries,
            "chunks": scale.chunks,
            "entities": scale.entities,
            "relationships": scale.relationships,
        },
        **{f"{k}_{m}": v[m] for k, v in results.items() for m in ("p50_ms", "p95_ms")},
        "ingest_entries_per_s": round(scale.entries / t["entries_s"]),
        "ingest_chunks_per_s": round(scale.chunks / t["chunks_s"]),
        "entry_embeddings_copy_s": round(t["entry_embeddings_s"], 2),
        "knn_recall_at_10": round(float(np.mean(recalls)), 4),
        "knn_session_recall_at_10": round(float(np.mean(recalls_s)), 4),
    }
    print(f"{'operation':<20} {'p50 ms':>8} {'p95 ms':>8} {'target p95':>10}")
    for k, v in results.items():
        target = TARGETS_MS.get(k)
        mark = "" if target is None else ("ok" if v["p95_ms"] <= target else "MISS")
        print(f"{k:<20} {v['p50_ms']:>8.3f} {v['p95_ms']:>8.3f} {target or '-':>10} {mark}")
    print(
        f"ingest: {summary['ingest_entries_per_s']} entries/s (target 5000), "
        f"{summary['ingest_chunks_per_s']} chunks/s (target 1000); per-turn embeddings "
        f"bulk-copied in {summary['entry_embeddings_copy_s']} s (not an ingest path)"
    )
    print(
        f"k-NN recall@10: {summary['knn_recall_at_10']} (session-filtered "
        f"{summary['knn_session_recall_at_10']}; target 0.95)"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
