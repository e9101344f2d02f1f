"""Pipeline benchmark: real CRD3 episodes through the whole session chain, offline providers.

Part 1: one episode (C1E001, ~2,100 turns, ~31k words, ~3.5 h of play): wall time and rows per
asset. Part 2: all eight episodes as one campaign, then campaign consolidation. Targets on the
2-core reference machine: one episode <= 60 s (issue 17: <= 20 s, and the embedding step
>= 200 texts/s, chunks and turns together), eight <= 6 min (process start-up, database start
and model loading excluded; they are reported separately; the first run on a machine also
exports the encoder to ONNX, in model_load_s).

Quality: ROUGE-1 / ROUGE-L recall of the human wiki synopsis by our summary (computed here:
lower-cased word tokens, clipped unigram overlap, longest common subsequence), and how many of
the synopsis' capitalized names appear among the extracted entities.

Data from ../shared/data (or --data DIR); without it the bench says so and exits 0. Runs on a
throwaway embedded PostgreSQL in a temporary GLYPHOXA_HOME unless --home is given. The last line
is one JSON object: {"bench": "pipeline", ...}.

    .venv/bin/python bench/pipeline.py [--data DIR] [--episodes 8] [--one-only]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
EPISODES = [f"C1E00{n}" for n in range(1, 9)]
ONE_EPISODE_TARGET_S = 60.0
EIGHT_EPISODES_TARGET_S = 360.0
EMBEDDING_TARGET_TEXTS_PER_S = 200.0  # issue 17: chunks and turns of C1E001, 2 cores
ONE_EPISODE_CHAIN_TARGET_S = 20.0  # issue 17 (extraction's share is wt-facts' to cut)
OUT_OF_STORY_HEADINGS = {"pre-show", "announcements", "break", "featured song"}
COMMON_ZIPF = 3.5  # wordfreq: at or above this a word is ordinary English
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CAP_NAME = re.compile(r"\b[A-Z][a-z]+(?:['’][A-Za-z]+)?(?:[ -][A-Z][a-z]+(?:['’][A-Za-z]+)?)*")
NOT_NAMES = set(
    """The A An He She They It His Her Their Its We You I In On At As After Before When While
    Then Once Upon With Without Meanwhile However Although Though Later Soon Eventually Also
    But And Or So If This That These Those There Here One Two Three Some Many All Each Both
    Matt Matthew Mercer Travis Willingham Laura Bailey Liam Brien Marisha Ray Sam Riegel Taliesin
    Jaffe Orion Acaba Ashley Johnson Critical Role Geek Sundry Dungeons Dragons Dungeon Master
    Pathfinder Edition Pre-Show Announcements Break Part Episode Session Twitch Thursday""".split()
)


# ----------------------------------------------------------------------------- quality


def words(text: str) -> list[str]:
    """Lower-cased word tokens, possessive 's dropped ("Vex's" -> "vex")."""
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower().replace("’", "'"))]


def rouge_recall(reference: str, candidate: str) -> dict[str, float]:
    """ROUGE-1 and ROUGE-L recall of `reference` by `candidate` (no stemming, no stopwords)."""
    ref, cand = words(reference), words(candidate)
    if not ref:
        return {"rouge1_recall": 0.0, "rougeL_recall": 0.0}
    cand_counts = Counter(cand)
    overlap = sum(min(n, cand_counts[w]) for w, n in Counter(ref).items())
    # LCS, O(len(ref) * len(cand)) with one row of memory
    index: dict[str, list[int]] = defaultdict(list)
    for j, w in enumerate(cand):
        index[w].append(j)
    prev = [0] * (len(cand) + 1)
    for w in ref:
        cur = prev[:]
        positions = index.get(w)
        if positions:
            for j in positions:
                if prev[j] + 1 > cur[j + 1]:
                    cur[j + 1] = prev[j] + 1
        for j in range(1, len(cand) + 1):  # carry the running maximum forward
            if cur[j - 1] > cur[j]:
                cur[j] = cur[j - 1]
        prev = cur
    return {
        "rouge1_recall": round(overlap / len(ref), 4),
        "rougeL_recall": round(prev[-1] / len(ref), 4),
    }


def synopsis_text(episode: dict[str, Any], *, story_only: bool) -> str:
    parts = []
    for section in episode["METADATA"].get("Synopsis", []):
        if story_only and section.get("heading", "").strip().lower() in OUT_OF_STORY_HEADINGS:
            continue
        for sub in section.get("content", []):
            parts.append(sub.get("content", ""))
    return "\n".join(parts)


def synopsis_names(text: str) -> set[str]:
    """Capitalized names in the synopsis (single words and multi-word spans), minus the cast,
    show vocabulary, and spans made only of ordinary English words ("Because", "Bad News":
    sentence openers and headings, not names)."""
    from wordfreq import zipf_frequency

    names = set()
    for match in _CAP_NAME.finditer(text):
        tokens = [t for t in re.split(r"[ -]", match.group(0)) if t not in NOT_NAMES]
        if not tokens or all(zipf_frequency(t.lower(), "en") >= COMMON_ZIPF for t in tokens):
            continue
        names.add(" ".join(tokens))
    return {n for n in names if len(n) > 2}


def name_coverage(names: set[str], entity_names: list[str]) -> dict[str, Any]:
    known = {w for name in entity_names for w in words(name)}
    found = sorted(n for n in names if all(w in known for w in words(n)))
    missing = sorted(names - set(found))
    return {
        "names": len(names),
        "found": len(found),
        "coverage": round(len(found) / len(names), 3) if names else None,
        "missing_sample": missing[:15],
    }


# ----------------------------------------------------------------------------- run


def _warm_up(services: Any) -> float:
    """Load the embedding model and tokenizer before timing (process start-up, not work)."""
    started = time.perf_counter()
    services.embedder.embed(["warm up"])
    services.embedder.count_tokens("warm up")
    from glyphoxa_pipelines.correction import build_index

    build_index(["Warm Up"])
    return time.perf_counter() - started


def _backend(embedder: Any) -> str:
    """Which path embedded: "onnx" (ONNX Runtime), "torch", or the provider's class."""
    if hasattr(embedder, "onnx_encoder"):
        return "onnx" if embedder.onnx_encoder() is not None else "torch"
    return type(embedder).__name__


def _import(db: Any, campaign_id: str, path: Path, start: datetime) -> str:
    from glyphoxa_pipelines.campaign.session_import import import_session

    return import_session(db, campaign_id, path, start_at=start).session.id


def _row_summary(outcomes: dict[str, Any]) -> dict[str, Any]:
    m = {name: o.metadata for name, o in outcomes.items()}
    return {
        "entries": m["raw_transcript"]["entries"],
        "words": m["raw_transcript"]["words"],
        "corrections": m["corrected_transcript"]["corrections"],
        "chunks": m["transcript_chunks"]["chunks"],
        "embeddings": m["chunk_embeddings"]["embedded"],
        "entities_new": m["extracted_knowledge"]["entities_new"],
        "entities_resolved": m["extracted_knowledge"]["entities_resolved_to_existing"],
        "facts": m["extracted_knowledge"]["facts_inserted"],
        "facts_pending_review": m["extracted_knowledge"]["facts_pending_review"],
        "summary_words": m["session_summary"]["summary_words"],
        "participants_linked": m["session_summary"]["participants_linked"],
        "recap_words": m["session_recap"]["recap_words"],
    }


def _failed_checks(results: dict[str, dict[str, Any]]) -> list[str]:
    return [
        f"{key}:{asset}:{c.name}"
        for key, outcomes in results.items()
        for asset, o in outcomes.items()
        for c in o.failed_checks
    ]


def bench_one(services: Any, data: Path, tag: str) -> dict[str, Any]:
    from glyphoxa_pipelines.memory import Campaign, CampaignStore, KnowledgeGraph, SummaryStore
    from glyphoxa_pipelines.pipeline.runner import run_campaign_chain

    db = services.db
    cid = f"bench-one-{tag}"
    CampaignStore(db).upsert(Campaign(cid, "Critical Role (bench, one episode)"))
    path = data / "crd3" / "cleaned" / "C1E001.json"
    t0 = time.perf_counter()
    sid = _import(db, cid, path, datetime(2015, 3, 12, 19, 0, tzinfo=UTC))
    import_s = time.perf_counter() - t0
    started, cpu = time.perf_counter(), time.process_time()
    results = run_campaign_chain(services, cid, session_ids=[sid])
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    episode = json.loads(path.read_text())
    summary = SummaryStore(db).get(sid)
    entities = KnowledgeGraph(db).find_entities(cid, limit=100_000)
    entity_names = [n for e in entities if e.type != "episode" for n in (e.name, *e.aliases)]
    emb = results[sid]["chunk_embeddings"].metadata
    embed_s = (emb["embed_seconds"] or 0) + (emb["turns_embed_seconds"] or 0)
    embedded = emb["embedded"] + emb["turns_embedded"]
    out = {
        "episode": "C1E001",
        "embedding_backend": _backend(services.embedder),
        "embedding_texts_per_s": round(embedded / embed_s, 1) if embed_s else None,
        "embedding_target_texts_per_s": EMBEDDING_TARGET_TEXTS_PER_S,
        # rows stored vs texts through the model (the step embeds each distinct text once)
        "embedding_rows": embedded,
        "embedding_distinct_texts": emb.get("distinct_texts_embedded"),
        # late-chunking ids: turns whose vector came off their chunk's pass
        "embedding_turns_from_chunks": emb.get("turns_from_chunks", 0),
        "embedding_model": emb.get("model"),
        "import_s": round(import_s, 2),
        "chain_s": round(total, 2),
        "chain_process_cpu_s": round(cpu, 2),
        "per_asset_s": {
            f"{k}:{a}" if k == "campaign" else a: round(o.seconds, 2)
            for k, outcomes in results.items()
            for a, o in outcomes.items()
        },
        "rows": _row_summary(results[sid]),
        "failed_checks": _failed_checks(results),
        "summary_quality": {
            "whole_synopsis": rouge_recall(
                synopsis_text(episode, story_only=False), summary.summary
            ),
            "story_synopsis": rouge_recall(
                synopsis_text(episode, story_only=True), summary.summary
            ),
        },
        "synopsis_names": name_coverage(
            synopsis_names(synopsis_text(episode, story_only=False)), entity_names
        ),
        "target_s": ONE_EPISODE_TARGET_S,
        "within_target": total <= ONE_EPISODE_TARGET_S,
    }
    return out


def bench_campaign(services: Any, data: Path, tag: str, count: int) -> dict[str, Any]:
    from glyphoxa_pipelines.memory import Campaign, CampaignStore, KnowledgeGraph, SummaryStore
    from glyphoxa_pipelines.pipeline.runner import run_campaign_chain

    db = services.db
    cid = f"bench-eight-{tag}"
    CampaignStore(db).upsert(Campaign(cid, "Critical Role (bench, campaign)"))
    paths = [data / "crd3" / "cleaned" / f"{ep}.json" for ep in EPISODES[:count]]
    paths = [p for p in paths if p.exists()]
    t0 = time.perf_counter()
    first = datetime(2015, 3, 12, 19, 0, tzinfo=UTC)
    sessions = [_import(db, cid, p, first + timedelta(days=7 * i)) for i, p in enumerate(paths)]
    import_s = time.perf_counter() - t0
    per_asset: Counter[str] = Counter()
    done: list[str] = []

    def progress(asset: str, phase: str, outcome: Any) -> None:
        if phase == "done":
            per_asset[asset] += outcome.seconds
            if asset == "session_recap":
                done.append(asset)
                print(f"  session {len(done)}/{len(paths)} done", file=sys.stderr, flush=True)

    started, cpu = time.perf_counter(), time.process_time()
    results = run_campaign_chain(services, cid, session_ids=sessions, progress=progress)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    rouge1, rougel, coverage = [], [], []
    entities = KnowledgeGraph(db).find_entities(cid, limit=100_000)
    entity_names = [n for e in entities if e.type != "episode" for n in (e.name, *e.aliases)]
    for sid, path in zip(sessions, paths, strict=True):
        episode = json.loads(path.read_text())
        summary = SummaryStore(db).get(sid)
        r = rouge_recall(synopsis_text(episode, story_only=True), summary.summary)
        rouge1.append(r["rouge1_recall"])
        rougel.append(r["rougeL_recall"])
        cov = name_coverage(synopsis_names(synopsis_text(episode, story_only=False)), entity_names)
        if cov["coverage"] is not None:
            coverage.append(cov["coverage"])
    rows: Counter[str] = Counter()
    for sid in sessions:
        rows.update(_row_summary(results[sid]))
    return {
        "episodes": len(paths),
        "import_s": round(import_s, 2),
        "chain_s": round(total, 2),
        "chain_process_cpu_s": round(cpu, 2),
        "per_asset_s": {a: round(s, 2) for a, s in per_asset.items()},
        "rows": dict(rows),
        "entities_total": len(entities),
        "consolidation": {
            k: v
            for k, v in results["campaign"]["campaign_consolidation"].metadata.items()
            if not isinstance(v, str)
        },
        "failed_checks": _failed_checks(results),
        "mean_story_rouge1_recall": round(sum(rouge1) / len(rouge1), 4) if rouge1 else None,
        "mean_story_rougeL_recall": round(sum(rougel) / len(rougel), 4) if rougel else None,
        "mean_name_coverage": round(sum(coverage) / len(coverage), 3) if coverage else None,
        "target_s": EIGHT_EPISODES_TARGET_S,
        "within_target": total <= EIGHT_EPISODES_TARGET_S,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("GLYPHOXA_SHARED_DATA", DEFAULT_DATA))
    )
    parser.add_argument("--episodes", type=int, default=8, help="episodes in part 2")
    parser.add_argument("--one-only", action="store_true", help="skip part 2")
    parser.add_argument("--home", type=Path, help="GLYPHOXA_HOME (default: a temporary one)")
    args = parser.parse_args(argv)

    if not (args.data / "crd3" / "cleaned" / "C1E001.json").exists():
        print(f"CRD3 data not found under {args.data} (use --data DIR); nothing to measure")
        print(json.dumps({"bench": "pipeline", "skipped": True, "reason": "no data"}))
        return 0

    home = args.home or Path(tempfile.mkdtemp(prefix="glyphoxa-bench-"))
    os.environ["GLYPHOXA_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import embedded, open_database
    from glyphoxa_pipelines.pipeline.services import PipelineServices

    settings = Settings.from_env()
    tag = str(int(time.time()))
    summary: dict[str, Any] = {"bench": "pipeline", "cpus": os.cpu_count()}
    try:
        t0 = time.perf_counter()
        with open_database(settings) as db:
            summary["database_start_s"] = round(time.perf_counter() - t0, 2)
            services = PipelineServices(db, settings)
            summary["model_load_s"] = round(_warm_up(services), 2)
            summary["load_average_1m_at_start"] = round(os.getloadavg()[0], 2)
            print(f"providers: {services.embedder.model_id} (offline), LLM: none")
            one = bench_one(services, args.data, tag)
            print("== one episode (C1E001) ==")
            print(json.dumps(one, indent=2))
            summary["one_episode"] = one
            if not args.one_only:
                many = bench_campaign(services, args.data, tag, args.episodes)
                print(f"== {many['episodes']} episodes as one campaign ==")
                print(json.dumps(many, indent=2))
                summary["campaign"] = many
            try:
                load = os.getloadavg()[0]
            except OSError:
                load = None
            summary["load_average_1m_at_end"] = load
    finally:
        if args.home is None:
            embedded.stop(settings.pgdata)
            shutil.rmtree(home, ignore_errors=True)
    one = summary["one_episode"]
    compact = {
        "bench": "pipeline",
        "one_episode_s": one["chain_s"],
        "one_episode_process_cpu_s": one["chain_process_cpu_s"],
        "one_episode_within_60s": one["within_target"],
        "one_episode_within_20s": one["chain_s"] <= ONE_EPISODE_CHAIN_TARGET_S,
        "embedding_backend": one["embedding_backend"],
        "embedding_texts_per_s": one["embedding_texts_per_s"],
        "embedding_distinct_texts": one["embedding_distinct_texts"],
        "embedding_model": one["embedding_model"],
        "load_average_1m_at_start": summary.get("load_average_1m_at_start"),
        "one_episode_rouge1_recall": one["summary_quality"]["story_synopsis"]["rouge1_recall"],
        "one_episode_rougeL_recall": one["summary_quality"]["story_synopsis"]["rougeL_recall"],
        "one_episode_name_coverage": one["synopsis_names"]["coverage"],
        "one_episode_per_asset_s": one["per_asset_s"],
        "one_episode_rows": one["rows"],
        "model_load_s": summary["model_load_s"],
        "cpus": summary["cpus"],
        "load_average_1m_at_end": summary.get("load_average_1m_at_end"),
    }
    if "campaign" in summary:
        many = summary["campaign"]
        compact.update(
            {
                "campaign_episodes": many["episodes"],
                "campaign_s": many["chain_s"],
                "campaign_process_cpu_s": many["chain_process_cpu_s"],
                "campaign_within_6min": many["within_target"],
                "campaign_mean_rouge1_recall": many["mean_story_rouge1_recall"],
                "campaign_mean_rougeL_recall": many["mean_story_rougeL_recall"],
                "campaign_mean_name_coverage": many["mean_name_coverage"],
                "campaign_failed_checks": len(many["failed_checks"]),
            }
        )
    print(json.dumps(compact))
    return 0


if __name__ == "__main__":
    sys.exit(main())
