"""Where a corrected line's time goes, stage by stage, at first sight and warm.

    python bench/correction_stages.py [--corpus DIR] [--names N]

The latency target is per utterance, and the slow utterances are the ones a session has not
met yet (`correction_latency.py --first-sight`). To know which stage to make cheaper, this
corrects the real-STT corpus's tune lines (a session's words so far), then times each stage of
`pipeline.correct` on the held-out lines once (first sight) and again (warm), in thread CPU
time, and counts the scenes laid out anew. Wrapping the stages costs a little per call: read
the shares, not the sums. Scenes hold the names each speaker said earlier in the session, as
production builds them (`--no-speaker`: the turns' scenes only). One JSON line last.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
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

from glyphoxa_pipelines.correction import pipeline, scene_forms  # noqa: E402
from glyphoxa_pipelines.correction.name_index import NameIndex  # noqa: E402

STAGES = ("scan_of", "find_corrections", "context_corrections", "mask_possessives", "very_doubted")


def timed(spent: Counter[str], name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func`, adding its thread CPU time to `spent[name]`."""
    clock = time.thread_time_ns

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return func(*args, **kwargs)
        finally:
            spent[name] += clock() - start

    return wrapper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--speaker",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="scenes with the names each speaker said earlier (reads CRD3 under --data; "
        "without it, the turns' scenes)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    folder = args.corpus or default_out()
    if corpus_missing(folder, "correction_stages"):
        return 0
    rows, entities = load_corpus(folder)
    if args.speaker and not with_speaker_scenes(rows, args.data, entities):
        args.speaker = False
        print(f"no CRD3 under {args.data}: scenes without the speaker's names")
    with_party(rows, parties())
    index = NameIndex(build_entities(entities, args.names, args.seed))
    for row in rows:
        if row["split"] == "tune":
            pipeline.correct(
                row["hypothesis"], index, row.get("word_confidences"), scene=row["scene"]
            )
    held = [row for row in rows if row["split"] == "heldout"]
    gc.collect()  # the warm-up's garbage, not inside the first timed line
    out: dict[str, Any] = {
        "bench": "correction_stages",
        "lines": len(held),
        "speaker_scenes": args.speaker,
    }
    for label in ("first_sight", "warm"):
        spent: Counter[str] = Counter()
        originals = {name: getattr(pipeline, name) for name in STAGES}
        for name, func in originals.items():
            setattr(pipeline, name, timed(spent, name, func))
        built_before = scene_forms.scene_forms.cache_info().misses
        clock = time.thread_time_ns
        total = 0
        try:
            for row in held:
                start = clock()
                pipeline.correct(
                    row["hypothesis"], index, row.get("word_confidences"), scene=row["scene"]
                )
                total += clock() - start
        finally:
            for name, func in originals.items():
                setattr(pipeline, name, func)
        scenes_built = scene_forms.scene_forms.cache_info().misses - built_before
        shares = {name: round(spent[name] / total, 3) for name in STAGES}
        out[label] = {"total_ms": round(total / 1e6, 2), "scenes_built": scenes_built, **shares}
        print(
            f"{label}: {total / 1e6:.1f} ms over {len(held)} lines, {scenes_built} scenes laid out"
        )
        for name in STAGES:
            print(f"  {name:22s} {spent[name] / 1e6:7.2f} ms  {shares[name]:.0%}")
    out["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
