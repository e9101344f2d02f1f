"""Evaluate transcript correction on a noisy corpus built from real CRD3 transcripts.

CRD3's human transcripts spell the fantasy names right, so they are the clean side: names are
collected from the transcripts themselves, a speech-to-text noise simulator (phonetic
respellings, names split into English-looking words, merged words, lost apostrophes and
capitals) injects errors, and the corrector must undo them without touching anything else.

    python bench/correction.py [--data DIR] [--episodes N] [--seed S]

Prints precision, recall, clean-text damage and per-utterance latency (p50/p95 for 20-word
utterances with 200 and 2,000 known names, padded with generated fantasy names); the last line
is one JSON object. Not a timed test: run it by hand or from CI's bench step.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from doublemetaphone import doublemetaphone  # noqa: E402
from rapidfuzz.distance import JaroWinkler  # noqa: E402
from wordfreq import top_n_list, zipf_frequency  # noqa: E402

from glyphoxa_pipelines.correction import NameIndex, correct, normalize, tokenize  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TARGETS = {"precision": 0.98, "recall": 0.85, "damage_per_10k": 1.0, "p95_ms_2000": 0.3}
WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")


# ---------------------------------------------------------------- corpus and names


def load_lines(crd3: Path, episodes: int) -> list[str]:
    """One line per turn (utterances joined with spaces), in episode order."""
    lines: list[str] = []
    for path in sorted(crd3.glob("C1E*.json"))[:episodes]:
        data = json.loads(path.read_text(encoding="utf-8"))
        for turn in data.get("TURNS", []):
            line = " ".join(u.strip() for u in turn.get("UTTERANCES", []) if u.strip())
            if line:
                lines.append(line)
    return lines


def collect_names(lines: list[str], min_count: int = 3) -> list[str]:
    """Proper names as the transcribers wrote them: words (and runs of words) that are
    capitalized in nearly every occurrence, including mid-sentence ones."""
    cap: Counter[str] = Counter()
    total: Counter[str] = Counter()
    mid: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    for line in lines:
        words = list(WORD.finditer(line.replace("’", "'")))
        run: list[str] = []
        for k, m in enumerate(words):
            w = m.group()
            if w.endswith("'s") and len(w) > 3:
                w = w[:-2]
            before = line[words[k - 1].end() : m.start()] if k else ""
            before = before.replace("'s", "")
            sentence_start = k == 0 or any(ch in before for ch in '.!?"“”:')
            key = w.lower()
            total[key] += 1
            upper_first = w[:1].isupper() and not w.isupper()
            if upper_first:
                cap[w] += 1
                if not sentence_start:
                    mid[w] += 1
            joinable = k and before == " "
            if upper_first and not sentence_start and len(w) > 1 and (joinable or not run):
                run.append(w)
            else:
                if len(run) > 1:
                    runs[" ".join(run)] += 1
                run = [w] if upper_first and not sentence_start and len(w) > 1 else []
        if len(run) > 1:
            runs[" ".join(run)] += 1
    names = []
    for w, n in cap.items():
        if (
            len(w) >= 3
            and n >= min_count
            and mid[w] >= 2
            and n >= 0.9 * total[w.lower()]
            and not w.isupper()
            and not w.lower().startswith(("i'", "i’"))
        ):
            names.append(w)
    single = set(names)
    for run, n in runs.items():
        parts = run.split()
        if n >= min_count and len(parts) <= 3 and all(p in single for p in parts):
            names.append(run)
    return sorted(set(names), key=lambda s: (s.lower(), s))


def group_variants(names: list[str]) -> dict[str, str]:
    """Spelling variants of one name in the transcripts ("Korren"/"Kohren", "Briarwood"/
    "Briarwoods") grouped as aliases of one entity, as a knowledge graph would hold them."""
    group: dict[str, str] = {}
    for name in names:
        key = normalize(name)
        for canon in dict.fromkeys(group.values()):
            other = normalize(canon)
            same = key.rstrip("s") == other.rstrip("s") or (
                doublemetaphone(key)[0] == doublemetaphone(other)[0]
                and JaroWinkler.similarity(key, other) >= 0.9
                and key[0] == other[0]
            )
            if same and name.count(" ") == canon.count(" "):
                group[name] = canon
                break
        else:
            group[name] = name
    return group


ONSETS = "b br c d dr f g gr h j k kr l m n p r s sh t th tr v vr z y w x st".split()
NUCLEI = "a e i o u a e i o ae ai ia ei ou y".split()
CODAS = ["", "", "", "n", "r", "l", "th", "s", "x", "k", "m", "nd", "rn", "st", "ll", "sh"]


def generated_names(count: int, taken: set[str], seed: int) -> list[str]:
    """Realistic fantasy names (syllables, some apostrophes, some two-word names) that are not
    English words and not already known."""
    rng = random.Random(seed)

    def word() -> str:
        syllables = rng.choice([2, 2, 2, 3, 3, 1])
        parts = [
            rng.choice(ONSETS + [""]) + rng.choice(NUCLEI) + rng.choice(CODAS)
            for _ in range(syllables)
        ]
        if syllables > 1 and rng.random() < 0.12:
            parts[0] += "'"
        return "".join(parts).capitalize()

    out: list[str] = []
    seen = {normalize(t) for t in taken}
    while len(out) < count:
        name = word() if rng.random() < 0.75 else f"{word()} {word()}"
        if any(len(normalize(p)) < 3 or zipf_frequency(p, "en") > 0 for p in name.split()):
            continue
        if normalize(name) in seen:
            continue
        seen.add(normalize(name))
        out.append(name)
    return out


# ---------------------------------------------------------------- noise simulator

# Spellings that sound the same in English: what ASR writes when it does not know a name.
# fmt: off
RESPELL = [
    (r"ph", "f"), (r"ck", "k"), (r"c(?=[aou])", "k"), (r"k(?=[aou])", "c"), (r"x", "ks"),
    (r"ks", "x"), (r"x$", "cks"), (r"qu", "kw"), (r"(?<=[a-z])y(?![aeiou])", "i"),
    (r"(?<=[a-z])i(?![aeiou])", "y"), (r"ee", "ea"), (r"ea", "ee"), (r"ie", "ee"),
    (r"ae", "ay"), (r"ai", "ay"), (r"ay", "ai"), (r"ey", "ay"), (r"ll", "l"),
    (r"(?<=[aeiou])l(?=[aeiou])", "ll"), (r"ss", "s"), (r"tt", "t"), (r"rr", "r"), (r"nn", "n"),
    (r"mm", "m"), (r"(?<=[aeiou])([tnmr])(?=[aeiou])", r"\1\1"), (r"oo", "u"), (r"ou", "ow"),
    (r"an$", "en"), (r"en$", "an"), (r"on$", "in"), (r"er$", "ar"), (r"or$", "er"),
    (r"ia", "ea"), (r"ah$", "a"), (r"a$", "ah"), (r"'", ""), (r"(?<=[a-z])h$", ""),
    (r"z", "s"), (r"s$", "z"), (r"th$", "the"), (r"c(?=[ei])", "s"), (r"(?<=[aeiou])s$", "ss"),
]
# fmt: on
VOWELS = "aeiou"


@dataclass(frozen=True)
class Injected:
    start: int
    end: int
    name: str
    noisy: str
    kind: str


class NoiseSimulator:
    """Speech-to-text errors on names, the way ASR makes them (not tuned to any corpus)."""

    def __init__(self, names: list[str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.known = {normalize(n) for n in names}
        by_code: dict[str, list[str]] = {}
        for w in top_n_list("en", 30000):
            if w.isalpha() and len(w) >= 3 and any(v in w for v in "aeiouy"):
                by_code.setdefault(doublemetaphone(w)[0], []).append(w)
        self.english_by_code = by_code

    @staticmethod
    def _ordinary(name: str) -> bool:
        return all(zipf_frequency(p, "en") >= 3.0 for p in name.split())

    def lost_case(self, name: str) -> str | None:
        if self._ordinary(name):
            return None  # "pike" for "Pike" cannot be told from the word: not an error to fix
        out = re.sub(r"['’\-]", "", name.lower())
        return out if out != name else None

    def respell(self, name: str) -> str | None:
        """Same sounds, other letters: "Keyleth" → "Kayleth", "Vax'ildan" → "vaxilden"."""
        base = name.lower() if self.rng.random() < 0.6 else name
        for _ in range(8):
            out = base
            for _ in range(self.rng.choice([1, 1, 2])):
                # unstressed vowels (after the first syllable) are often heard wrong
                first_vowel = next((i for i, ch in enumerate(out) if ch.lower() in VOWELS), 0)
                later = [
                    i
                    for i, ch in enumerate(out)
                    if ch.lower() in VOWELS
                    and i > first_vowel + 1
                    and out[i - 1].lower() not in VOWELS
                ]
                options = [(p, r) for p, r in RESPELL if re.search(p, out, flags=re.IGNORECASE)]
                if later and self.rng.random() < 0.3:
                    i = self.rng.choice(later)
                    out = out[:i] + self.rng.choice(VOWELS) + out[i + 1 :]
                elif options:
                    pattern, repl = self.rng.choice(options)
                    matches = list(re.finditer(pattern, out, flags=re.IGNORECASE))
                    m = self.rng.choice(matches)
                    out = out[: m.start()] + m.expand(repl) + out[m.end() :]
            key = normalize(out)
            if key and key != normalize(name) and key not in self.known:
                return out
        return None

    def _english_like(self, piece: str) -> str | None:
        """An English word that sounds like `piece` (same Double Metaphone code, similar)."""
        options = self.english_by_code.get(doublemetaphone(piece)[0], [])
        options = [
            w
            for w in options
            if abs(len(w) - len(piece)) <= 2 and JaroWinkler.similarity(w, piece) >= 0.75
        ]
        return max(options, key=lambda w: JaroWinkler.similarity(w, piece)) if options else None

    def split_english(self, name: str) -> str | None:
        """ "Eldrinax" → "elder nacks": a name heard as words, at least one of them English."""
        if " " in name:
            return None
        word = re.sub(r"['’\-]", "", name.lower())
        if len(word) < 6:
            return None
        vowels = VOWELS + "y"
        # syllable boundaries: V|CV or VC|CV, each side at least 3 letters with a vowel
        cuts = [
            i
            for i in range(3, len(word) - 2)
            if word[i] not in vowels
            and word[i + 1] in vowels
            and any(v in word[:i] for v in vowels)
        ]
        self.rng.shuffle(cuts)
        for cut in cuts:
            pieces = [word[:cut], word[cut:]]
            english = [self._english_like(p) for p in pieces]
            if not any(english):
                continue
            out = [
                e or (self.respell(p) or p).lower() for e, p in zip(english, pieces, strict=True)
            ]
            noisy = " ".join(out)
            if normalize(noisy) not in self.known:
                return noisy
        return None

    def merge(self, name: str) -> str | None:
        if " " not in name:
            return None
        parts = name.split()
        out = parts[0] + "".join(p.lower() for p in parts[1:])
        if self.rng.random() < 0.5:
            out = out.lower()
        return out

    def noisy(self, name: str) -> tuple[str, str] | None:
        if self._ordinary(name):
            return None  # ASR writes ordinary words ("Pike", "Lord") as words: nothing to fix
        kinds = ["respell", "respell", "split", "split", "lost_case", "merge"]
        self.rng.shuffle(kinds)
        for kind in kinds:
            out = {
                "respell": self.respell,
                "split": self.split_english,
                "lost_case": self.lost_case,
                "merge": self.merge,
            }[kind](name)
            if out and out != name:
                return out, kind
        return None


def inject(
    line: str, pattern: re.Pattern[str], sim: NoiseSimulator, rate: float
) -> tuple[str, list[Injected]]:
    """The line with some name occurrences replaced by noisy versions."""
    out: list[str] = []
    injected: list[Injected] = []
    pos = 0
    for m in pattern.finditer(line):
        if sim.rng.random() >= rate:
            continue
        result = sim.noisy(m.group())
        if result is None:
            continue
        noisy, kind = result
        out.append(line[pos : m.start()])
        start = sum(len(p) for p in out)
        out.append(noisy)
        injected.append(Injected(start, start + len(noisy), m.group(), noisy, kind))
        pos = m.end()
    out.append(line[pos:])
    return "".join(out), injected


# ---------------------------------------------------------------- evaluation


def evaluate(
    lines: list[str], names: list[str], group: dict[str, str], index: NameIndex, seed: int
) -> dict:
    """Inject errors into the CRD3 lines, correct every line, score against the clean side."""
    sim = NoiseSimulator(names, seed)
    ordered = sorted(names, key=len, reverse=True)
    alternatives = "|".join(map(re.escape, ordered))
    pattern = re.compile(r"(?<![\w'’\-#@])(?:" + alternatives + r")(?![\w'’\-])")
    right = wrong = fixed = errors = 0
    clean_words = damaged = respelled = 0
    by_kind: Counter[str] = Counter()
    fixed_kind: Counter[str] = Counter()
    wrong_examples: list[str] = []
    missed_examples: list[str] = []
    for line in lines:
        noisy, injected = inject(line, pattern, sim, rate=0.5)
        result = correct(noisy, index)
        if not injected:
            clean_words += len(tokenize(line))
            for c in result.corrections:
                words = max(1, len(tokenize(c.original)))
                damaged += words
                if normalize(c.original) != normalize(c.replacement):
                    respelled += words  # not only case, spacing or apostrophes
                wrong += 1
                wrong_examples.append(f"clean: {c.original!r} -> {c.replacement!r} | {line}")
            continue
        errors += len(injected)
        spans = {(e.start, e.end): e for e in injected}
        hit: set[tuple[int, int]] = set()
        for c in result.corrections:
            e = spans.get((c.start, c.end))
            if e is not None and group.get(c.replacement, "") == group[e.name]:
                right += 1
                hit.add((c.start, c.end))
            else:
                wrong += 1
                wrong_examples.append(f"noisy: {c.original!r} -> {c.replacement!r} | {noisy}")
        for e in injected:
            by_kind[e.kind] += 1
            if (e.start, e.end) in hit:
                fixed += 1
                fixed_kind[e.kind] += 1
            else:
                missed_examples.append(f"{e.kind}: {e.noisy!r} (for {e.name!r})")
    corrections = right + wrong
    return {
        "precision": round(right / corrections, 4) if corrections else 1.0,
        "recall": round(fixed / errors, 4) if errors else 0.0,
        "injected": errors,
        "corrections": corrections,
        "clean_words": clean_words,
        "damaged_words": damaged,
        "damage_per_10k": round(damaged / clean_words * 10_000, 3) if clean_words else 0.0,
        "respelled_words": respelled,
        "respelled_per_10k": round(respelled / clean_words * 10_000, 3) if clean_words else 0.0,
        "recall_by_kind": {k: round(fixed_kind[k] / n, 3) for k, n in sorted(by_kind.items())},
        "wrong_examples": wrong_examples,
        "missed_examples": missed_examples,
    }


def utterances(lines: list[str], size: int = 20) -> list[str]:
    """20-word utterances cut from the corpus (word spans of the original lines)."""
    out = []
    for line in lines:
        words = list(re.finditer(r"\S+", line))
        for k in range(0, len(words) - size + 1, size):
            out.append(line[words[k].start() : words[k + size - 1].end()])
    return out


def latency(utts: list[str], index: NameIndex, warmup: int = 300) -> dict:
    """Per-utterance time of `correct`, wall clock and thread CPU time.

    CPU time is reported too because shared machines preempt: wall-clock tails there measure
    the neighbours, CPU time measures this code.
    """
    for u in utts[:warmup]:
        correct(u, index)
    wall, cpu = [], []
    for u in utts[warmup:]:
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        correct(u, index)
        cpu.append((time.thread_time_ns() - c0) / 1e6)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
    return latency_summary(wall, cpu)


def latency_summary(wall: list[float], cpu: list[float]) -> dict[str, Any]:
    """Median, p95 and max of per-utterance wall time, and median / p95 of its CPU time (ms):
    CPU time is what a loaded shared machine distorts least."""
    wall, cpu = sorted(wall), sorted(cpu)

    def pct(values: list[float], q: float) -> float:
        return round(values[int(q * (len(values) - 1))], 4)

    return {
        "utterances": len(wall),
        "p50_ms": pct(wall, 0.5),
        "p95_ms": pct(wall, 0.95),
        "max_ms": round(wall[-1], 4),
        "cpu_p50_ms": pct(cpu, 0.5),
        "cpu_p95_ms": pct(cpu, 0.95),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="shared data folder")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--examples", type=int, default=10, help="wrong/missed cases to show")
    args = parser.parse_args(argv)
    data = args.data or Path(os.environ.get("GLYPHOXA_SHARED_DATA") or DEFAULT_DATA)
    crd3 = data / "crd3" / "cleaned"
    if not crd3.is_dir() or not any(crd3.glob("C1E*.json")):
        print(f"CRD3 not found under {crd3}: skipping the correction bench")
        print(json.dumps({"bench": "correction", "skipped": True, "reason": f"no {crd3}"}))
        return 0
    lines = load_lines(crd3, args.episodes)
    names = collect_names(lines)
    group = group_variants(names)
    entities: dict[str, list[str]] = {}
    for name, canon in group.items():
        entities.setdefault(canon, [])
        if name != canon:
            entities[canon].append(name)
    crd3_entities: list[tuple[str, list[str]]] = list(entities.items())
    pad200 = generated_names(max(0, 200 - len(names)), set(names), args.seed)
    pad2000 = pad200 + generated_names(
        2000 - len(names) - len(pad200), set(names + pad200), args.seed + 1
    )
    print(f"{len(lines)} CRD3 turns, {sum(len(tokenize(x)) for x in lines)} words")
    print(
        f"{len(names)} names ({len(crd3_entities)} entities) collected from the transcripts, "
        f"e.g. {names[:12]}"
    )
    summary: dict = {"bench": "correction", "turns": len(lines), "crd3_names": len(names)}
    utts = utterances(lines)
    for label, padding in (("200", pad200), ("2000", pad2000)):
        known = crd3_entities + [(p, []) for p in padding]
        t0 = time.perf_counter()
        index = NameIndex(known)
        build_ms = (time.perf_counter() - t0) * 1000
        quality = evaluate(lines, names, group, index, args.seed)
        lat = latency(utts, index)
        print(
            f"\n== {len(names) + len(padding)} known names, {len(known)} entities "
            f"(index built in {build_ms:.0f} ms)"
        )
        print(
            f"precision {quality['precision']:.4f}  recall {quality['recall']:.4f}  "
            f"({quality['injected']} injected errors, {quality['corrections']} corrections)"
        )
        print(f"recall by kind: {quality['recall_by_kind']}")
        print(
            f"clean-text damage: {quality['damaged_words']} words in {quality['clean_words']} "
            f"= {quality['damage_per_10k']} per 10,000 (respelled, not just recased/joined: "
            f"{quality['respelled_words']} = {quality['respelled_per_10k']} per 10,000)"
        )
        print(
            f"latency per 20-word utterance: p50 {lat['p50_ms']} ms, p95 {lat['p95_ms']} ms, "
            f"max {lat['max_ms']} ms; CPU time p50 {lat['cpu_p50_ms']} ms, "
            f"p95 {lat['cpu_p95_ms']} ms ({lat['utterances']} utterances)"
        )
        for ex in quality["wrong_examples"][: args.examples]:
            print("  wrong  ", ex[:200])
        for ex in quality["missed_examples"][: args.examples]:
            print("  missed ", ex[:200])
        summary[f"names_{label}"] = {
            "known_names": len(names) + len(padding),
            **{k: v for k, v in quality.items() if not k.endswith("examples")},
            "latency": lat,
            "index_build_ms": round(build_ms, 1),
        }
    big = summary["names_2000"]
    summary["targets_met"] = {
        "precision": big["precision"] >= TARGETS["precision"],
        "recall": big["recall"] >= TARGETS["recall"],
        "damage": big["damage_per_10k"] <= TARGETS["damage_per_10k"],
        "p95": big["latency"]["p95_ms"] <= TARGETS["p95_ms_2000"],
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
