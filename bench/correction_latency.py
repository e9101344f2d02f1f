"""Side-by-side latency of two checkouts' correctors on the real-STT corpus, in one process.

    python bench/correction_latency.py --base OTHER_CHECKOUT [--corpus DIR] [--rounds N]

Both checkouts' `glyphoxa_pipelines.correction` are loaded into this process under their own
module objects, and each corpus line is corrected by both in turn (the order alternating by
round and line), with Whisper's confidences, the scene and the party as
`bench/correction_stt.py` gives them, against the same 2,000-name list. A line's figure is its
best round of thread CPU time: on a machine shared with other work, the load drifts within
seconds, and child processes taking turns (`correction_stt.py --base`) see different loads;
here both versions see the same moments. Prints p50 / p95 of each, their ratios and the load
average, and one JSON line last.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from build_stt_corpus import default_out  # noqa: E402
from correction_stt import build_entities, load_corpus, parties, with_party  # noqa: E402

PACKAGE = "glyphoxa_pipelines"


def load_corrector(code: Path) -> tuple[Callable[..., Any], type]:
    """(`correct`, `NameIndex`) of the checkout at `code`, loaded as fresh module objects:
    the modules already imported are set aside and put back afterwards."""
    kept = {name: mod for name, mod in sys.modules.items() if name.split(".")[0] == PACKAGE}
    for name in kept:
        del sys.modules[name]
    sys.path.insert(0, str(code))
    try:
        pipeline: ModuleType = importlib.import_module(f"{PACKAGE}.correction.pipeline")
        name_index: ModuleType = importlib.import_module(f"{PACKAGE}.correction.name_index")
    finally:
        sys.path.remove(str(code))
        for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
            del sys.modules[name]
        sys.modules.update(kept)
    if not Path(pipeline.__file__ or "").resolve().is_relative_to(code.resolve()):
        raise RuntimeError(f"{PACKAGE} was not loaded from {code}: {pipeline.__file__}")
    return pipeline.correct, name_index.NameIndex


def quantile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))] / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    folder = args.corpus or default_out()
    if not (folder / "corpus.jsonl").exists():
        print(f"no corpus under {folder}: build it with python bench/build_stt_corpus.py")
        print(json.dumps({"bench": "correction_latency", "skipped": True}))
        return 0
    rows, entities = load_corpus(folder)
    with_party(rows, parties())
    known = build_entities(entities, args.names, args.seed)
    versions = []
    for code in (args.base, args.new):
        correct, name_index = load_corrector(code)
        versions.append((correct, name_index(known)))
    for correct, index in versions:  # warm the per-word caches, as a running session has
        for row in rows:
            correct(row["hypothesis"], index, row.get("word_confidences"), scene=row["scene"])
    best = [[1 << 62] * len(rows) for _ in versions]
    clock = time.thread_time_ns
    load_before = os.getloadavg()[0]
    for round_ in range(args.rounds):
        for k, row in enumerate(rows):
            text, confidences, scene = row["hypothesis"], row.get("word_confidences"), row["scene"]
            for v in (0, 1) if (round_ + k) % 2 == 0 else (1, 0):
                correct, index = versions[v]
                start = clock()
                correct(text, index, confidences, scene=scene)
                spent = clock() - start
                if spent < best[v][k]:
                    best[v][k] = spent
    load_after = os.getloadavg()[0]
    out: dict[str, Any] = {"bench": "correction_latency", "lines": len(rows)}
    for v, label in enumerate(("base", "new")):
        out[label] = {
            "best_cpu_p50_ms": round(quantile(best[v], 0.5), 4),
            "best_cpu_p95_ms": round(quantile(best[v], 0.95), 4),
            "best_cpu_sum_ms": round(sum(best[v]) / 1e6, 2),
        }
        print(
            f"{label}: each line's best of {args.rounds} rounds, CPU p50 "
            f"{out[label]['best_cpu_p50_ms']} ms, p95 {out[label]['best_cpu_p95_ms']} ms"
        )
    for stat in ("best_cpu_p50_ms", "best_cpu_p95_ms", "best_cpu_sum_ms"):
        out[f"ratio_{stat}"] = round(out["new"][stat] / out["base"][stat], 3)
    out["load_average"] = [round(load_before, 2), round(load_after, 2)]
    print(
        f"new / base: p50 {out['ratio_best_cpu_p50_ms']}, p95 {out['ratio_best_cpu_p95_ms']}, "
        f"sum {out['ratio_best_cpu_sum_ms']} (load average {load_before:.1f} -> "
        f"{load_after:.1f})"
    )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
