"""Realtime service benchmark on the store bench's scale dataset (bench/scale_dataset.py).

    python bench/realtime.py --quick     # 6 sessions x 3,000 entries, 6k chunks (about a minute)
    python bench/realtime.py             # 50 x 3,000 entries, 50k chunks, 2k entities (minutes)

p50 / p95 of: hot context assembly in-process and over HTTP on loopback (a separate uvicorn
process; the NPC's identity comes from the service's graph cache, as between turns of a live
game; `hot_context_inprocess_uncached` drops the cache before every call), each memory tool
(search_sessions including its query embedding, the query cache cleared before every call,
and the turns of its candidate windows with their cosines from entry_embeddings, scored),
entry ingestion with inline correction, pre-fetch on a partial
(detection + scheduling; the background fetch is reported too); throughput of hot context with
32 concurrent HTTP clients. Prints the figures and a last line of one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def code_root(argv: list[str]) -> Path:
    """The checkout whose service code is measured (`--code`, default this one). It must be
    chosen before anything is imported: this script puts its checkout first on `sys.path`,
    ahead of PYTHONPATH, so a script run from one checkout always measured that checkout's
    code whatever PYTHONPATH said (how "the old script" read faster for "either code")."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--code", type=Path, default=ROOT)
    code = pre.parse_known_args(argv)[0].code.resolve()
    if not (code / "realtime" / "__init__.py").is_file():
        raise SystemExit(f"--code {code}: not a checkout of this project (no realtime/)")
    return code


CODE = code_root(sys.argv[1:])
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(CODE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import scale_dataset  # noqa: E402

from glyphoxa_pipelines.config import Settings  # noqa: E402
from glyphoxa_pipelines.db import Database, embedded, resolve_url  # noqa: E402
from glyphoxa_pipelines.memory import (  # noqa: E402
    NewEntry,
    SessionStore,
    SessionSummary,
    SummaryStore,
)

TARGETS_P95_MS = {
    "hot_context_inprocess": 5.0,
    "hot_context_http": 10.0,
    "memory.search_sessions": 20.0,  # issue 17: query embedding included
    "memory.query_entities": 3.0,
    "memory.get_session_summary": 3.0,
    "ingest_entry": 3.0,
    "prefetch_partial": 1.0,
}
TARGET_THROUGHPUT = 300.0
CAMPAIGN = "bench-realtime"
_CUES = ("do you remember", "last time", "what happened when", "previously")


def stats(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p95_ms": round(float(np.percentile(samples, 95)), 3),
        "n": len(samples),
    }


async def measure_async(fn: Callable[[int], Awaitable[object]], n: int, warm: int = 10) -> dict:
    for i in range(warm):
        await fn(-1 - i)
    samples = []
    for i in range(n):
        t = time.perf_counter()
        await fn(i)
        samples.append((time.perf_counter() - t) * 1000)
    return stats(samples)


def prepare_live(db: Database, ds: scale_dataset.Dataset) -> tuple[str, list[str]]:
    """A live session with a scene and summaries of the past sessions."""
    log, summaries = SessionStore(db), SummaryStore(db)
    cid = ds.campaign_id
    start = scale_dataset.T0 + timedelta(days=7 * len(ds.session_ids))
    npcs = ds.npc_ids[:8]
    with db.connection() as conn:  # a reused campaign (`--reuse`) already has its live session
        row = conn.execute("SELECT id FROM sessions WHERE campaign_id = %s AND id = %s",
                           (cid, f"{cid}-live")).fetchone()
    if row is not None:
        return str(row[0]), npcs
    live = log.start_session(cid, f"{cid}-live", started_at=start).id
    quests = [e for e in ds.entity_ids if e.endswith(("4",))][:3]
    log.set_scene(live, {"location": ds.entity_ids[1], "present": npcs[:4], "quests": quests})
    for k, sid in enumerate(ds.session_ids):
        summaries.save(SessionSummary(sid, cid, f"Session {k}: the party fought and talked.",
                                      ["fight", "talk"], "bench"))
    now = start
    log.write_entries(live, [
        NewEntry(idempotency_key=f"warm-{i}", text=f"Warm-up line {i} about Name{i:05d}.",
                 speaker_name=f"Player{i % 5}", spoken_at=now + timedelta(seconds=3 * i))
        for i in range(40)
    ])
    return live, npcs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_healthy(client: Any, what: str, *, timeout_s: float) -> None:
    """Poll `/healthz` on an aiohttp session until the server answers 200 (it loads its
    models first)."""
    import aiohttp

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            async with client.get("/healthz") as r:
                if r.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{what} did not come up within {timeout_s:.0f} s")


def start_server(url: str, home: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GLYPHOXA_DATABASE_URL": url, "GLYPHOXA_HOME": str(home / "http"),
           "PYTHONPATH": str(CODE)}
    cmd = [sys.executable, "-c", "from glyphoxa_pipelines.cli import main; main()", "serve",
           "--port", str(port), "--log-level", "warning", "--workers", str(workers)]
    return subprocess.Popen(cmd, env=env, cwd=CODE)


async def http_bench(url: str, home: Path, live: str, npcs: list[str], n: int, clients: int,
                     seconds: float, workers: int) -> dict:
    """The load generator is aiohttp: httpx's client spent 1.7-4.6 ms of CPU per request here,
    more than the server, and on two shared cores the client's CPU is the server's loss."""
    import aiohttp

    port = free_port()
    proc = start_server(url, home, port, workers)
    base = f"http://127.0.0.1:{port}"
    connector = aiohttp.TCPConnector(limit=clients)
    timeout = aiohttp.ClientTimeout(total=10)
    try:
        async with aiohttp.ClientSession(base, connector=connector, timeout=timeout) as client:
            await wait_healthy(client, "the HTTP server", timeout_s=30.0)
            # let the server load its embedding model before anything is timed
            async with client.post("/v1/tools/memory.search_sessions", json={
                    "session_id": live, "arguments": {"query": "warm up"}},
                    timeout=aiohttp.ClientTimeout(total=120)) as r:
                await r.read()

            def ctx_url(i: int) -> str:
                return f"/v1/sessions/{live}/npcs/{npcs[i % len(npcs)]}/context"

            async def get(i: int) -> int:
                async with client.get(ctx_url(i)) as r:
                    await r.read()
                    return r.status

            # Sequential latency: one keep-alive connection, one request at a time.
            for i in range(20):
                assert await get(i) == 200
            samples = []
            for i in range(n):
                t = time.perf_counter()
                status = await get(i)
                samples.append((time.perf_counter() - t) * 1000)
                assert status == 200, status
            seq = stats(samples)

            # Throughput: `clients` concurrent clients for `seconds`.
            done = 0
            errors = 0
            stop = time.perf_counter() + seconds

            async def worker(w: int) -> None:
                nonlocal done, errors
                i = w
                while time.perf_counter() < stop:
                    if await get(i) == 200:
                        done += 1
                    else:
                        errors += 1
                    i += clients

            t = time.perf_counter()
            await asyncio.gather(*(worker(w) for w in range(clients)))
            elapsed = time.perf_counter() - t
        return {"sequential": seq, "throughput_per_s": round(done / elapsed, 1),
                "errors": errors, "clients": clients, "workers": workers}
    finally:
        proc.terminate()
        proc.wait(10)


async def inprocess_bench(url: str, settings: Settings, ds: scale_dataset.Dataset, live: str,
                          npcs: list[str], n: int, *, only: tuple[str, ...] | None = None,
                          stages: bool = True,
                          answers: dict[str, list[dict[str, Any]]] | None = None) -> dict:
    from realtime.schemas import EntryIn
    from realtime.service import MemoryService
    from realtime.tools import ToolScope

    svc = MemoryService(url, settings=settings, spool_dir=settings.home / "spool-bench")
    await svc.open(warm_embedder=False)
    # As the service warms up at start (`MemoryService.warm_up`; older checkouts: the model
    # alone), after the bench's own set-up is built.
    warm_up = getattr(svc, "warm_up", None)
    await (warm_up() if warm_up else asyncio.to_thread(svc.embedder.embed_sync, "warm up"))
    cid = ds.campaign_id
    names = [f"Name{i:05d}" for i in range(min(300, len(ds.entity_ids)))]
    rng = np.random.default_rng(11)
    words = scale_dataset.GAME_WORDS
    out: dict[str, dict] = {}

    def wanted(name: str) -> bool:
        return only is None or name in only

    fetch_ms: list[float] = []
    try:
        await svc.names(cid)

        # ingestion: one utterance per call, with a name to correct (lower-cased, misspelt)
        async def ingest(i: int) -> None:
            name = names[i % len(names)]
            text = (f"I think {name.lower()} went to the {words[i % len(words)]} "
                    f"with the {words[(i * 7) % len(words)]}")
            await svc.write_entries(live, [EntryIn(idempotency_key=f"ing-{i}-{time.time_ns()}",
                                                   text=text, speaker_name="Player1")])
        samples = []
        for i in range(-10, n if wanted("ingest_entry") else -10):
            t = time.perf_counter()
            await ingest(i)
            if i >= 0:
                samples.append((time.perf_counter() - t) * 1000)
            # the utterance's own pre-fetch runs behind it: let it finish before the next one
            await svc.wait_prefetch(live, 5.0)
        if samples:
            out["ingest_entry"] = stats(samples)

        # pre-fetch on a partial: correction + detection + scheduling (fetch runs behind)
        async def partial(i: int) -> None:
            name = names[(i * 13) % len(names)]
            cue = _CUES[i % len(_CUES)] if i % 3 == 0 else ""
            text = (f"hey {name} {cue} the {words[i % len(words)]} and the "
                    f"{words[(i * 5) % len(words)]}")
            await svc.partial(live, text, npcs[i % len(npcs)])

        samples = []
        for i in range(-10, n if wanted("prefetch_partial") else -10):
            svc.prefetch.clear(live)
            t = time.perf_counter()
            await partial(i)
            if i >= 0:
                samples.append((time.perf_counter() - t) * 1000)
            await svc.wait_prefetch(live, 5.0)  # keep background fetches out of the next call
        if samples:
            out["prefetch_partial"] = stats(samples)
        fetch_ms = [item.elapsed_ms for bucket in svc.prefetch._items.values()
                    for item in bucket.values() if item.elapsed_ms]
        svc.prefetch.clear(live)

        for _ in range(100):  # the identity cache works once its listener is connected
            if svc.graph_cache.enabled:
                break
            await asyncio.sleep(0.05)

        async def hot(i: int) -> None:
            await svc.hot_context(live, npcs[i % len(npcs)])

        async def hot_uncached(i: int) -> None:
            svc.graph_cache.invalidate(cid)  # as after a graph change: identity read too
            await svc.hot_context(live, npcs[i % len(npcs)])

        scope = ToolScope(cid, live, npcs[0])
        queries = [" ".join(rng.choice(words, size=int(rng.integers(3, 7)))) for _ in range(n + 20)]

        async def search_sessions(i: int) -> None:
            svc.embedder._cache.clear()  # honest: every call embeds its query
            found = await svc.call_tool("memory.search_sessions", {"query": queries[i]}, scope)
            if answers is not None and i >= 0:
                answers[queries[i]] = found["results"]

        async def query_entities(i: int) -> None:
            await svc.call_tool("memory.query_entities", {"name": names[i % len(names)]}, scope)

        async def summary(i: int) -> None:
            which = "last" if i % 2 else ds.session_ids[i % len(ds.session_ids)]
            await svc.call_tool("memory.get_session_summary", {"session": which}, scope)

        async def facts(i: int) -> None:
            args = {"entity": names[i % len(names)]} if i % 2 else {"query": queries[i]}
            await svc.call_tool("memory.search_facts", args, scope)

        async def graph(i: int) -> None:
            svc.embedder._cache.clear()
            await svc.call_tool("memory.search_graph",
                                {"query": queries[i], "entity": names[i % 50]}, scope)

        for name, fn in (("hot_context_inprocess", hot),
                         ("hot_context_inprocess_uncached", hot_uncached),
                         ("memory.search_sessions", search_sessions),
                         ("memory.query_entities", query_entities),
                         ("memory.get_session_summary", summary),
                         ("memory.search_facts", facts),
                         ("memory.search_graph", graph)):
            if wanted(name):
                out[name] = await measure_async(fn, n)
        # After every tool's timing, so it cannot touch them.
        if stages:
            out.update(await search_stages(svc, cid, npcs[0], queries, n))
            out.update(await search_timeline(svc, scope, queries, n))
        embed = []
        # The encoder the tool embeds this campaign's queries with (its active model's, which
        # may not be the service's configured default).
        query_embedder = (await svc.campaign_models.query_embedder(cid)
                          if wanted("query_embedding_only") else None)
        for i in range(n if query_embedder is not None else 0):
            t = time.perf_counter()
            query_embedder._cache.clear()
            query_embedder.embed_sync(queries[i] + " x")
            embed.append((time.perf_counter() - t) * 1000)
        if embed:
            out["query_embedding_only"] = stats(embed)
        out["prefetch_background_fetch"] = stats(fetch_ms) if fetch_ms else {}
    finally:
        await svc.close()
    return out


async def search_stages(svc: Any, campaign_id: str, npc: str, queries: list[str],
                        n: int) -> dict[str, dict]:
    """Where search_sessions' time goes: each stage of `session_search.search` run alone, in
    order, with the tool's own config, `top_k` and the NPC's scope (the legs run one after
    another here, so their sum is more than the tool's wall time, where the full-text leg
    overlaps the embedding and the vector leg). `turns` is the tool's turn fetch with its
    scene widening."""
    from realtime.session_search import legs, passages, rrf
    from realtime.session_search.legs import Filters, fulltext_leg, vector_leg
    from realtime.tools.args import SearchSessionsArgs

    # Code from before scene widening (`--code` of an older checkout) fetches the turns alone.
    widened = getattr(legs, "fetch_scene_turns", None)

    host, config = svc.tools, svc.tools.search
    tool = SearchSessionsArgs(query="defaults")
    top_k = tool.top_k
    filters = Filters(session_id=None, speaker=None, after=None, before=None, listener=npc)
    n_leg = config.leg_size(top_k)
    wv, wt = config.fusion_weights
    stages: dict[str, list[float]] = {k: [] for k in (
        "embed", "vector_leg", "fulltext_leg", "turns", "packing")}
    # Code from before the campaign's own model (`--code` of an older checkout) takes the
    # bare vector and looks the model up under the service's.
    embed_query = getattr(legs, "embed_query", None)
    for i in range(-10, n):
        query = queries[i % len(queries)] + " stage"
        svc.embedder._cache.clear()
        marks = [time.perf_counter()]
        vec = (await embed_query(host, campaign_id, query) if embed_query
               else await svc.embedder.embed(query))
        marks.append(time.perf_counter())
        vhits = await vector_leg(host, campaign_id, vec, n_leg, filters, config)
        marks.append(time.perf_counter())
        thits = await fulltext_leg(host, campaign_id, query, n_leg, filters, config)
        marks.append(time.perf_counter())
        fused = rrf([vhits, thits or []], k=config.rrf_k, weights=[wv, wt])
        fused = fused[: config.windows_per_result * top_k]
        turns = await (widened(host, fused, vec, npc, config) if widened
                       else legs.fetch_turns(host, fused, vec))
        marks.append(time.perf_counter())
        passages(fused, turns, query, tool.max_tokens, limit=top_k)
        marks.append(time.perf_counter())
        if i >= 0:
            for name, a, b in zip(stages, marks, marks[1:], strict=False):
                stages[name].append((b - a) * 1000)
    return {f"search_stage_{k}": stats(v) for k, v in stages.items()}


async def search_timeline(svc: Any, scope: Any, queries: list[str], n: int
                          ) -> dict[str, dict]:
    """Where the tool's own calls spend, as they overlap: for each store operation and the
    query embedding, when it started after the call began and how long it took, and the
    time after the last operation ended (fusion, packing, results). The stage breakdown above
    runs the stages one after another; this one watches the tool itself."""
    marks: list[tuple[str, float, float]] = []
    db, embedder = svc.tools.db, svc.embedder
    run, embed = db.run, embedder.embed

    async def timed_run(op: Any, *, transaction: bool = True) -> Any:
        code = getattr(op, "gi_code", None)
        t = time.perf_counter()
        try:
            return await run(op, transaction=transaction)
        finally:
            name = code.co_name.removesuffix("_op") if code else "op"
            marks.append((name, t, time.perf_counter()))

    async def timed_embed(text: str) -> Any:
        t = time.perf_counter()
        try:
            return await embed(text)
        finally:
            marks.append(("embed", t, time.perf_counter()))

    db.run, embedder.embed = timed_run, timed_embed
    starts: dict[str, list[float]] = {}
    spans: dict[str, list[float]] = {}
    tails: list[float] = []
    try:
        for i in range(-10, n):
            embedder._cache.clear()
            marks.clear()
            t = time.perf_counter()
            await svc.call_tool("memory.search_sessions", {"query": queries[i] + " trace"},
                                scope)
            end = time.perf_counter()
            if i < 0 or not marks:
                continue
            for name, a, b in marks:
                starts.setdefault(name, []).append((a - t) * 1000)
                spans.setdefault(name, []).append((b - a) * 1000)
            tails.append((end - max(b for _, _, b in marks)) * 1000)
    finally:
        del db.run, embedder.embed  # the instance attributes: the classes' methods again
    out = {f"in_tool_{k}_start": stats(v) for k, v in starts.items()}
    out |= {f"in_tool_{k}": stats(v) for k, v in spans.items()}
    out["in_tool_after_last_op"] = stats(tails)
    return out


def compare_answers(path: Path, answers: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The timed search_sessions answers against those an earlier run left in `path` (another
    `--code`, same `--home`): how many questions got exactly the same results (text, scores,
    citations). The first run to name `path` writes it; later runs compare and never
    overwrite, so base and new code alternating over one file all compare with the first."""
    mine = {q: json.loads(json.dumps(r, default=str)) for q, r in answers.items()}
    if not path.exists():
        path.write_text(json.dumps(mine, sort_keys=True))
        return {"questions": len(mine), "written": str(path)}
    theirs = json.loads(path.read_text())
    common = [q for q in mine if q in theirs]
    same = sum(mine[q] == theirs[q] for q in common)
    empty = sum(not mine[q] for q in common)
    return {"questions": len(common), "same": same, "empty": empty, "against": str(path)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller dataset (about a minute)")
    ap.add_argument("--calls", type=int, default=300, help="calls per measured operation")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=5.0, help="throughput run length")
    ap.add_argument("--workers", type=int, default=1, help="uvicorn workers for the HTTP part")
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP measurements")
    ap.add_argument("--home", type=Path, default=None, help="GLYPHOXA_HOME (default: temporary)")
    ap.add_argument("--data", type=Path, default=None,
                    help="unused: the dataset is generated (accepted for a uniform CLI)")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the campaign an earlier run left in --home (built if absent)")
    ap.add_argument("--code", type=Path, default=ROOT,
                    help="the checkout whose service code is measured (default: this one)")
    ap.add_argument("--only", type=lambda v: tuple(v.split(",")), default=None,
                    help="comma-separated operations to time (e.g. memory.search_sessions); "
                         "default: all")
    ap.add_argument("--no-stages", action="store_true",
                    help="skip the search_sessions stage breakdown")
    ap.add_argument("--answers", type=Path, default=None,
                    help="search_sessions answers: written to this file by the first run that "
                         "names it, compared with it by later runs (e.g. base vs --code)")
    args = ap.parse_args()
    scale = scale_dataset.QUICK if args.quick else scale_dataset.FULL
    home = (args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-bench-rt-"))).resolve()
    home.chmod(0o755)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"),
                        shared_prefetch=os.environ.get("GLYPHOXA_SHARED_PREFETCH", "0") == "1")
    url = resolve_url(settings)
    try:
        print(f"code measured: {CODE}", flush=True)
        t = time.perf_counter()
        with Database(url, max_size=4) as db:
            ds = scale_dataset.load(db, scale, CAMPAIGN) if args.reuse else None
            if ds is None:
                print(f"building dataset: {scale}", flush=True)
                ds = scale_dataset.build(db, scale, campaign_id=CAMPAIGN)
                print(f"  built in {time.perf_counter() - t:.1f} s", flush=True)
            else:
                print(f"reusing dataset: {scale}", flush=True)
            live, npcs = prepare_live(db, ds)
            # The server's buffers decide how much of a search reads from the OS cache (the
            # embedded server's are sized at its start since the fourth latency pass): a
            # figure says which it was measured with.
            with db.connection() as conn:
                row = conn.execute("SHOW shared_buffers").fetchone()
            buffers = str(row[0]) if row else "unknown"
            print(f"server shared_buffers: {buffers}", flush=True)
        answers: dict[str, list[dict[str, Any]]] | None = {} if args.answers else None
        results = asyncio.run(inprocess_bench(url, settings, ds, live, npcs, args.calls,
                                              only=args.only, stages=not args.no_stages,
                                              answers=answers))
        compared = (compare_answers(args.answers, answers)
                    if args.answers and answers is not None else None)
        http = None
        if not args.no_http:
            http = asyncio.run(http_bench(url, home, live, npcs, args.calls, args.clients,
                                          args.seconds, args.workers))
            results["hot_context_http"] = http["sequential"]
    finally:
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)
    print(f"\nmachine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (other work "
          "on the machine inflates every figure)")
    print(f"{'operation':32} {'p50 ms':>9} {'p95 ms':>9} {'target p95':>11}")
    for name, s in results.items():
        if not s:
            continue
        target = TARGETS_P95_MS.get(name)
        flag = "" if target is None else ("ok" if s["p95_ms"] <= target else "MISSED")
        print(f"{name:32} {s['p50_ms']:9.3f} {s['p95_ms']:9.3f} "
              f"{'' if target is None else target:>11} {flag}")
    if compared:
        print(f"search_sessions answers: {compared}")
    if http:
        ok = "ok" if http["throughput_per_s"] >= TARGET_THROUGHPUT else "MISSED"
        print(f"hot context throughput, {http['clients']} clients, {http['workers']} worker(s): "
              f"{http['throughput_per_s']}/s (target >= {TARGET_THROUGHPUT:.0f}) {ok}; "
              f"errors {http['errors']}")
    summary = {
        "bench": "realtime",
        "scale": scale.__dict__,
        "cpus": os.cpu_count(),
        "shared_buffers": buffers,
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        **{k: v for k, v in results.items() if v},
        "search_sessions_answers": compared,
        "throughput_per_s": http["throughput_per_s"] if http else None,
        "throughput_clients": args.clients,
        "http_workers": args.workers,
        "targets_p95_ms": TARGETS_P95_MS,
        "targets_met": {
            k: results[k]["p95_ms"] <= v for k, v in TARGETS_P95_MS.items() if k in results
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
