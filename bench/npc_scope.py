"""What NPC-scoped recall costs session search's legs (issue 17), on the store bench's scale
dataset (bench/scale_dataset.py).

    python bench/npc_scope.py --quick     # 6 sessions x 3,000 entries, 6k chunks
    python bench/npc_scope.py             # 50 x 3,000 entries, 50k chunks

The vector leg (HNSW, ef_search 64, 24 neighbours) and the full-text leg (`ts_rank`, 24
results) as session search runs them, each query run for every listener in rotating order
(side by side, so machine load falls on all alike): no listener (the DM), and an NPC, first
over lines with no presence recorded (every line public: data from before migration 022),
then with presence recorded per scene of 300 lines: one NPC present in half the scenes, one in
a twentieth. p50 / p95 in ms and each listener's ratio to no listener; the last line is one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import scale_dataset  # noqa: E402

from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.db.operations import Op, execute, fetch_all  # noqa: E402
from glyphoxa_pipelines.memory import SemanticIndex  # noqa: E402

SCENE_LINES = 300
LEG_SIZE = 24  # session search's leg size at top_k 8
EF_SEARCH = 64


def _stats(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples), 3),
            "p95_ms": round(float(np.percentile(samples, 95)), 3), "n": len(samples)}


def _measure(index: SemanticIndex, cid: str, queries: list[tuple[np.ndarray, str]],
             listeners: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    times: dict[str, dict[str, list[float]]] = {
        leg: {name: [] for name in listeners} for leg in ("vector", "fulltext")}
    counts: dict[str, list[int]] = {name: [] for name in listeners}
    names = list(listeners)
    for i, (vec, text) in enumerate(queries):
        order = names[i % len(names):] + names[:i % len(names)]
        for name in order:
            who = listeners[name]
            t = time.perf_counter()
            hits = index.search(cid, vec, LEG_SIZE, ef_search=EF_SEARCH, listener=who)
            times["vector"][name].append((time.perf_counter() - t) * 1000)
            counts[name].append(len(hits))
            t = time.perf_counter()
            index.fulltext_search(cid, text, LEG_SIZE, rank="frequency", listener=who)
            times["fulltext"][name].append((time.perf_counter() - t) * 1000)
    out: dict[str, dict[str, Any]] = {}
    for leg, per in times.items():
        base = statistics.median(per[names[0]])
        out[leg] = {name: dict(_stats(s), ratio_p50=round(statistics.median(s) / base, 3))
                    for name, s in per.items()}
    out["vector_hits_mean"] = {n: round(float(np.mean(c)), 2) for n, c in counts.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6k chunks instead of 50k")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    scale = scale_dataset.QUICK if args.quick else scale_dataset.FULL
    home = Path(tempfile.mkdtemp(prefix="glyphoxa-bench-scope-")).resolve()
    home.chmod(0o755)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"))
    url = resolve_url(settings)
    rng = np.random.default_rng(7)
    try:
        with Database(url, max_size=4) as db:
            print(f"building dataset: {scale}", flush=True)
            ds = scale_dataset.build(db, scale, campaign_id="bench-scope")
            cid = ds.campaign_id
            often, rarely = ds.npc_ids[0], ds.npc_ids[1]
            index = SemanticIndex(db)
            texts = [r["text"] for r in db.run(_chunk_texts_op(cid))]
            queries = []
            for _ in range(args.queries):
                k = int(rng.integers(len(ds.embeddings)))
                noise = rng.normal(0, 0.02, ds.embeddings.shape[1]).astype(np.float32)
                words = texts[k % len(texts)].split()
                s = int(rng.integers(max(1, len(words) - 4)))
                queries.append((ds.embeddings[k] + noise, " ".join(words[s:s + 4])))
            listeners = {"dm": None, "npc": often}
            public = _measure(index, cid, queries, listeners)
            db.run(_record_presence_op(cid, often, rarely))
            scoped = _measure(index, cid, queries,
                              {"dm": None, "npc_half": often, "npc_twentieth": rarely})
    finally:
        embedded.stop(settings.pgdata)
    report = {"scale": scale.__dict__, "queries": args.queries, "load": os.getloadavg()[0],
              "no_presence_recorded": public, "presence_recorded": scoped}
    for title, part in (("every line public", public), ("presence recorded", scoped)):
        print(title)
        for leg in ("vector", "fulltext"):
            for name, s in part[leg].items():
                print(f"  {leg:9s} {name:14s} p50 {s['p50_ms']:7.2f}  p95 {s['p95_ms']:7.2f}"
                      f"  x{s['ratio_p50']}")
        print(f"  vector hits per query: {part['vector_hits_mean']}")
    print(json.dumps(report))


def _chunk_texts_op(cid: str) -> Op[list[dict[str, Any]]]:
    rows = yield fetch_all("SELECT text FROM chunks WHERE campaign_id = %s ORDER BY id", (cid,))
    return rows


def _record_presence_op(cid: str, often: str, rarely: str) -> Op[int]:
    """Presence per scene of SCENE_LINES lines: `often` in every other scene, `rarely` in one
    in twenty, a third NPC in all (so no line is public)."""
    n = yield execute(
        """UPDATE session_entries SET witnesses = ARRAY['npc-bystander']
               || CASE WHEN (id / %(scene)s) %% 2 = 0 THEN ARRAY[%(often)s] ELSE '{}' END
               || CASE WHEN (id / %(scene)s) %% 20 = 0 THEN ARRAY[%(rarely)s] ELSE '{}' END
           WHERE campaign_id = %(c)s""",
        {"c": cid, "often": often, "rarely": rarely, "scene": SCENE_LINES},
    )
    # what a DM's presence edit does to the chunks of the sessions it touches
    yield execute(
        """UPDATE chunks SET audience = glyphoxa_chunk_audience(session_id, first_entry_id,
               last_entry_id) WHERE campaign_id = %(c)s""", {"c": cid})
    yield execute("ANALYZE session_entries")
    yield execute("ANALYZE chunks")
    return n


if __name__ == "__main__":
    main()
