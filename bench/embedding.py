"""The pipeline's embedding step on a real episode: the document encoders side by side.

C1E001 (CRD3) goes through import, correction and chunking on a throwaway embedded PostgreSQL;
then exactly the texts `chunk_embeddings` would embed (its chunks, then its turns as
'<speaker>: <text>') are embedded by each encoder, alternating, `--rounds` times, in one
process: the float graph as it was (length-sorted batches padded to their longest text, two
intra-op threads: `onnx_padded`) and as it is (batches of one length, a single-threaded pass
per core: `onnx`), the int8 model id, and with `--with-torch` sentence-transformers' `encode`.
Each gets texts/s, texts per process CPU second (the figure a shared machine moves least), the
ratio to `onnx_padded`, and how far its vectors sit from `onnx_padded`'s (largest component
difference; cosine min / mean for int8). The texts are all the step would store, repeats
included (the step itself embeds each distinct text once). The query side
(one short text at a time, one thread) is compared the same way: torch float, torch int8 (the
old live path), ONNX float, ONNX int8 (the new live path).

    PYTHONPATH=. python bench/embedding.py [--data DIR] [--every 1] [--rounds 2]

`--locomo 0,5` instead measures only whether a query path loses evidence: LoCoMo
conversations' turns embedded once, each question by every query path, dense recall@10.
`--every N` keeps every N-th text (chunks and turns alike) for a quicker run on a busy machine.
`--late` instead compares the step's rows embedded plainly (the float id) and by late chunking
(`embeddings.LATE_MODEL_ID`: turns read off their chunk's pass), alternating, whole episode.
Skips cleanly without the data. Last line: one JSON object {"bench": "embedding", ...}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DATA = ROOT.parent / "shared" / "data"
TARGET_TEXTS_PER_S = 200.0
QUERY_WORDS = (
    "where did the innkeeper hide silver key dragon guild gold tower wizard goblin forest "
    "city ship captain ring sword promise debt temple priest who told us about the last time"
).split()


def episode_rows(services: Any, data: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """(chunks, entries, turns to embed) of C1E001 as the embedding step reads them."""
    from glyphoxa_pipelines.campaign.session_import import import_session
    from glyphoxa_pipelines.memory import Campaign, CampaignStore, SemanticIndex, SessionStore
    from glyphoxa_pipelines.pipeline.runner import run_step
    from glyphoxa_pipelines.pipeline.session_steps import SESSION_STEPS

    db = services.db
    CampaignStore(db).upsert(Campaign("bench-embedding", "Critical Role (embedding bench)"))
    path = data / "crd3" / "cleaned" / "C1E001.json"
    start = datetime(2015, 3, 12, 19, 0, tzinfo=UTC)
    sid = import_session(db, "bench-embedding", path, start_at=start).session.id
    for step in ("raw_transcript", "corrected_transcript", "transcript_chunks"):
        run_step(SESSION_STEPS[step], services, sid)
    model = services.embedder.model_id
    index = SemanticIndex(db)
    index.register_model(model, services.embedder.dimension)
    chunks = index.chunks_missing_embeddings(model, session_id=sid)
    turns = index.entries_missing_embeddings(model, session_id=sid)
    return chunks, SessionStore(db).get_entries(sid), turns


def bench_late(chunks: list[Any], entries: list[Any], turns: list[Any],
               rounds: int) -> dict[str, Any]:
    """The step's rows two ways, alternating in one process, each distinct text through the
    model once as the step does: `plain` (the float id: every chunk and every turn its own
    pass) and `late` (the late-chunking id: each chunk's pass also gives the turns it holds
    whole; the rest alone). Rows/s, rows per CPU second, word pieces through the model, and
    how far the late turn vectors sit from the plain ones (cosine). `late_int8` is the same
    with the int8 graph (`embeddings.INT8_LATE_MODEL_ID`)."""
    from glyphoxa_pipelines.processing.turn_spans import turn_spans
    from glyphoxa_pipelines.providers.embeddings import (
        INT8_LATE_MODEL_ID,
        LATE_MODEL_ID,
        get_embedder,
    )

    embedder = get_embedder("local", model=LATE_MODEL_ID)
    int8 = get_embedder("local", model=INT8_LATE_MODEL_ID)
    spans = turn_spans(entries, chunks)
    turn_text = {t.entry_id: t.embedding_text() for t in turns}
    plain_texts = list(dict.fromkeys([c.text for c in chunks] + list(turn_text.values())))
    per_chunk: dict[str, list[tuple[int, int]]] = {}
    text_of = {c.id: c.text for c in chunks}
    for entry_id in turn_text:
        span = spans.get(entry_id)
        if span is not None:
            held = per_chunk.setdefault(text_of[span.chunk_id], [])
            if (span.start, span.end) not in held:
                held.append((span.start, span.end))
    chunk_texts = list(dict.fromkeys(c.text for c in chunks))
    alone = list(dict.fromkeys(turn_text[e] for e in turn_text if e not in spans))

    def plain() -> Any:
        return embedder.embed(plain_texts)

    def late_with(model: Any) -> Any:
        def run() -> Any:
            out = model.embed_with_spans(chunk_texts, [per_chunk.get(t, []) for t in chunk_texts])
            return out, model.embed(alone)

        return run

    variants = (("plain", plain), ("late", late_with(embedder)), ("late_int8", late_with(int8)))
    for _, fn in variants:
        fn()  # warm: graphs loaded (and built, the first time on a machine)
    seconds: dict[str, list[float]] = {name: [] for name, _ in variants}
    cpu: dict[str, list[float]] = {name: [] for name, _ in variants}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        for name, fn in variants:
            c0, w0 = time.process_time(), time.perf_counter()
            results[name] = fn()
            seconds[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    rows = len(chunks) + len(turns)
    plain_vec = dict(zip(plain_texts, results["plain"], strict=True))
    (_, span_vectors), _ = results["late"]
    row_of = {t: i for i, t in enumerate(chunk_texts)}
    cos = [
        float(plain_vec[turn_text[e]] @ span_vectors[row_of[text_of[s.chunk_id]]][
            per_chunk[text_of[s.chunk_id]].index((s.start, s.end))])
        for e, s in spans.items() if e in turn_text
    ]
    pieces = embedder.count_tokens_batch
    return {
        "rows": rows,
        "turns_from_chunks": sum(1 for e in turn_text if e in spans),
        "texts_through_model": {"plain": len(plain_texts),
                                "late": len(chunk_texts) + len(alone)},
        "word_pieces": {"plain": sum(pieces(plain_texts)),
                        "late": sum(pieces(chunk_texts)) + sum(pieces(alone))},
        "rows_per_s": {k: round(rows / float(np.median(v)), 1) for k, v in seconds.items()},
        "rows_per_cpu_s": {k: round(rows / float(np.median(v)), 1) for k, v in cpu.items()},
        "seconds": {k: [round(x, 2) for x in v] for k, v in seconds.items()},
        "over_plain": {k: round(float(np.median(seconds["plain"])) / float(np.median(v)), 2)
                       for k, v in seconds.items()},
        "late_turn_cosine_to_plain": {"min": round(min(cos), 4),
                                      "mean": round(float(np.mean(cos)), 4)},
    }


def _timed(fn: Any, texts: list[str]) -> tuple[float, np.ndarray]:
    started = time.perf_counter()
    vectors = fn(texts)
    return time.perf_counter() - started, vectors


def bench_documents(texts: list[str], rounds: int, with_torch: bool) -> dict[str, Any]:
    """The float graph padded (before) and in equal-length batches (now), the int8 model id
    and optionally torch, alternating in one process: texts/s, texts per CPU second, ratios
    to the padded float encoder, and each one's vectors against it."""
    from glyphoxa_pipelines.providers.embeddings import (
        INT8_MODEL_ID,
        SentenceTransformerEmbedder,
        bundled_model_path,
        get_embedder,
    )
    from glyphoxa_pipelines.providers.onnx_encoder import OnnxSentenceEncoder

    now = SentenceTransformerEmbedder(backend="onnx")
    graph = now.onnx_encoder().graph
    backends: dict[str, Any] = {
        "onnx_padded": OnnxSentenceEncoder(graph, bundled_model_path(), packing="padded").encode,
        "onnx": now.embed,
        "onnx_int8": get_embedder("local", model=INT8_MODEL_ID).embed,
    }
    if with_torch:
        backends["torch"] = SentenceTransformerEmbedder(backend="torch").embed
    for embed in backends.values():
        embed(["warm up"])
    seconds: dict[str, list[float]] = {name: [] for name in backends}
    cpu: dict[str, list[float]] = {name: [] for name in backends}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for name, embed in backends.items():
            cpu_before = time.process_time()
            s, v = _timed(embed, texts)
            cpu[name].append(time.process_time() - cpu_before)
            seconds[name].append(s)
            vectors[name] = v
    rate = {name: len(texts) / float(np.median(s)) for name, s in seconds.items()}
    per_cpu = {name: len(texts) / float(np.median(c)) for name, c in cpu.items()}
    base = vectors["onnx_padded"]
    int8_cos = (vectors["onnx_int8"] * base).sum(axis=1)
    out: dict[str, Any] = {
        "texts": len(texts),
        "texts_per_s": {k: round(v, 1) for k, v in rate.items()},
        "texts_per_cpu_s": {k: round(v, 1) for k, v in per_cpu.items()},
        "seconds": {k: [round(x, 2) for x in v] for k, v in seconds.items()},
        "over_padded": {k: round(v / rate["onnx_padded"], 2) for k, v in rate.items()},
        "max_abs_diff_to_padded": {
            k: float(np.abs(v - base).max()) for k, v in vectors.items() if k != "onnx_int8"
        },
        "int8_cosine_to_float_min": float(int8_cos.min()),
        "int8_cosine_to_float_mean": float(int8_cos.mean()),
    }
    if with_torch:
        cos = (vectors["onnx"] * vectors["torch"]).sum(axis=1)
        out.update({
            "onnx_over_torch": round(rate["onnx"] / rate["torch"], 2),
            "cosine_min": float(cos.min()),
            "cosine_mean": float(cos.mean()),
            "max_abs_diff": float(np.abs(vectors["onnx"] - vectors["torch"]).max()),
        })
    return out


def bench_queries(n: int) -> dict[str, Any]:
    from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder
    from realtime.query_embedding import QueryEmbedder

    rng = random.Random(17)
    queries = [" ".join(rng.choices(QUERY_WORDS, k=rng.randint(3, 12))) for _ in range(n)]
    onnx, torch_only = SentenceTransformerEmbedder(), SentenceTransformerEmbedder(backend="torch")
    paths = {
        "torch_float": QueryEmbedder(torch_only, quantize=False),
        "torch_int8": QueryEmbedder(torch_only, quantize=True),
        "onnx_float": QueryEmbedder(onnx, quantize=False),
        "onnx_int8": QueryEmbedder(onnx, quantize=True),
    }
    for q in paths.values():
        q.embed_sync("warm up")
    reference = torch_only.embed(queries)
    ms: dict[str, list[float]] = {name: [] for name in paths}
    cos: dict[str, list[float]] = {name: [] for name in paths}
    for i, text in enumerate(queries):
        for name, q in paths.items():
            q._cache.clear()  # noqa: SLF001 - every call embeds
            started = time.perf_counter()
            v = q.embed_sync(text)
            ms[name].append((time.perf_counter() - started) * 1000)
            cos[name].append(float(v @ reference[i]))
    base = float(np.median(ms["torch_int8"]))
    return {
        name: {
            "p50_ms": round(float(np.median(v)), 2),
            "p95_ms": round(float(np.percentile(v, 95)), 2),
            "speed_vs_torch_int8": round(base / float(np.median(v)), 2),
            "cosine_to_float_min": round(min(cos[name]), 4),
            "cosine_to_float_mean": round(float(np.mean(cos[name])), 4),
        }
        for name, v in ms.items()
    }


def bench_locomo_dense(data: Path, conversations: list[int], k: int = 10) -> dict[str, Any]:
    """Does a query encoder lose evidence? Per LoCoMo conversation, its turns are embedded
    once per document model (float, as the pipeline does today, and the int8 model id) and
    every question of categories 1-4 by each query path; evidence recall@k of the top-k turns
    by cosine, per path, side by side. `int8_docs` pairs int8 documents with int8 queries,
    what a store switched to the int8 model id serves."""
    from glyphoxa_pipelines.providers.embeddings import (
        INT8_MODEL_ID,
        SentenceTransformerEmbedder,
        get_embedder,
    )
    from realtime.query_embedding import QueryEmbedder

    convs = json.loads((data / "locomo" / "locomo10.json").read_text())
    onnx, torch_only = SentenceTransformerEmbedder(), SentenceTransformerEmbedder(backend="torch")
    int8 = get_embedder("local", model=INT8_MODEL_ID)
    paths = {
        "torch_int8": QueryEmbedder(torch_only, quantize=True, cache=0),
        "onnx_float": QueryEmbedder(onnx, quantize=False, cache=0),
        "onnx_int8": QueryEmbedder(onnx, quantize=True, cache=0),
        "int8_docs": QueryEmbedder(int8, cache=0),
    }
    found: dict[str, list[float]] = {name: [] for name in paths}
    per_conversation: dict[str, dict[str, float]] = {}
    for ci in conversations:
        conv = convs[ci]["conversation"]
        turns = [
            t for key, value in conv.items()
            if key.startswith("session_") and isinstance(value, list) for t in value
        ]
        ids = [t["dia_id"] for t in turns]
        texts = [f"{t['speaker']}: {t['text']}" for t in turns]
        docs = onnx.embed(texts)
        docs_int8 = int8.embed(texts)
        questions = [q for q in convs[ci]["qa"] if q.get("category") in (1, 2, 3, 4)]
        mine: dict[str, list[float]] = {name: [] for name in paths}
        for q in questions:
            gold = set(q["evidence"])
            if not gold:
                continue
            for name, path in paths.items():
                pool = docs_int8 if name == "int8_docs" else docs
                top = np.argsort(-(pool @ path.embed_sync(q["question"])))[:k]
                mine[name].append(len(gold & {ids[i] for i in top}) / len(gold))
        per_conversation[convs[ci]["sample_id"]] = {
            name: round(float(np.mean(v)), 4) for name, v in mine.items()
        }
        for name, v in mine.items():
            found[name].extend(v)
    return {
        "k": k,
        "questions": len(found["onnx_int8"]),
        f"evidence_recall_at_{k}": {n: round(float(np.mean(v)), 4) for n, v in found.items()},
        "per_conversation": per_conversation,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path,
                    default=Path(os.environ.get("GLYPHOXA_SHARED_DATA", DEFAULT_DATA)))
    ap.add_argument("--every", type=int, default=1, help="keep every N-th text")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--with-torch", action="store_true", help="also torch `encode` (slow)")
    ap.add_argument("--late", action="store_true",
                    help="only the step's rows plain vs late chunking (the late-turn model id)")
    ap.add_argument("--locomo", default="",
                    help="only the query encoders' dense recall on these LoCoMo conversations "
                         "(comma-separated indexes, e.g. 0,5)")
    args = ap.parse_args(argv)
    if args.locomo:
        if not (args.data / "locomo" / "locomo10.json").exists():
            print(json.dumps({"bench": "embedding", "skipped": True, "reason": "no LoCoMo"}))
            return 0
        picked = [int(x) for x in args.locomo.split(",")]
        dense = bench_locomo_dense(args.data, picked)
        print(json.dumps(dense, indent=2))
        print(json.dumps({"bench": "embedding", "part": "locomo_dense", "conversations": picked,
                          "load_average_1m": round(os.getloadavg()[0], 2), **dense}))
        return 0
    if not (args.data / "crd3" / "cleaned" / "C1E001.json").exists():
        print(f"CRD3 data not found under {args.data}; nothing to measure")
        print(json.dumps({"bench": "embedding", "skipped": True, "reason": "no data"}))
        return 0
    home = Path(tempfile.mkdtemp(prefix="glyphoxa-bench-emb-"))
    os.environ["GLYPHOXA_HOME"] = str(home)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import embedded, open_database
    from glyphoxa_pipelines.pipeline.services import PipelineServices

    settings = Settings.from_env()
    try:
        with open_database(settings) as db:
            chunk_rows, entries, turn_rows = episode_rows(PipelineServices(db, settings),
                                                          args.data)
    finally:
        embedded.stop(settings.pgdata)
        shutil.rmtree(home, ignore_errors=True)
    if args.late:
        load_before = os.getloadavg()[0]
        late = bench_late(chunk_rows, entries, turn_rows, args.rounds)
        print(json.dumps(late, indent=2))
        print(json.dumps({"bench": "embedding", "part": "late_chunking", "cpus": os.cpu_count(),
                          "load_average_1m": [round(load_before, 2),
                                              round(os.getloadavg()[0], 2)],
                          "target_rows_per_s": TARGET_TEXTS_PER_S, **late}))
        return 0
    chunks = [c.text for c in chunk_rows]
    turns = [t.embedding_text() for t in turn_rows]
    texts = chunks[:: args.every] + turns[:: args.every]
    print(f"C1E001: {len(chunks)} chunks + {len(turns)} turns; embedding {len(texts)} texts")
    load_before = os.getloadavg()[0]
    docs = bench_documents(texts, args.rounds, args.with_torch)
    print(json.dumps(docs, indent=2))
    queries = bench_queries(args.queries)
    print(json.dumps(queries, indent=2))
    load = os.getloadavg()[0]
    print(json.dumps({
        "bench": "embedding",
        "cpus": os.cpu_count(),
        "load_average_1m": [round(load_before, 2), round(load, 2)],
        "texts": docs["texts"],
        "texts_per_s": docs["texts_per_s"],
        "texts_per_cpu_s": docs["texts_per_cpu_s"],
        "over_padded": docs["over_padded"],
        "max_abs_diff_to_padded": docs["max_abs_diff_to_padded"],
        "onnx_over_torch": docs.get("onnx_over_torch"),
        "target_texts_per_s": TARGET_TEXTS_PER_S,
        "int8_cosine_to_float_min": docs["int8_cosine_to_float_min"],
        "int8_cosine_to_float_mean": docs["int8_cosine_to_float_mean"],
        "query_p50_ms": {k: v["p50_ms"] for k, v in queries.items()},
        "query_speed_vs_torch_int8": {k: v["speed_vs_torch_int8"] for k, v in queries.items()},
        "query_cosine_to_float_mean": {k: v["cosine_to_float_mean"] for k, v in queries.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
