"""Retrieval quality of `memory.search_sessions` on LoCoMo (Maharana et al., ACL 2024).

    python bench/locomo.py                       # ../shared/data/locomo/locomo10.json
    python bench/locomo.py --data DIR --limit 2  # first two conversations only
    python bench/locomo.py --skip 5              # conversations 5-9 (held out from tuning)
    python bench/locomo.py --dump-features F.npz # also the turn model's training data
    python bench/locomo.py --dump-candidates F.pkl  # each question's candidate windows and
                                                 # turns, for offline replays of the packing
                                                 # (and F.side.json: each question's recall
                                                 # by the tool and the baselines)
                                                 # (then: python bench/fit_turn_model.py F.npz)

Each conversation is a campaign, each session a session with its date. Turns go in through the
realtime ingestion path (`MemoryService.write_entries`: inline correction, L1), then the
pipeline's own steps chunk and embed them (`transcript_chunks`, `chunk_embeddings`). For every
question of categories 1-4 the tool is called as the LLM would call it, and we measure:

- evidence recall within 1,500 tokens: the share of gold evidence turns contained in the
  results, the result list cut where the answer as the LLM reads it (each result's JSON, keys
  and citation included, ~4 chars per token) passes 1,500 tokens;
- recall@5 / recall@10 results; latency p50 / p95 of the tool call (query embedding included);
- pre-fetch hit rate: questions whose evidence the speculative pre-fetch alone (run on the
  question as a partial transcript) already brought into the hot context;
- side by side, in the same run and budget, what a user would pick instead
  (`bench/turn_baselines.py`): BM25 over single turns, and dense top-k turns (the same MiniLM
  turn vectors, cosine to the same query vector), and the tool's recall as ratios of theirs;
  overall, per category, and per half: conversations 0-4 (the turn model was fitted on them)
  and 5-9 (held out).

Skips cleanly (exit 0, a JSON line saying so) when the data is absent. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_DATA = Path(os.environ.get("GLYPHOXA_SHARED_DATA", ROOT.parent / "shared" / "data"))
BUDGET_TOKENS = 1500
TARGET_RECALL = 0.90
TARGET_HELD_OUT = 0.88
# LoCoMo's question categories (5, adversarial, has no evidence to recall and is left out).
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
FIT_HALF = range(0, 5)  # the conversations the turn model was fitted on
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}


def parse_date(text: str) -> datetime | None:
    """"1:56 pm on 8 May, 2023" -> 2023-05-08 13:56 UTC."""
    m = _DATE.search(text or "")
    if not m:
        return None
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    mon = _MONTHS.get(month.lower())
    if mon is None:
        return None
    return datetime(int(year), mon, int(day), h, int(minute), tzinfo=UTC)


def turn_text(turn: dict[str, Any]) -> str:
    text = turn.get("text", "").strip()
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text or "(no text)"


def sessions_of(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    out = []
    keys = [k for k in conv if re.fullmatch(r"session_\d+", k)]
    for k in sorted(keys, key=lambda k: int(k.split("_")[1])):
        n = int(k.split("_")[1])
        turns = conv[k]
        if not turns:
            continue
        when = parse_date(conv.get(f"{k}_date_time", "")) or (
            datetime(2023, 1, 1, tzinfo=UTC) + timedelta(days=n)
        )
        out.append((n, when, turns))
    return out


def gold_ids(evidence: list[str], known: set[str]) -> list[str]:
    ids: list[str] = []
    for ev in evidence:
        for part in re.split(r"[;\s,]+", ev or ""):
            if part in known and part not in ids:
                ids.append(part)
    return ids


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3) if values else 0.0


async def ingest(svc: Any, pipeline: Any, sample: dict[str, Any], cid: str) -> dict[str, Any]:
    """One conversation: campaign, sessions, turns via the live path, then pipeline chunking
    and embedding. Returns entry id -> dia_id and the session ids."""
    from glyphoxa_pipelines.memory import Campaign
    from glyphoxa_pipelines.pipeline.session_steps import chunk_embeddings, transcript_chunks
    from realtime.schemas import EntryIn

    await svc.upsert_campaign(Campaign(cid, f"LoCoMo {sample['sample_id']}"))
    conv = sample["conversation"]
    session_ids = []
    for n, when, turns in sessions_of(conv):
        sid = f"{cid}-s{n:02d}"
        await svc.start_session(cid, sid, title=f"session {n}", started_at=when)
        items = [
            EntryIn(idempotency_key=t["dia_id"], text=turn_text(t), speaker_name=t["speaker"],
                    speaker_id=t["speaker"].lower(), role="player",
                    spoken_at=when + timedelta(seconds=30 * i), duration_s=20.0)
            for i, t in enumerate(turns)
        ]
        await svc.write_entries(sid, items)
        await svc.end_session(sid)
        session_ids.append(sid)
    for sid in session_ids:  # the pipeline's own steps (sync, thread: keep the loop free)
        await asyncio.to_thread(transcript_chunks, pipeline, sid)
        await asyncio.to_thread(chunk_embeddings, pipeline, sid)
    rows = await svc.run(_entry_ids_op(cid))
    return {"entry_dia": {r["id"]: r["idempotency_key"] for r in rows},
            "sessions": session_ids, "order": _order(rows)}


def _entry_ids_op(cid: str) -> Any:
    from glyphoxa_pipelines.db.operations import fetch_all

    rows = yield fetch_all(
        "SELECT id, session_id, idempotency_key FROM session_entries WHERE campaign_id = %s "
        "ORDER BY session_id, spoken_at, id",
        (cid,),
    )
    return rows


def _turns_op(cid: str, model: str) -> Any:
    """Every turn of the campaign with its stored vector, in spoken order (the baselines')."""
    from glyphoxa_pipelines.db.operations import fetch_all

    rows = yield fetch_all(
        "SELECT e.id, e.session_id, e.speaker_name, e.text, x.embedding::real[] AS v "
        "FROM session_entries e JOIN entry_embeddings x ON x.entry_id = e.id AND x.model = %s "
        "WHERE e.campaign_id = %s ORDER BY e.session_id, e.spoken_at, e.id",
        (model, cid),
    )
    return rows


async def load_baselines(svc: Any, cid: str) -> tuple[list[Any], Any, np.ndarray]:
    """The campaign's turns, BM25 over them, and their unit vectors."""
    from turn_baselines import BM25, Turn

    rows = await svc.run(_turns_op(cid, svc.embedder.model_id))
    turns = [Turn(r["id"], r["session_id"], f"{r['speaker_name']}: {r['text']}") for r in rows]
    vectors = np.array([r["v"] for r in rows], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return turns, BM25([t.line for t in turns]), vectors


def baseline_recalls(question: str, qvec: np.ndarray, base: tuple[list[Any], Any, np.ndarray],
                     gold: list[str], entry_dia: dict[int, str]) -> dict[str, float]:
    """Evidence recall of BM25 and dense top-k turns, packed into the tool's budget."""
    from turn_baselines import dense_scores, pack, ranked

    turns, bm25, vectors = base
    out = {}
    for name, scores in (("bm25_turns", bm25.scores(question)),
                         ("dense_turns", dense_scores(qvec, vectors))):
        chosen = pack(ranked(scores, turns), BUDGET_TOKENS)
        got = {entry_dia.get(t.id) for t in chosen}
        out[name] = sum(g in got for g in gold) / len(gold)
    return out


def _mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 4) if values else None


def side_by_side(rows: list[tuple[int, int, str, float]]) -> dict[str, Any]:
    """(conversation, category, method, recall) rows -> each method's recall overall, per
    category and per half, and the tool's ratio to each baseline."""
    methods = list(dict.fromkeys(m for _, _, m, _ in rows))
    halves = {"all": lambda c: True, "fit_0_4": lambda c: c in FIT_HALF,
              "held_out_5_9": lambda c: c not in FIT_HALF}
    out: dict[str, Any] = {}
    for half, keep in halves.items():
        part = [r for r in rows if keep(r[0])]
        if not part:
            continue
        block: dict[str, Any] = {}
        for m in methods:
            vals = [r[3] for r in part if r[2] == m]
            cats = sorted({r[1] for r in part})
            block[m] = {"recall": _mean(vals), "by_category": {
                CATEGORIES.get(c, str(c)): _mean([r[3] for r in part if r[2] == m and r[1] == c])
                for c in cats}}
        tool = block.get("tool", {}).get("recall")
        for m in methods:
            base = block[m]["recall"]
            if m != "tool" and tool is not None and base:
                block[f"tool_over_{m}"] = round(tool / base, 3)
        out[half] = block
    return out


def _order(rows: list[dict[str, Any]]) -> dict[int, tuple[str, int]]:
    """entry id -> (session, position): a chunk covers its first..last entry positions."""
    pos: dict[int, tuple[str, int]] = {}
    counters: dict[str, int] = {}
    for r in rows:
        k = counters.get(r["session_id"], 0)
        pos[r["id"]] = (r["session_id"], k)
        counters[r["session_id"]] = k + 1
    return pos


def covered(result: dict[str, Any], info: dict[str, Any], by_pos: dict[tuple[str, int], str]
            ) -> set[str]:
    src = result["source"]
    if "entry_ids" in src:  # a passage cites its own turns
        return {info["entry_dia"][i] for i in src["entry_ids"] if i in info["entry_dia"]}
    first, last = src.get("first_entry_id"), src.get("last_entry_id")
    if first is None or last is None:
        return set()
    s1, p1 = info["order"][first]
    _, p2 = info["order"][last]
    return {by_pos[(s1, p)] for p in range(p1, p2 + 1) if (s1, p) in by_pos}


def result_chars(result: dict[str, Any]) -> int:
    """What a result costs the model that reads it: its JSON as the tool sends it, keys and
    citation included (`realtime/tools/results.py`)."""
    from realtime.tools.results import reader_chars

    return reader_chars(result)


def _feature_names() -> list[str]:
    from realtime.turn_ranking import TURN_WEIGHTS

    return list(TURN_WEIGHTS)


async def dump_features(svc: Any, scope: Any, question: str, top_k: int, gold: set[str],
                        info: dict[str, Any], dump: dict[str, list[Any]], conversation: int
                        ) -> None:
    """The candidate turns the tool ranked for `question`, as the turn model's features,
    each labelled with whether it is gold evidence (`bench/fit_turn_model.py` fits on them)."""
    from realtime import session_search as ss
    from realtime import tools as tl
    from realtime.turn_ranking import turn_features

    args = tl.SearchSessionsArgs(query=question, top_k=top_k, max_tokens=BUDGET_TOKENS)
    found = await ss.fetch_candidates(svc, args, scope.campaign_id, svc.tools.search)
    rows, origin, links, _whole = ss.candidate_turns(found.hits, found.turns)
    feats = turn_features(rows, origin, links, question)
    names = _feature_names()
    ids = list(feats)
    q = len(dump["question"])
    dump["X"].append(np.array([[feats[i][n] for n in names] for i in ids], dtype=np.float64)
                     .reshape(len(ids), len(names)))
    dump["y"].append(np.array([info["entry_dia"].get(i) in gold for i in ids], dtype=np.int8))
    dump["question"].append(np.full(len(ids), q, dtype=np.int32))
    dump["conversation"].append(np.full(len(ids), conversation, dtype=np.int16))


async def evaluate(args: argparse.Namespace, data_file: Path) -> dict[str, Any]:
    from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL, Settings
    from glyphoxa_pipelines.db import Database, embedded, resolve_url
    from glyphoxa_pipelines.pipeline import PipelineServices
    from glyphoxa_pipelines.providers.embeddings import get_embedder
    from realtime import session_search as ss
    from realtime import tools as tl
    from realtime.service import MemoryService
    from realtime.session_search import RECIPES
    from realtime.tools import ToolScope

    samples = json.loads(data_file.read_text())[args.skip:]
    samples = samples[: args.limit or None]
    home = (args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-locomo-"))).resolve()
    home.chmod(0o755)
    # GLYPHOXA_EMBEDDING_MODEL picks the document model; unset, production's default
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"),
                        embedding_model=os.environ.get("GLYPHOXA_EMBEDDING_MODEL",
                                                       DEFAULT_EMBEDDING_MODEL))
    url = resolve_url(settings)
    embedder = get_embedder("local", model=settings.embedding_model)
    db = Database(url, max_size=4).open()
    pipeline = PipelineServices(db=db, settings=settings, embedder_factory=lambda: embedder)
    recipe = RECIPES[args.recipe]
    # A generous database guard: on a saturated machine a statement can take seconds, and a
    # degraded answer would count as a miss.
    svc = MemoryService(url, settings=settings, embedder=embedder, spool_dir=home / "spool",
                        prefetch_wait_ms=2000, search=recipe, db_timeout_s=60.0)
    await svc.open(warm_embedder=False)
    per_cat: dict[int, list[float]] = {}
    dump: dict[str, list[Any]] = {"X": [], "y": [], "question": [], "conversation": []}
    candidates: list[dict[str, Any]] = []
    budget_recall, r5, r10, latencies, prefetch_hits = [], [], [], [], []
    budget_results, budget_tokens, sent_chars = [], [], []
    side: list[tuple[int, int, str, float]] = []  # (conversation, category, method, recall)
    t0 = time.perf_counter()
    try:
        for k, sample in enumerate(samples):
            cid = "locomo-" + re.sub(r"[^a-z0-9]+", "-", sample["sample_id"].lower()).strip("-")
            t = time.perf_counter()
            info = await ingest(svc, pipeline, sample, cid)
            by_pos = {info["order"][eid]: dia for eid, dia in info["entry_dia"].items()}
            known = set(info["entry_dia"].values())
            print(f"[{k + 1}/{len(samples)}] {cid}: {len(known)} turns, "
                  f"{len(info['sessions'])} sessions ingested in {time.perf_counter() - t:.1f} s",
                  flush=True)
            live = info["sessions"][-1]
            scope = ToolScope(cid, None, None)
            base = await load_baselines(svc, cid)
            conv = k + args.skip
            for qa in sample["qa"]:
                cat = int(qa.get("category", 0))
                if cat not in (1, 2, 3, 4):
                    continue
                gold = gold_ids(qa.get("evidence", []), known)
                if not gold:
                    continue
                svc.embedder._cache.clear()  # every call embeds its query
                start = time.perf_counter()
                out = await svc.call_tool(
                    "memory.search_sessions",
                    {"query": qa["question"], "top_k": args.top_k, "max_tokens": BUDGET_TOKENS},
                    scope,
                )
                latencies.append((time.perf_counter() - start) * 1000)
                if out["status"] != "ok":
                    raise RuntimeError(f"the tool answered {out['status']}: {out.get('error')}")
                results = out["results"]
                # The whole answer as the model reads it, envelope included (the tool's budget)
                sent_chars.append(len(json.dumps(out, ensure_ascii=False, default=str)))
                if args.dump_candidates:
                    targs = tl.SearchSessionsArgs(query=qa["question"], top_k=args.top_k,
                                                  max_tokens=BUDGET_TOKENS)
                    found = await ss.fetch_candidates(svc, targs, cid, svc.tools.search)
                    dia_entry = {d: e for e, d in info["entry_dia"].items()}
                    candidates.append({
                        "conversation": conv, "category": cat, "question": qa["question"],
                        "hits": found.hits, "turns": found.turns, "top_k": args.top_k,
                        "gold": [dia_entry[g] for g in gold]})
                if args.dump_features:
                    await dump_features(svc, scope, qa["question"], args.top_k, set(gold),
                                        info, dump, k + args.skip)
                got: set[str] = set()
                used = 0
                n_in_budget = 0
                for res in results:  # re-checked here: the budget is the tool's promise
                    cost = result_chars(res)
                    if used + cost > BUDGET_TOKENS * 4:
                        break
                    used += cost
                    n_in_budget += 1
                    got |= covered(res, info, by_pos)
                rec = sum(g in got for g in gold) / len(gold)
                side.append((conv, cat, "tool", rec))
                qvec = await svc.embedder.embed(qa["question"])
                for name, value in baseline_recalls(qa["question"], np.asarray(qvec), base, gold,
                                                    info["entry_dia"]).items():
                    side.append((conv, cat, name, value))
                budget_recall.append(rec)
                budget_results.append(n_in_budget)
                budget_tokens.append(-(-used // 4))
                per_cat.setdefault(cat, []).append(rec)
                for cut, sink in ((5, r5), (10, r10)):
                    ids: set[str] = set()
                    for res in results[:cut]:
                        ids |= covered(res, info, by_pos)
                    sink.append(sum(g in ids for g in gold) / len(gold))
                if args.no_prefetch:
                    continue
                # pre-fetch alone: the question as a partial, then what the context received
                svc.prefetch.clear(live)
                await svc.partial(live, qa["question"])
                await svc.wait_prefetch(live, 5.0)
                pre: set[str] = set()
                for item in svc.prefetch.get(live, ""):
                    for mem in item.memories:
                        src = mem.source
                        pre |= covered({"source": src}, info, by_pos)
                prefetch_hits.append(float(all(g in pre for g in gold)))
            if args.dump_candidates:  # after each conversation: a long run is usable early
                with open(args.dump_candidates, "wb") as f:
                    pickle.dump(candidates, f)
                args.dump_candidates.with_suffix(".side.json").write_text(json.dumps(side))
    finally:
        await svc.close()
        db.close()
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)
    n = len(budget_recall)
    if args.dump_features and dump["X"]:
        np.savez_compressed(args.dump_features, X=np.vstack(dump["X"]),
                            y=np.concatenate(dump["y"]), question=np.concatenate(dump["question"]),
                            conversation=np.concatenate(dump["conversation"]),
                            features=np.array(_feature_names()))
        print(f"turn features written to {args.dump_features}", flush=True)
    return {
        "bench": "locomo",
        "conversations": len(samples),
        "skipped_conversations": args.skip,
        "questions": n,
        "evidence_recall_at_1500_tokens": round(statistics.mean(budget_recall), 4) if n else None,
        "target": TARGET_RECALL,
        "target_held_out": TARGET_HELD_OUT,
        "side_by_side": side_by_side(side),
        "recall_at_5": round(statistics.mean(r5), 4) if n else None,
        "recall_at_10": round(statistics.mean(r10), 4) if n else None,
        "recall_by_category": {CATEGORIES.get(c, str(c)): round(statistics.mean(v), 4)
                               for c, v in sorted(per_cat.items())},
        "results_within_budget_mean": round(statistics.mean(budget_results), 2) if n else None,
        "tokens_used_mean": round(statistics.mean(budget_tokens), 1) if n else None,
        "answer_chars_mean": round(statistics.mean(sent_chars), 1) if n else None,
        "answers_over_budget": sum(c > BUDGET_TOKENS * 4 for c in sent_chars),
        "latency_p50_ms": pct(latencies, 50),
        "latency_p95_ms": pct(latencies, 95),
        "prefetch_hit_rate": round(statistics.mean(prefetch_hits), 4) if prefetch_hits else None,
        "top_k": args.top_k,
        "recipe": args.recipe,
        "fusion_weights": list(recipe.fusion_weights),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    from realtime.session_search.config import RECIPES

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    ap.add_argument("--limit", "--conversations", dest="limit", type=int, default=0,
                    help="only the first N conversations")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N conversations (held-out checks: --skip 5)")
    ap.add_argument("--top-k", type=int, default=30, help="results asked of the tool")
    ap.add_argument("--home", type=Path, default=None, help="GLYPHOXA_HOME (default: temporary)")
    ap.add_argument("--dump-candidates", type=Path, default=None,
                    help="write each question's candidate windows, turns and gold (.pkl)")
    ap.add_argument("--dump-features", type=Path, default=None,
                    help="write the candidate turns' features and gold labels (.npz)")
    ap.add_argument("--no-prefetch", action="store_true",
                    help="skip the pre-fetch hit rate (the slowest part of a run)")
    ap.add_argument("--recipe", default="session_search",
                    choices=sorted(RECIPES),
                    help="session search recipe the tool runs (realtime/session_search/config.py)")
    args = ap.parse_args()
    data_file = args.data / "locomo" / "locomo10.json"
    if not data_file.exists():
        print(f"LoCoMo data not found at {data_file}: skipped")
        print(json.dumps({"bench": "locomo", "skipped": True, "reason": f"{data_file} missing"}))
        return
    summary = asyncio.run(evaluate(args, data_file))
    print(f"\nquestions (categories 1-4): {summary['questions']}")
    print(f"evidence recall within {BUDGET_TOKENS} tokens: "
          f"{summary['evidence_recall_at_1500_tokens']} (target >= {TARGET_RECALL}; "
          f"{summary['results_within_budget_mean']} results, "
          f"{summary['tokens_used_mean']} tokens on average)")
    print(f"whole answer as sent: {summary['answer_chars_mean']} characters on average, "
          f"{summary['answers_over_budget']} over {BUDGET_TOKENS * 4}")
    print(f"recall@5 results: {summary['recall_at_5']}   recall@10: {summary['recall_at_10']}")
    print(f"by category: {summary['recall_by_category']}")
    print(f"search_sessions latency p50 {summary['latency_p50_ms']} ms, "
          f"p95 {summary['latency_p95_ms']} ms")
    print(f"pre-fetch hit rate: {summary['prefetch_hit_rate']}")
    print("side by side, evidence recall within the same budget:")
    for half, block in summary["side_by_side"].items():
        for m in ("tool", "bm25_turns", "dense_turns"):
            if m in block:
                print(f"  {half:13} {m:12} {block[m]['recall']}  by category "
                      f"{block[m]['by_category']}")
        print(f"  {half:13} tool / bm25 {block.get('tool_over_bm25_turns')}, "
              f"tool / dense {block.get('tool_over_dense_turns')}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
