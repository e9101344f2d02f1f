"""What sharing pre-fetch results through PostgreSQL costs one process's hot context: two
services on one dataset, one with `shared_prefetch` off and one on, fed the same partials, then
their hot contexts measured alternately (so both see the same machine load), as p50 / p95 and
as the on - off difference.

    python bench/shared_prefetch.py            # bench/realtime.py's quick dataset
    python bench/shared_prefetch.py --small    # 2 x 1,000 entries (a quicker build)

`bench/realtime.py` measures each setting in its own process minutes apart; on a busy
machine that gap drowns a sub-millisecond difference, which this run does not have. Prints
the figures and a last line of one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The repository before bench/: bench/realtime.py would otherwise shadow the `realtime` package.
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import scale_dataset  # noqa: E402

from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.memory import NewEntry, SessionStore  # noqa: E402

SMALL = scale_dataset.Scale(sessions=2, entries_per_session=1000, chunks=1000, entities=300,
                            relationships=1000)
_CUES = ("do you remember", "last time", "what happened when", "previously")


def _stats(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples), 3),
            "p95_ms": round(float(np.percentile(samples, 95)), 3), "n": len(samples)}


def _live_session(db: Database, ds: scale_dataset.Dataset) -> tuple[str, list[str]]:
    log = SessionStore(db)
    start = scale_dataset.T0 + timedelta(days=7 * len(ds.session_ids))
    live = log.start_session(ds.campaign_id, f"{ds.campaign_id}-live", started_at=start).id
    npcs = ds.npc_ids[:8]
    log.set_scene(live, {"location": ds.entity_ids[1], "present": npcs[:4]})
    log.write_entries(live, [
        NewEntry(idempotency_key=f"warm-{i}", text=f"Warm-up line {i} about Name{i:05d}.",
                 speaker_name=f"Player{i % 5}", spoken_at=start + timedelta(seconds=3 * i))
        for i in range(40)])
    return live, npcs


async def _run(url: str, settings: Settings, ds: scale_dataset.Dataset, live: str,
               npcs: list[str], calls: int, partials: int, pull_wait_ms: float | None
               ) -> dict[str, Any]:
    from realtime.service import MemoryService

    services = {}
    for name, shared in (("off", False), ("on", True)):
        svc = MemoryService(url, settings=settings, spool_dir=settings.home / f"spool-{name}",
                            shared_prefetch=shared)
        await svc.open(warm_embedder=False)
        await asyncio.to_thread(svc.embedder.embed_sync, "warm up")
        services[name] = svc
    shared = services["on"].shared_prefetch
    if shared is not None and pull_wait_ms is not None:  # the round trip alone, no waiting
        shared.wait_s = pull_wait_ms / 1000
    names = [f"Name{i:05d}" for i in range(min(300, len(ds.entity_ids)))]
    words = scale_dataset.GAME_WORDS
    try:
        for svc in services.values():  # the same partials, so both caches and the table fill
            await svc.names(ds.campaign_id)
            for i in range(partials):
                cue = _CUES[i % len(_CUES)] if i % 3 == 0 else ""
                await svc.partial(live, f"hey {names[(i * 13) % len(names)]} {cue} the "
                                        f"{words[i % len(words)]}", npcs[i % len(npcs)])
                await svc.wait_prefetch(live, 5.0)
            for _ in range(100):  # the identity cache works once its listener is connected
                if svc.graph_cache.enabled:
                    break
                await asyncio.sleep(0.05)
        samples: dict[str, list[float]] = {"off": [], "on": []}
        for i in range(-10, calls):
            order = ("off", "on") if i % 2 == 0 else ("on", "off")
            for name in order:
                t = time.perf_counter()
                await services[name].hot_context(live, npcs[i % len(npcs)])
                if i >= 0:
                    samples[name].append((time.perf_counter() - t) * 1000)
        return {"off": _stats(samples["off"]), "on": _stats(samples["on"]),
                "paired_diff_p50_ms": round(statistics.median(
                    b - a for a, b in zip(samples["off"], samples["on"], strict=True)), 3),
                "pull": dict(shared.stats) if shared is not None else None,
                "partials": partials}
    finally:
        for svc in services.values():
            await svc.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="2 x 1,000 entries")
    ap.add_argument("--calls", type=int, default=300, help="hot contexts per setting")
    ap.add_argument("--partials", type=int, default=100, help="partials before measuring")
    ap.add_argument("--pull-wait-ms", type=float, default=None,
                    help="the pull's wait for other workers' fetches (default: the service's)")
    args = ap.parse_args()
    scale = SMALL if args.small else scale_dataset.QUICK
    home = Path(tempfile.mkdtemp(prefix="glyphoxa-bench-sp-")).resolve()
    home.chmod(0o755)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"))
    url = resolve_url(settings)
    try:
        with Database(url, max_size=4) as db:
            ds = scale_dataset.build(db, scale, campaign_id="bench-shared-prefetch")
            live, npcs = _live_session(db, ds)
        results = asyncio.run(_run(url, settings, ds, live, npcs, args.calls, args.partials,
                                 args.pull_wait_ms))
    finally:
        if not settings.database_url:
            embedded.stop(settings.pgdata)
    load = round(os.getloadavg()[0], 2)
    print(f"machine: {os.cpu_count()} CPUs, load average {load}")
    for name in ("off", "on"):
        s = results[name]
        print(f"hot context, shared pre-fetch {name:3}: p50 {s['p50_ms']:.3f} ms, "
              f"p95 {s['p95_ms']:.3f} ms")
    print(f"on - off, paired p50: {results['paired_diff_p50_ms']:.3f} ms; pull {results['pull']}")
    print(json.dumps({"bench": "shared_prefetch", "scale": scale.__dict__, "load_average": load,
                      **results}))


if __name__ == "__main__":
    main()
