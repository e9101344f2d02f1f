"""Real-play retrieval check: Critical Role's wiki summary sentences as questions over its
first eight episodes (CRD3, C1E001-C1E008) held as one campaign.

    python bench/crd3_play.py                            # ../shared/data/crd3
    python bench/crd3_play.py --episodes 2 --fit-episodes 1 --per-episode 20  # a quick look
    python bench/crd3_play.py --dump-candidates F.pkl    # for bench/replay_turns.py --split 4

A summary sentence ("Scanlan sings a song of rest, and they find Foreman Herris") is what a
player or an NPC's LLM asks about in a campaign: an event, told in other words, somewhere in
hours of table talk. The gold is the scene it summarizes, found automatically (`align`): in
the sentence's own episode, the run of `GOLD_TURNS` consecutive turns holding most of the
sentence's rare words (idf over that episode's turns). That is the same idea as CRD3's own
alignment (ROUGE between a summary chunk and turn spans) and as noisy; because it is lexical
it favours BM25, so the tool's margin over BM25 here is, if anything, understated. Sentences
whose best run shares fewer than `MIN_SHARED` distinct rare words with it are left out (no
scene to find), and so are the "Previously on" recaps and the out-of-game headings
(announcements, breaks), whose events are not in that episode's play.

Measured, side by side in one run and one 1,500-token budget (the tool's packing costs): the
tool, BM25 over single turns (`turn_baselines.py`) and dense top-k turns; evidence recall of
the gold scene's turns, and how often the first result comes from the right episode; per half:
episodes 1-4 (fit) and 5-8 (held out). Skips cleanly when the data is absent. Last line: one
JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import pickle
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from turn_baselines import tokens  # noqa: E402

DEFAULT_DATA = Path(os.environ.get("GLYPHOXA_SHARED_DATA", ROOT.parent / "shared" / "data"))
BUDGET_TOKENS = 1500
GOLD_TURNS = 12  # a scene's worth of short table-talk turns
MIN_SHARED = 3  # distinct rare words a sentence must share with its scene
RARE_IDF = 2.0  # a word in fewer than ~1 in 7 of the episode's turns
FIT_EPISODES = 4  # episodes 1-4 are the fit half; the rest are held out
SKIP_HEADINGS = re.compile(r"pre-show|announcement|break|post-show|previously|recap", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'\[])")


def turn_line(turn: dict[str, Any]) -> tuple[str, str]:
    """(speaker, text) of a CRD3 turn: names joined, utterances joined."""
    return " & ".join(turn["NAMES"]).title(), " ".join(turn["UTTERANCES"]).strip() or "(no text)"


def summary_sentences(metadata: dict[str, Any]) -> list[str]:
    """The synopsis's in-game sentences, in order (recaps and out-of-game headings left out)."""
    out: list[str] = []
    for part in metadata.get("Synopsis", []):
        if SKIP_HEADINGS.search(part.get("heading", "")):
            continue
        for sub in part.get("content", []):
            text = sub.get("content", "") if isinstance(sub, dict) else str(sub)
            for line in text.split("\n"):
                out.extend(s.strip() for s in _SENTENCE.split(line) if s.strip())
    return out


def align(sentence: str, turn_texts: Sequence[str], width: int = GOLD_TURNS
          ) -> tuple[int, int] | None:
    """The start and shared-word count of the `width` consecutive turns whose rare words
    (idf >= RARE_IDF over `turn_texts`) cover most of the sentence's, by idf mass; None when
    the best run shares fewer than MIN_SHARED distinct rare words."""
    docs = [set(tokens(t)) for t in turn_texts]
    n = len(docs)
    if n == 0:
        return None
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d)
    idf = {t: math.log(n / c) for t, c in df.items()}
    wanted = {t for t in set(tokens(sentence)) if idf.get(t, 0.0) >= RARE_IDF}
    if len(wanted) < MIN_SHARED:
        return None
    hits = [d & wanted for d in docs]
    best: tuple[float, int, int] | None = None
    for start in range(max(1, n - width + 1)):
        seen = set().union(*hits[start:start + width])
        # fsum: exactly rounded, so the set's hash-seeded order cannot break a near tie
        # between two runs differently from one process to the next (the gold moved).
        mass = math.fsum(idf[t] for t in seen)
        if best is None or mass > best[0]:
            best = (mass, start, len(seen))
    if best is None or best[2] < MIN_SHARED:
        return None
    return best[1], best[2]


def load_episodes(folder: Path, count: int) -> list[dict[str, Any]]:
    files = sorted(folder.glob("C1E0*.json"))[:count]
    return [json.loads(f.read_text()) | {"name": f.stem} for f in files]


async def ingest(svc: Any, pipeline: Any, episodes: list[dict[str, Any]], cid: str
                 ) -> dict[str, dict[int, int]]:
    """One campaign, a session per episode (a week apart), turns through the live path, then
    the pipeline's chunking and embedding. Returns, per session, turn number -> entry id."""
    from glyphoxa_pipelines.memory import Campaign
    from glyphoxa_pipelines.pipeline.session_steps import chunk_embeddings, transcript_chunks
    from realtime.schemas import EntryIn

    await svc.upsert_campaign(Campaign(cid, "Critical Role, campaign 1"))
    first = datetime(2015, 3, 12, 19, 0, tzinfo=UTC)
    sids = []
    for n, ep in enumerate(episodes):
        sid = f"{cid}-e{n + 1:02d}"
        when = first + timedelta(days=7 * n)
        await svc.start_session(cid, sid, title=ep["name"], started_at=when)
        items = []
        for i, turn in enumerate(ep["TURNS"]):
            speaker, text = turn_line(turn)
            items.append(EntryIn(idempotency_key=f"t{i:05d}", text=text[:4000],
                                 speaker_name=speaker, speaker_id=speaker.lower(),
                                 role="dm" if speaker == "Matt" else "player",
                                 spoken_at=when + timedelta(seconds=5 * i), duration_s=4.0))
        for k in range(0, len(items), 1000):
            await svc.write_entries(sid, items[k:k + 1000])
        await svc.end_session(sid)
        sids.append(sid)
    for sid in sids:
        await asyncio.to_thread(transcript_chunks, pipeline, sid)
        await asyncio.to_thread(chunk_embeddings, pipeline, sid)
    rows = await svc.run(_entries_op(cid))
    out: dict[str, dict[int, int]] = {sid: {} for sid in sids}
    for r in rows:
        out[r["session_id"]][int(r["idempotency_key"][1:])] = r["id"]
    return out


def _entries_op(cid: str) -> Any:
    from glyphoxa_pipelines.db.operations import fetch_all

    rows = yield fetch_all("SELECT id, session_id, idempotency_key FROM session_entries "
                           "WHERE campaign_id = %s", (cid,))
    return rows


def _half(episode: int, fit_episodes: int) -> str:
    return "fit" if episode < fit_episodes else "held_out"


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per half and overall: each method's mean recall and first-result-episode rate, and the
    tool's ratio to each baseline (halves: `--fit-episodes`)."""
    out: dict[str, Any] = {}
    for half in ("all", "fit", "held_out"):
        part = [r for r in rows if half == "all" or r["half"] == half]
        if not part:
            continue
        block: dict[str, Any] = {"questions": len(part)}
        for m in ("tool", "bm25_turns", "dense_turns"):
            block[m] = {"recall": round(statistics.mean(r[m] for r in part), 4),
                        "first_episode": round(statistics.mean(r[m + "_first"] for r in part),
                                               4)}
        for m in ("bm25_turns", "dense_turns"):
            if block[m]["recall"]:
                block[f"tool_over_{m}"] = round(block["tool"]["recall"] / block[m]["recall"], 3)
        out[half] = block
    return out


async def evaluate(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from locomo import load_baselines
    from turn_baselines import dense_scores, pack, ranked

    from glyphoxa_pipelines.config import DEFAULT_EMBEDDING_MODEL, Settings
    from glyphoxa_pipelines.db import Database, embedded, resolve_url
    from glyphoxa_pipelines.pipeline import PipelineServices
    from glyphoxa_pipelines.providers.embeddings import get_embedder
    from realtime import session_search as ss
    from realtime import tools as tl
    from realtime.service import MemoryService
    from realtime.session_search import RECIPES
    from realtime.tools import ToolScope
    from realtime.tools.results import CHARS_PER_TOKEN, reader_chars

    episodes = load_episodes(folder, args.episodes)
    home = (args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-crd3-"))).resolve()
    home.chmod(0o755)
    # GLYPHOXA_EMBEDDING_MODEL picks the document model; unset, production's default
    # (bench/locomo.py too)
    settings = Settings(home=home, database_url=os.environ.get("GLYPHOXA_DATABASE_URL"),
                        embedding_model=os.environ.get("GLYPHOXA_EMBEDDING_MODEL",
                                                       DEFAULT_EMBEDDING_MODEL))
    url = resolve_url(settings)
    embedder = get_embedder("local", model=settings.embedding_model)
    db = Database(url, max_size=4).open()
    pipeline = PipelineServices(db=db, settings=settings, embedder_factory=lambda: embedder)
    svc = MemoryService(url, settings=settings, embedder=embedder, spool_dir=home / "spool",
                        prefetch_wait_ms=2000, search=RECIPES[args.recipe], db_timeout_s=60.0)
    await svc.open(warm_embedder=False)
    cid = "crd3-c1"
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    sent: list[int] = []  # each answer's characters as sent
    candidates: list[dict[str, Any]] = []
    try:
        entries = await svc.run(_count_op(cid))
        if entries:
            ids = await svc.run(_reuse_op(cid))
        else:
            ids = await ingest(svc, pipeline, episodes, cid)
        print(f"{sum(len(v) for v in ids.values())} turns in {len(ids)} sessions "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        turns, bm25, vectors = await load_baselines(svc, cid)
        scope = ToolScope(cid, None, None)
        sids = sorted(ids)
        for n, ep in enumerate(episodes):
            texts = [turn_line(t)[1] for t in ep["TURNS"]]
            sentences = summary_sentences(ep["METADATA"])
            picked = 0
            for sentence in sentences:
                where = align(sentence, texts)
                if where is None:
                    continue
                if args.per_episode and picked >= args.per_episode:
                    break
                picked += 1
                start, _shared = where
                gold = [ids[sids[n]][i] for i in range(start, start + GOLD_TURNS)
                        if i in ids[sids[n]]]
                out = await svc.call_tool("memory.search_sessions", {
                    "query": sentence, "top_k": args.top_k, "max_tokens": BUDGET_TOKENS}, scope)
                if out["status"] != "ok":
                    raise RuntimeError(f"the tool answered {out['status']}: {out.get('error')}")
                # The whole answer as the model reads it, envelope included (the tool's budget)
                sent.append(len(json.dumps(out, ensure_ascii=False, default=str)))
                got: set[int] = set()
                used = 0
                for res in out["results"]:  # re-checked here: the budget is the tool's promise
                    used += reader_chars(res)
                    if used > BUDGET_TOKENS * CHARS_PER_TOKEN:
                        break
                    got |= set(res["source"].get("entry_ids", []))
                first = out["results"][0]["source"]["session_id"] if out["results"] else None
                row: dict[str, Any] = {
                    "episode": n, "half": _half(n, args.fit_episodes), "question": sentence,
                    "tool": sum(g in got for g in gold) / len(gold),
                    "tool_first": float(first == sids[n])}
                qvec = np.asarray(await svc.embedder.embed(sentence))
                for name, scores in (("bm25_turns", bm25.scores(sentence)),
                                     ("dense_turns", dense_scores(qvec, vectors))):
                    chosen = pack(ranked(scores, turns), BUDGET_TOKENS)
                    ids_chosen = {t.id for t in chosen}
                    row[name] = sum(g in ids_chosen for g in gold) / len(gold)
                    row[name + "_first"] = float(bool(chosen) and chosen[0].session_id
                                                 == sids[n])
                rows.append(row)
                if args.dump_candidates:
                    targs = tl.SearchSessionsArgs(query=sentence, top_k=args.top_k,
                                                  max_tokens=BUDGET_TOKENS)
                    found = await ss.fetch_candidates(svc, targs, cid, svc.tools.search)
                    candidates.append({"conversation": n, "category": 0, "question": sentence,
                                       "hits": found.hits, "turns": found.turns,
                                       "top_k": args.top_k, "gold": gold})
            print(f"episode {n + 1}: {picked} of {len(sentences)} sentences aligned", flush=True)
        if args.dump_candidates:
            args.dump_candidates.write_bytes(pickle.dumps(candidates))
    finally:
        await svc.close()
        db.close()
        if args.home is None and not settings.database_url:
            embedded.stop(settings.pgdata)
    return {"bench": "crd3_play", "episodes": len(episodes), "questions": len(rows),
            "gold_turns": GOLD_TURNS, "budget_tokens": BUDGET_TOKENS, "top_k": args.top_k,
            "recipe": args.recipe,
            "answer_chars_mean": round(statistics.mean(sent), 1) if sent else None,
            "answers_over_budget": sum(c > BUDGET_TOKENS * CHARS_PER_TOKEN for c in sent),
            "side_by_side": summarize(rows), "seconds": round(time.perf_counter() - t0, 1)}


def _count_op(cid: str) -> Any:
    from glyphoxa_pipelines.db.operations import fetch_all

    rows = yield fetch_all("SELECT count(*) AS n FROM session_entries WHERE campaign_id = %s",
                           (cid,))
    return int(rows[0]["n"])


def _reuse_op(cid: str) -> Any:
    """A campaign a previous run with the same --home ingested: its ids, as `ingest` gives."""
    rows = yield from _entries_op(cid)
    out: dict[str, dict[int, int]] = {}
    for r in rows:
        out.setdefault(r["session_id"], {})[int(r["idempotency_key"][1:])] = r["id"]
    return out


def main() -> None:
    from realtime.session_search.config import RECIPES

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    ap.add_argument("--episodes", type=int, default=8, help="the first N episodes")
    ap.add_argument("--fit-episodes", type=int, default=FIT_EPISODES,
                    help="the first N episodes are the fit half, the rest held out")
    ap.add_argument("--per-episode", type=int, default=0,
                    help="at most N aligned sentences per episode (0: all)")
    ap.add_argument("--top-k", type=int, default=30, help="results asked of the tool")
    ap.add_argument("--home", type=Path, default=None,
                    help="GLYPHOXA_HOME (default: temporary); a second run reuses its campaign")
    ap.add_argument("--dump-candidates", type=Path, default=None,
                    help="write each question's candidate windows, turns and gold (.pkl)")
    ap.add_argument("--recipe", default="session_search",
                    choices=sorted(RECIPES),
                    help="session search recipe the tool runs (realtime/session_search/config.py)")
    args = ap.parse_args()
    folder = args.data / "crd3" / "cleaned"
    if not folder.is_dir():
        print(f"CRD3 data not found at {folder}: skipped")
        print(json.dumps({"bench": "crd3_play", "skipped": True, "reason": f"{folder} missing"}))
        return
    summary = asyncio.run(evaluate(args, folder))
    for half, block in summary["side_by_side"].items():
        print(f"{half:14} {block['questions']:4} questions  " + "  ".join(
            f"{m} {block[m]['recall']} (first episode {block[m]['first_episode']})"
            for m in ("tool", "bm25_turns", "dense_turns")))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
