"""Evaluate transcript correction on real speech-to-text output (the corpus that
`bench/build_stt_corpus.py` builds: real lines spoken by piper, heard by Whisper tiny.en).

    python bench/correction_stt.py [--corpus DIR] [--split tune|heldout|all] [--no-party]
                                   [--no-speaker] [--no-latency]
                                   [--synthetic-episodes N] [--base OTHER_CHECKOUT] [--dump FILE]

A correction is right when it overlaps a misheard name's transcript span and writes that name's
entity; one on a name heard right that keeps its entity is neutral (a respelling of what was
already right), and so is one writing a name the reference line holds where the alignment
could not place it (both neighbours misheard); every other one is wrong, and the words it
rewrote outside any name count as damage per 10,000 clean words (transcript words outside
names). Each utterance is corrected with the 2,000-name index, Whisper's word confidences and
the scene's names: those said in the turns before it, those its speaker said earlier in the
session (CRD3 lines, read from `--data`; `--no-speaker` leaves them out), and the party (the
player characters, as the live path adds the campaign's `player` entities; `--no-party`
leaves them out). Prints precision, recall and damage for all lines and per half, the
synthetic bench's figures for comparison, latency (p50/p95 per utterance, wall clock and
thread CPU time), and one JSON line last.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
# `--base DIR` times another checkout's corrector with this bench: its child processes import
# glyphoxa_pipelines from DIR (given here), everything else from this checkout
if os.environ.get("GLYPHOXA_BENCH_CODE"):
    sys.path.insert(0, os.environ["GLYPHOXA_BENCH_CODE"])

from build_stt_corpus import (  # noqa: E402
    DEMO,
    crd3_turns,
    default_out,
    drop_stage_directions,
    name_pattern,
)
from correction import (  # noqa: E402
    DEFAULT_DATA,
    NoiseSimulator,
    collect_names,
    evaluate,
    generated_names,
    group_variants,
    inject,
    latency_summary,
    load_lines,
)

from glyphoxa_pipelines.correction import NameIndex, correct, tokenize  # noqa: E402
from glyphoxa_pipelines.correction.name_index import word_zipf  # noqa: E402

# Critical Role campaign 1's player characters (and Trinket, the bear who fights beside them):
# what a campaign file marks as `player` entities. CRD3 has no entity types, so they are named
# here; the demo campaign's come from its file.
CRD3_PARTY = (
    "Vax",
    "Vax'ildan",
    "Vex",
    "Vex'ahlia",
    "Keyleth",
    "Grog",
    "Grog Strongjaw",
    "Pike",
    "Scanlan",
    "Scanlan Shorthalt",
    "Perce",
    "Tiberius",
    "Tiberius Stormwind",
    "Trinket",
)

TARGETS = {"precision": 0.95, "recall": 0.6, "damage_per_10k": 1.0, "p95_ms_2000": 0.3}


def load_corpus(folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [
        json.loads(line)
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    entities = json.loads((folder / "entities.json").read_text(encoding="utf-8"))
    return rows, entities


def build_entities(entities: dict[str, Any], total: int, seed: int) -> list[tuple[str, list]]:
    """CRD3 and demo entities, padded with generated fantasy names up to `total` names."""
    known: list[tuple[str, list[str]]] = [(c, list(a)) for c, a in entities["crd3"]]
    known += [(c, list(a)) for c, a in entities["demo"]]
    names = [n for c, a in known for n in (c, *a)]
    return known + [(p, []) for p in generated_names(max(0, total - len(names)), set(names), seed)]


def parties() -> dict[str, tuple[str, ...]]:
    """The party of each corpus source (LoCoMo's everyday talk has none)."""
    campaign = yaml.safe_load((DEMO / "sample_campaign.yaml").read_text(encoding="utf-8"))
    demo = tuple(e["name"] for e in campaign.get("entities", []) if e.get("type") == "player")
    return {"crd3": CRD3_PARTY, "demo": demo}


def with_party(rows: list[dict[str, Any]], party: dict[str, tuple[str, ...]]) -> None:
    """Each row's scene with its source's party added."""
    for row in rows:
        row["scene"] = sorted(set(row.get("scene") or ()) | set(party.get(row["source"], ())))


CRD3_DM = "MATT"
SESSION_TURNS = 1_000_000  # "the whole session so far": more turns than any episode has


def corpus_missing(folder: Path, bench: str) -> bool:
    """True, with the bench's skip line printed, when `folder` holds no built corpus."""
    if (folder / "corpus.jsonl").exists():
        return False
    print(f"no corpus under {folder}: build it with python bench/build_stt_corpus.py")
    print(json.dumps({"bench": bench, "skipped": True, "reason": f"no {folder}"}))
    return True


def crd3_names(entities: dict[str, Any]) -> list[str]:
    """The corpus's CRD3 names, each canonical name with its aliases."""
    return [n for canonical, aliases in entities["crd3"] for n in (canonical, *aliases)]


def with_speaker_scenes(rows: list[dict[str, Any]], data: Path, entities: dict[str, Any]) -> bool:
    """Each CRD3 row's scene with the names its speaker said earlier in the session, as the
    live scene keeps them (`SceneMemory`); a CRD3 episode is a session. False, scenes
    unchanged, without CRD3 under `data`."""
    return widen_scenes(rows, data, crd3_names(entities), SESSION_TURNS, "speaker")


def widen_scenes(
    rows: list[dict[str, Any]], data: Path, names: list[str], turns: int, said_by: str = "all"
) -> bool:
    """Each CRD3 row's scene widened to the names said in the `turns` turns before it in its
    episode (the corpus stores the 40 turns' scene; the transcripts give the rest), by anyone
    (`said_by` "all"), by the DM ("dm") or by the row's own speaker ("speaker"). False,
    scenes unchanged, without CRD3 under `data`."""
    crd3 = data / "crd3" / "cleaned"
    if not crd3.is_dir():
        return False
    history = crd3_turns(crd3)
    where = {f"crd3:{episode}:{number}": k for k, (episode, number, _, _) in enumerate(history)}
    pattern = name_pattern(names)
    said = [[m.group() for m in pattern.finditer(line)] for _, _, _, line in history]
    for row in rows:
        k = where.get(row["id"]) if row["source"] == "crd3" else None
        if k is None:
            continue
        episode = history[k][0]
        by = {"all": None, "dm": CRD3_DM, "speaker": row["speaker"]}[said_by]
        wider = {
            name
            for j in range(max(0, k - turns), k)
            if history[j][0] == episode and (by is None or history[j][2] == by)
            for name in said[j]
        }
        row["scene"] = sorted(wider | set(row.get("scene") or ()))
    return True


def entity_of(known: Iterable[tuple[str, list[str]]]) -> dict[str, str]:
    """Every surface (canonical or alias) to its canonical name."""
    out: dict[str, str] = {}
    for canonical, aliases in known:
        for surface in (canonical, *aliases):
            out.setdefault(surface, canonical)
    return out


def squeeze(text: str) -> str:
    """Letters only, lower case: "Grim jaw" in a reference line still says "Grimjaw"."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def ordinary(name: str) -> bool:
    return all(word_zipf(w) >= 3.0 for w in name.split())


def score(rows: list[dict[str, Any]], index: NameIndex, entity: dict[str, str]) -> dict[str, Any]:
    surfaces = sorted((n for n in entity if len(n) > 2), key=len, reverse=True)
    said = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, surfaces)) + r")(?!\w)")
    right = wrong = neutral = misheard = clean_words = damaged = 0
    fixed: set[tuple[str, int]] = set()
    wrong_examples: list[str] = []
    missed_examples: list[str] = []
    for row in rows:
        hyp = row["hypothesis"]
        result = correct(hyp, index, row.get("word_confidences"), scene=row.get("scene"))
        # a name of ordinary words heard as those words ("a watch" for "the Watch") is no
        # error to fix, as in the synthetic bench; correcting it still counts as neutral
        spans = [s | {"misheard": s["misheard"] and not ordinary(s["name"])} for s in row["names"]]
        misheard += sum(s["misheard"] for s in spans)
        inside = {
            t.start
            for t in tokenize(hyp)
            for s in spans
            if s["hyp_start"] <= t.start < s["hyp_end"]
        }
        clean_words += len(tokenize(hyp)) - len(inside)
        for c in result.corrections:
            hit = next(
                (s for s in spans if c.start < s["hyp_end"] and s["hyp_start"] < c.end), None
            )
            same = hit is not None and entity.get(hit["name"]) == c.entity
            if hit is not None and same and hit["misheard"]:
                right += 1
                fixed.add((row["id"], hit["hyp_start"]))
                continue
            in_reference = c.entity in {
                entity.get(m.group()) for m in said.finditer(row["reference"])
            } or squeeze(c.replacement) in squeeze(row["reference"])
            if (hit is not None and same) or (hit is None and in_reference):
                # a name heard right, respelled; or a name said in the line whose transcript
                # words could not be aligned (its neighbours were misheard too): not judged
                neutral += 1
                continue
            wrong += 1
            outside = [t for t in tokenize(c.original) if c.start + t.start not in inside]
            damaged += len(outside)
            wrong_examples.append(f"{c.original!r} -> {c.replacement!r} ({c.method}) | {hyp}")
        for s in spans:
            if s["misheard"] and (row["id"], s["hyp_start"]) not in fixed:
                missed_examples.append(f"{s['heard']!r} (for {s['name']!r}) | {hyp}")
    corrections = right + wrong
    return {
        "utterances": len(rows),
        "misheard": misheard,
        "fixed": right,
        "corrections": corrections,
        "neutral": neutral,
        "precision": round(right / corrections, 4) if corrections else 1.0,
        "recall": round(right / misheard, 4) if misheard else 0.0,
        "clean_words": clean_words,
        "damaged_words": damaged,
        "damage_per_10k": round(damaged / clean_words * 10_000, 3) if clean_words else 0.0,
        "wrong_examples": wrong_examples,
        "missed_examples": missed_examples,
    }


def latency(rows: list[dict[str, Any]], index: NameIndex, rounds: int = 5) -> dict[str, float]:
    """Per-utterance time of `correct` with confidences and scene.

    Thread CPU time is reported next to wall time: on a shared machine the wall-clock tail
    measures the neighbours, CPU time this code. Three readings: `unseen_*`, each held-out
    line corrected once after the tune half warmed the per-word caches (what a new line of a
    session costs); the repeated rounds over all lines after a warm-up round (`p50_ms` ...);
    and `best_*`, each line's fastest round (the least disturbed by the neighbours' load, the
    figure to compare two versions by).
    """

    def timed(row: dict[str, Any]) -> tuple[float, float]:
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        correct(row["hypothesis"], index, row.get("word_confidences"), scene=row.get("scene"))
        return (time.perf_counter_ns() - t0) / 1e6, (time.thread_time_ns() - c0) / 1e6

    for row in rows:
        if row["split"] == "tune":
            timed(row)
    unseen = [timed(row)[1] for row in rows if row["split"] != "tune"]
    for row in rows:
        timed(row)
    wall, cpu = [], []
    best = [float("inf")] * len(rows)
    for _ in range(rounds):
        for k, row in enumerate(rows):
            w, c = timed(row)
            wall.append(w)
            cpu.append(c)
            best[k] = min(best[k], c)
    out = latency_summary(wall, cpu)
    unseen.sort()
    best.sort()
    for label, values in (("unseen", unseen), ("best", best)):
        out[f"{label}_cpu_p50_ms"] = round(values[int(0.5 * (len(values) - 1))], 4)
        out[f"{label}_cpu_p95_ms"] = round(values[int(0.95 * (len(values) - 1))], 4)
    return out


def compare_latency(args: argparse.Namespace, base: Path, runs: int = 2) -> list[dict[str, Any]]:
    """Latency of the corrector in `base` (another checkout) and in this one, measured by this
    bench in child processes taking turns (base, new, base, new): on a loaded machine the load
    drifts, and interleaving spreads it over both."""
    out = []
    for run in range(runs):
        for label, code in (("base", base), ("new", ROOT)):
            env = dict(os.environ, GLYPHOXA_BENCH_CODE=str(code.resolve()))
            command = [sys.executable, __file__, "--latency-only", "--names", str(args.names)]
            command += ["--seed", str(args.seed), "--corpus", str(args.corpus or default_out())]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            out.append({"version": label, "run": run} | result["latency"])
    return out


def synthetic_setup(
    data: Path, episodes: int, seed: int
) -> tuple[list[str], list[str], dict[str, str], NameIndex] | None:
    """(lines, names, name groups, 2,000-name index) of the simulated-noise bench
    (bench/correction.py) on `episodes` CRD3 episodes; None without CRD3."""
    crd3 = data / "crd3" / "cleaned"
    if episodes <= 0 or not crd3.is_dir():
        return None
    lines = load_lines(crd3, episodes)
    names = collect_names(lines)
    group = group_variants(names)
    by_canon: dict[str, list[str]] = {}
    for name, canon in group.items():
        by_canon.setdefault(canon, [])
        if name != canon:
            by_canon[canon].append(name)
    known = list(by_canon.items())
    pad = generated_names(2000 - len(names), set(names), seed)
    return lines, names, group, NameIndex(known + [(p, []) for p in pad])


def synthetic(data: Path, episodes: int, seed: int) -> dict[str, Any] | None:
    """The simulated-noise bench (bench/correction.py) on `episodes` episodes, 2,000 names."""
    setup = synthetic_setup(data, episodes, seed)
    if setup is None:
        return None
    result = evaluate(*setup, seed)
    return {k: v for k, v in result.items() if not k.endswith("examples")}


def dump_outputs(
    rows: list[dict[str, Any]], index: NameIndex, args: argparse.Namespace, out: Path
) -> int:
    """Every corpus line's and every synthetic noisy line's corrections, one line each: run
    with GLYPHOXA_BENCH_CODE set to another checkout and `diff` the two files to show that a
    change (a faster walk) leaves the outputs byte-identical."""
    lines_out = []
    for row in rows:
        result = correct(
            row["hypothesis"], index, row.get("word_confidences"), scene=row.get("scene")
        )
        lines_out.append(f"stt {row['id']}\t{result.text!r}\t{result.corrections!r}")
    setup = synthetic_setup(args.data, args.synthetic_episodes, args.seed)
    if setup is not None:
        lines, names, _, synth_index = setup
        sim = NoiseSimulator(names, args.seed)
        ordered = sorted(names, key=len, reverse=True)
        pattern = re.compile(
            r"(?<![\w'’\-#@])(?:" + "|".join(map(re.escape, ordered)) + r")(?![\w'’\-])"
        )
        for k, line in enumerate(lines):
            noisy, _ = inject(line, pattern, sim, rate=0.5)
            result = correct(noisy, synth_index)
            lines_out.append(f"synthetic {k}\t{result.text!r}\t{result.corrections!r}")
    out.write_text("\n".join(lines_out) + "\n", encoding="utf-8")
    return len(lines_out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--synthetic-episodes", type=int, default=2)
    parser.add_argument("--examples", type=int, default=12)
    parser.add_argument(
        "--split",
        choices=("all", "tune", "heldout"),
        default="tune",
        help="the half whose wrong and missed corrections are printed (default tune: "
        "read the held-out half's only once the rules are fixed)",
    )
    parser.add_argument("--no-party", action="store_true", help="scenes without the party")
    parser.add_argument(
        "--everyday-party",
        action="store_true",
        help="LoCoMo's everyday lines get the CRD3 party as their scene: table talk with no "
        "names while the party is in play, the damage the context rules can do",
    )
    parser.add_argument(
        "--no-speaker",
        action="store_true",
        help="scenes without the names the speaker said earlier in the session",
    )
    parser.add_argument(
        "--scene-turns",
        type=int,
        default=None,
        help="widen CRD3 scenes to the names of this many turns before (read from --data)",
    )
    parser.add_argument(
        "--scene-from",
        choices=("all", "dm", "speaker"),
        default="all",
        help="with --scene-turns: whose names widen the scene (anyone's, the DM's, the speaker's)",
    )
    parser.add_argument(
        "--skip-stage-directions",
        action="store_true",
        help="leave out the lines whose reference holds a stage direction ('(laughs)'), which "
        "a corpus built before they were dropped had the voice read",
    )
    parser.add_argument("--base", type=Path, default=None, help="checkout to time against")
    parser.add_argument("--latency-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--no-latency", action="store_true", help="precision and recall only, no timing"
    )
    parser.add_argument(
        "--dump", type=Path, default=None, help="write every line's corrections to this file"
    )
    args = parser.parse_args(argv)
    folder = args.corpus or default_out()
    if corpus_missing(folder, "correction_stt"):
        return 0
    rows, entities = load_corpus(folder)
    if args.skip_stage_directions:
        kept = [r for r in rows if drop_stage_directions(r["reference"]) == r["reference"]]
        left_out = {h: sum(r["split"] == h for r in rows) for h in ("tune", "heldout")}
        rows = kept
        left_out = {h: n - sum(r["split"] == h for r in rows) for h, n in left_out.items()}
        print(f"lines left out for a stage direction: {left_out}")
    if args.scene_turns is not None and not widen_scenes(
        rows, args.data, crd3_names(entities), args.scene_turns, args.scene_from
    ):
        print(f"no CRD3 under {args.data}: scenes as the corpus stores them")
    if not args.no_speaker and not with_speaker_scenes(rows, args.data, entities):
        print(f"no CRD3 under {args.data}: scenes without the speaker's earlier names")
    if not args.no_party:
        party = parties()
        if args.everyday_party:
            party["locomo"] = CRD3_PARTY
        with_party(rows, party)
    known = build_entities(entities, args.names, args.seed)
    index = NameIndex(known)
    entity = entity_of(known)
    summary: dict[str, Any] = {
        "bench": "correction_stt",
        "known_names": args.names,
        "party": not args.no_party,
        "speaker": not args.no_speaker,
        "scene_turns": args.scene_turns,
        "skip_stage_directions": args.skip_stage_directions,
        "everyday_party": args.everyday_party,
    }
    if args.dump is not None:
        count = dump_outputs(rows, index, args, args.dump)
        print(f"{count} lines' corrections written to {args.dump}")
        print(json.dumps({"bench": "correction_stt", "dumped": count, "file": str(args.dump)}))
        return 0
    if args.latency_only:
        print(json.dumps({"bench": "correction_stt", "latency": latency(rows, index)}))
        return 0
    halves = {"all": rows} | {h: [r for r in rows if r["split"] == h] for h in ("tune", "heldout")}
    for label, subset in halves.items():
        result = score(subset, index, entity)
        print(
            f"== {label}: {result['utterances']} utterances, {result['misheard']} misheard names: "
            f"precision {result['precision']:.4f} recall {result['recall']:.4f} "
            f"({result['fixed']} fixed, {result['corrections']} corrections, "
            f"{result['neutral']} neutral); damage {result['damaged_words']} words in "
            f"{result['clean_words']} = {result['damage_per_10k']} per 10,000"
        )
        if label == args.split:
            for ex in result["wrong_examples"][: args.examples]:
                print("  wrong  ", ex[:220])
            for ex in result["missed_examples"][: args.examples]:
                print("  missed ", ex[:220])
        summary[label] = {k: v for k, v in result.items() if not k.endswith("examples")}
    lat = None if args.no_latency else latency(rows, index)
    if lat is not None:
        print(
            f"latency per utterance ({args.names} names): p50 {lat['p50_ms']} ms, p95 "
            f"{lat['p95_ms']} ms; CPU time p50 {lat['cpu_p50_ms']} ms, p95 {lat['cpu_p95_ms']} ms"
        )
        print(
            f"  each held-out line once, unseen (tune half warmed the caches): CPU p50 "
            f"{lat['unseen_cpu_p50_ms']} ms, p95 {lat['unseen_cpu_p95_ms']} ms; each line's "
            f"best round: CPU p50 {lat['best_cpu_p50_ms']} ms, p95 {lat['best_cpu_p95_ms']} ms"
        )
        summary["latency"] = lat
    if lat is not None and args.base is not None:
        rounds = compare_latency(args, args.base)
        for r in rounds:
            print(
                f"  {r['version']:4} run {r['run']}: CPU p50 {r['cpu_p50_ms']} p95 "
                f"{r['cpu_p95_ms']}; unseen p95 {r['unseen_cpu_p95_ms']}; best p50 "
                f"{r['best_cpu_p50_ms']} p95 {r['best_cpu_p95_ms']} ms"
            )
        summary["latency_vs_base"] = rounds
    synth = synthetic(args.data, args.synthetic_episodes, args.seed)
    if synth is not None:
        print(
            f"synthetic noise ({args.synthetic_episodes} CRD3 episodes, 2,000 names): precision "
            f"{synth['precision']:.4f} recall {synth['recall']:.4f} damage "
            f"{synth['damage_per_10k']} per 10,000"
        )
        summary["synthetic"] = synth
    held = summary["heldout"]
    summary["targets_met_heldout"] = {
        "precision": held["precision"] >= TARGETS["precision"],
        "recall": held["recall"] >= TARGETS["recall"],
        "damage": held["damage_per_10k"] <= TARGETS["damage_per_10k"],
    }
    if lat is not None:
        summary["targets_met_heldout"]["p95"] = (
            min(lat["p95_ms"], lat["cpu_p95_ms"]) <= TARGETS["p95_ms_2000"]
        )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
