"""Side-by-side latency of two checkouts' correctors on the real-STT corpus, in one process.

    python bench/correction_latency.py --base OTHER_CHECKOUT [--corpus DIR] [--rounds N]

Both checkouts' `glyphoxa_pipelines.correction` are loaded into this process under their own
module objects, and each corpus line is corrected by both in turn (the order alternating by
round and line), with Whisper's confidences, the scene and the party as
`bench/correction_stt.py` gives them, against the same 2,000-name list. Scenes hold the names
each speaker said earlier in the session by default, as production builds them
(`--no-speaker`: the turns' scenes only). A line's figure is its best round of thread CPU
time: on a machine shared with other work, the load drifts within seconds, and child
processes taking turns (`correction_stt.py --base`) see different loads; here both versions
see the same moments. Prints p50 / p95 of each, their ratios and the load average, and one
JSON line last.

Best-of-N rounds time every line with its words (and its windows) already seen. A live
session meets new utterances: `--first-sight` also times each held-out line once, in fresh
child processes per version that first correct only the tune lines (a session's words so far),
so the per-word memos know the words the two halves share and nothing of the held-out lines'
own; both versions run in each child, line by line in turn (`--first-sight-runs` children,
a line's best run). One timing per line is noisier than a best round: read it as a ratio,
at a quiet load.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import subprocess
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
from correction_stt import (  # noqa: E402
    DEFAULT_DATA,
    build_entities,
    corpus_missing,
    load_corpus,
    parties,
    with_party,
    with_speaker_scenes,
)

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


def first_sight(
    codes: tuple[Path, Path], rows: list[dict[str, Any]], known: list
) -> list[list[int]]:
    """Thread CPU time (ns) of each held-out line corrected once by each checkout, after the
    tune lines only (run in a child process, so no earlier run warmed it). Both checkouts are
    loaded into the child, each with its own module objects and so its own memos, and each
    line is timed by both in turn, the order alternating: on a shared machine the load
    drifts within seconds, and two child processes taking turns would see different loads."""
    versions = []
    for code in codes:
        correct, name_index = load_corrector(code)
        versions.append((correct, name_index(known)))
    for correct, index in versions:
        for row in rows:
            if row["split"] == "tune":
                correct(row["hypothesis"], index, row.get("word_confidences"), scene=row["scene"])
    # the warm-up's garbage is collected now, not inside the first timed line (a full
    # collection of both versions' memos and the word list costs tens of milliseconds)
    gc.collect()
    clock = time.thread_time_ns
    spent: list[list[int]] = [[], []]
    held = [row for row in rows if row["split"] == "heldout"]
    for k, row in enumerate(held):
        text, confidences, scene = row["hypothesis"], row.get("word_confidences"), row["scene"]
        for v in (0, 1) if k % 2 == 0 else (1, 0):
            correct, index = versions[v]
            start = clock()
            correct(text, index, confidences, scene=scene)
            spent[v].append(clock() - start)
    return spent


def first_sight_pair(
    args: argparse.Namespace, folder: Path, rows: list[dict[str, Any]]
) -> dict[str, Any]:
    """`first_sight` of both checkouts in `--first-sight-runs` fresh child processes; a line's
    figure is its best run. Also names the slowest lines (the tail) of the new checkout."""
    best: list[list[int]] = []
    for _ in range(args.first_sight_runs):
        command = [sys.executable, __file__, "--base", str(args.base), "--new", str(args.new)]
        command += ["--corpus", str(folder), "--names", str(args.names)]
        command += ["--seed", str(args.seed), "--child"]
        command += ["--speaker" if args.speaker else "--no-speaker", "--data", str(args.data)]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        spent = json.loads(result.stdout.strip().splitlines()[-1])
        best = (
            spent
            if not best
            else [
                [min(a, b) for a, b in zip(old, new, strict=True)]
                for old, new in zip(best, spent, strict=True)
            ]
        )
    out: dict[str, Any] = {"lines": len(best[1]), "runs": args.first_sight_runs}
    for v, label in enumerate(("base", "new")):
        out[label] = {
            "cpu_p50_ms": round(quantile(best[v], 0.5), 4),
            "cpu_p95_ms": round(quantile(best[v], 0.95), 4),
            "cpu_sum_ms": round(sum(best[v]) / 1e6, 2),
        }
    for stat in ("cpu_p50_ms", "cpu_p95_ms", "cpu_sum_ms"):
        out[f"ratio_{stat}"] = round(out["new"][stat] / out["base"][stat], 3)
    print(
        f"first sight ({out['lines']} held-out lines after the tune lines, both versions in "
        f"each of {out['runs']} fresh processes, best run): base p50 "
        f"{out['base']['cpu_p50_ms']} / p95 {out['base']['cpu_p95_ms']} ms, new "
        f"{out['new']['cpu_p50_ms']} / {out['new']['cpu_p95_ms']} ms (ratio p95 "
        f"{out['ratio_cpu_p95_ms']})"
    )
    held = [row for row in rows if row["split"] == "heldout"]
    slowest = sorted(range(len(held)), key=lambda k: -best[1][k])[: max(1, len(held) // 20)]
    # Held-out lines are timed here, never read: their sizes are shown, not their words.
    print("the new checkout's slowest 5 % at first sight (ms, words, scene names):")
    for k in slowest:
        row = held[k]
        print(f"  {best[1][k] / 1e6:.3f}  {len(row['hypothesis'].split())}  "
              f"{len(row['scene'] or ())}")
    return out


def by_split(rows: list[dict[str, Any]], best: list[list[int]]) -> dict[str, dict[str, Any]]:
    """Each half's (tune, held out) p50 and p95 of both versions' best rounds: a change tuned
    on the tune half's lines must hold on the other half too."""
    out: dict[str, dict[str, Any]] = {}
    for split in ("tune", "heldout"):
        at = [k for k, row in enumerate(rows) if row["split"] == split]
        if not at:
            continue
        figures: dict[str, Any] = {"lines": len(at)}
        for v, label in enumerate(("base", "new")):
            times = [best[v][k] for k in at]
            figures[label] = [round(quantile(times, 0.5), 4), round(quantile(times, 0.95), 4)]
        figures["ratio_p95"] = round(figures["new"][1] / figures["base"][1], 3)
        out[split] = figures
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--new", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--first-sight",
        action="store_true",
        help="also time each held-out line once, after warming on the tune lines only",
    )
    parser.add_argument("--first-sight-runs", type=int, default=3, help="fresh processes")
    parser.add_argument(
        "--speaker",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="scenes with the names each speaker said earlier in the session, as production "
        "builds them (the live scene and the pipeline) and correction_stt.py gives them; reads "
        "CRD3 under --data, and falls back to the turns' scenes without it (default: on; "
        "--no-speaker: the turns' scenes only)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.first_sight_runs < 1:
        parser.error(f"--first-sight-runs must be at least 1, not {args.first_sight_runs}")
    folder = args.corpus or default_out()
    if corpus_missing(folder, "correction_latency"):
        return 0
    rows, entities = load_corpus(folder)
    if args.speaker and not with_speaker_scenes(rows, args.data, entities):
        # the speaker's names come from CRD3's turns: without them, the turns' scenes
        args.speaker = False
        if not args.child:
            print(f"no CRD3 under {args.data}: scenes without the speaker's names")
    with_party(rows, parties())
    known = build_entities(entities, args.names, args.seed)
    if args.child:
        print(json.dumps(first_sight((args.base, args.new), rows, known)))
        return 0
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
    out: dict[str, Any] = {
        "bench": "correction_latency",
        "lines": len(rows),
        "speaker_scenes": args.speaker,
    }
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
    out["by_split"] = by_split(rows, best)
    for split, figures in out["by_split"].items():
        print(
            f"{split} ({figures['lines']} lines): base p50 / p95 {figures['base'][0]} / "
            f"{figures['base'][1]} ms, new {figures['new'][0]} / {figures['new'][1]} ms, "
            f"ratio p95 {figures['ratio_p95']}"
        )
    out["load_average"] = [round(load_before, 2), round(load_after, 2)]
    print(
        f"new / base: p50 {out['ratio_best_cpu_p50_ms']}, p95 {out['ratio_best_cpu_p95_ms']}, "
        f"sum {out['ratio_best_cpu_sum_ms']} (load average {load_before:.1f} -> "
        f"{load_after:.1f})"
    )
    if args.first_sight:
        out["first_sight"] = first_sight_pair(args, folder, rows)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
