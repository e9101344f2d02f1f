"""Build the real speech-to-text corpus for the correction bench: real lines, spoken, heard.

Lines with fantasy names come from CRD3 (its transcribers spelled the names right) and from the
demo campaign; everyday LoCoMo lines with no names measure damage. Each line is spoken by piper
(the bundled joe voice, deterministic, at a speaking rate drawn from a seeded generator) and
transcribed by faster-whisper tiny.en without hotwords, so every mishearing is the model's own.
Reference and transcript words are aligned; a known name whose transcript words differ from it
between two correctly heard neighbours is a real mishearing, with the reference name as gold.

    python bench/build_stt_corpus.py [--out DIR] [--crd3-lines N] [--locomo-lines N]
        [--crd3-plain-lines N] [--seed S]
    python bench/build_stt_corpus.py --realign OLD_DIR --out NEW_DIR
    python bench/build_stt_corpus.py --drop-stage-directions OLD_DIR --out NEW_DIR

Writes `corpus.jsonl` (one utterance a line) and `entities.json` under `--out` (default
$GLYPHOXA_HOME/stt-corpus, else .glyphoxa/stt-corpus). No audio is kept. Lines already in the
file are reused, so an interrupted build resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from correction import DEFAULT_DATA, collect_names, group_variants, load_lines  # noqa: E402

from glyphoxa_pipelines.correction import normalize, tokenize  # noqa: E402

LENGTH_SCALES = (0.85, 1.0, 1.2)
SCENE_TURNS = 40  # the turns before a line whose names make up its scene
DEMO = ROOT / "glyphoxa_pipelines" / "demo"


def default_out() -> Path:
    home = os.environ.get("GLYPHOXA_HOME")
    return (Path(home) if home else ROOT / ".glyphoxa") / "stt-corpus"


def split_of(line_id: str) -> str:
    """'tune' or 'heldout', from a hash of the line id: stable whatever else is sampled."""
    return "tune" if hashlib.sha1(line_id.encode()).digest()[0] % 2 == 0 else "heldout"


def name_pattern(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
    return re.compile(r"(?<![\w'’\-#@])(?:" + alternatives + r")(?![\w'’\-])")


def crd3_turns(crd3: Path) -> list[tuple[str, int, str, str]]:
    """(episode, turn number, speaker, line) for every CRD3 turn."""
    turns = []
    for path in sorted(crd3.glob("C1E*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for turn in data.get("TURNS", []):
            line = " ".join(u.strip() for u in turn.get("UTTERANCES", []) if u.strip())
            if line:
                speaker = ",".join(turn.get("NAMES") or [])
                turns.append((path.stem, int(turn.get("NUMBER", len(turns))), speaker, line))
    return turns


# A transcriber's note of what happened at the table, not what anyone said: "(all laugh)",
# "(clears throat)", "[inaudible]". Innermost first, so a nested note goes in passes.
STAGE_DIRECTION = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def drop_stage_directions(line: str) -> str:
    """`line` without its parenthesised or bracketed stage directions.

    Players don't say "(clears throat)"; spoken by the voice, Whisper hears it as words
    ("Clares") that the corrector may turn into a name, counted as damage a table never sees.
    """
    if not STAGE_DIRECTION.search(line):
        return line  # its spacing as written: only a line that loses a direction is respoken
    while True:
        stripped = STAGE_DIRECTION.sub(" ", line)
        if stripped == line:
            break
        line = stripped
    line = re.sub(r"\s+([,.!?;:])", r"\1", line)  # "sure (laughs)." -> "sure."
    return " ".join(line.split())


# a name-free table line long enough to be worth its 30 s Whisper window: a 6-word line costs
# about as much CPU as a 20-word one, and these lines are spoken only for their clean words
PLAIN_WORDS = (10, 40)


def crd3_row(
    turns: list[tuple[str, int, str, str]], k: int, spoken: str, pattern: re.Pattern[str]
) -> dict[str, Any]:
    """Turn `k` as a corpus row, spoken as `spoken`; its scene is the names said in the
    `SCENE_TURNS` turns before it, as the table had them."""
    episode, number, speaker, _ = turns[k]
    scene = {
        m.group()
        for _, _, _, before in turns[max(0, k - SCENE_TURNS) : k]
        for m in pattern.finditer(before)
    }
    return {
        "id": f"crd3:{episode}:{number}",
        "source": "crd3",
        "speaker": speaker,
        "reference": spoken,
        "scene": sorted(scene),
    }


def plain_crd3_lines(
    turns: list[tuple[str, int, str, str]], pattern: re.Pattern[str], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """CRD3 lines that name no known name (in-game talk and table talk alike), with the scene
    their table had: what the context rules see when nobody says a name, the damage count."""
    picks = []
    for k, (_, _, _, line) in enumerate(turns):
        spoken = drop_stage_directions(line)
        if PLAIN_WORDS[0] <= len(spoken.split()) <= PLAIN_WORDS[1] and not pattern.search(line):
            picks.append(crd3_row(turns, k, spoken, pattern))
    random.Random(f"{args.seed}:crd3-plain").shuffle(picks)
    return picks[: args.crd3_plain_lines]


def demo_entities() -> list[tuple[str, list[str]]]:
    data = yaml.safe_load((DEMO / "sample_campaign.yaml").read_text(encoding="utf-8"))
    return [(e["name"], list(e.get("aliases") or [])) for e in data.get("entities", [])]


def sample_lines(
    data: Path, names: list[str], demo_names: list[str], args: argparse.Namespace
) -> list[dict[str, Any]]:
    """The utterances to speak: id, source, speaker, reference text and scene names."""
    pattern = name_pattern(names)
    turns = crd3_turns(data / "crd3" / "cleaned")
    picks = []
    for k, (_, _, _, line) in enumerate(turns):
        words = len(line.split())
        # chosen by the line as transcribed, so a build picks the same lines as before stage
        # directions were dropped; a line that was only a stage direction is left out
        spoken = drop_stage_directions(line)
        if 6 <= words <= 30 and pattern.search(line) and spoken:
            picks.append(crd3_row(turns, k, spoken, pattern))
    # shuffled, then cut: a larger --crd3-lines keeps every line a smaller one chose
    random.Random(f"{args.seed}:crd3").shuffle(picks)
    out = picks[: args.crd3_lines] + plain_crd3_lines(turns, pattern, args)
    demo_pattern = name_pattern(demo_names)
    for path in sorted((DEMO / "sessions").glob("*.jsonl")):
        seen: set[str] = set()
        for k, raw in enumerate(path.read_text(encoding="utf-8").splitlines()):
            row = json.loads(raw)
            line = row["text"]
            if demo_pattern.search(line):
                out.append(
                    {
                        "id": f"demo:{path.stem}:{k}",
                        "source": "demo",
                        "speaker": row.get("speaker", ""),
                        "reference": line,
                        "scene": sorted(seen),
                    }
                )
            seen.update(m.group() for m in demo_pattern.finditer(line))
    everyday = []
    for sample in json.loads((data / "locomo" / "locomo10.json").read_text(encoding="utf-8")):
        conv = sample["conversation"]
        for key, turns_ in conv.items():
            if not key.startswith("session_") or not isinstance(turns_, list):
                continue
            for turn in turns_:
                text = turn.get("text", "")
                tokens = tokenize(text)
                # no capitalized word mid-sentence: no names for the corrector to keep
                if 6 <= len(tokens) <= 30 and not any(
                    t.title and not t.initial and t.text != "I" for t in tokens
                ):
                    everyday.append(
                        {
                            "id": f"locomo:{sample['sample_id']}:{turn['dia_id']}",
                            "source": "locomo",
                            "speaker": turn.get("speaker", ""),
                            "reference": text,
                            "scene": [],
                        }
                    )
    random.Random(f"{args.seed}:locomo").shuffle(everyday)
    out += everyday[: args.locomo_lines]
    for row in out:
        row["split"] = split_of(row["id"])
        row["length_scale"] = random.Random(f"{args.seed}:{row['id']}").choice(LENGTH_SCALES)
    # interleaved, so a build stopped early still holds every source
    out.sort(key=lambda row: hashlib.sha1(f"{args.seed}:{row['id']}".encode()).digest())
    return out


# What the TTS voice says for a reference token made only of punctuation (piper's joe voice:
# "&" is "and", "/" is "slash", "+" is "plus"); a mark not listed ("-", "--", "...") is not
# spoken, so the words on either side of it are neighbours in speech
SPOKEN_MARKS = {"&": "and", "/": "slash", "+": "plus", "%": "percent", "=": "equals", "@": "at"}


@dataclass(frozen=True)
class AlignToken:
    """A word, or a spoken punctuation mark, as the aligner compares them."""

    start: int
    end: int
    norm: str
    mark: bool  # a punctuation-only token ("&"): spoken, but no word a name is made of


def align_tokens(text: str) -> list[AlignToken]:
    """The words of `text` and, between them, its punctuation-only tokens that are spoken
    ("Geek & Sundry" is three tokens, as the voice says three words; "Vax - Vex" two)."""
    out = [AlignToken(t.start, t.end, t.norm, False) for t in tokenize(text)]
    for m in re.finditer(r"\S+", text):
        if not any(ch.isalnum() for ch in m.group()):
            spoken = SPOKEN_MARKS.get(m.group())
            if spoken is not None:
                out.append(AlignToken(m.start(), m.end(), spoken, True))
    out.sort(key=lambda t: t.start)
    return out


def align_names(reference: str, hypothesis: str, pattern: re.Pattern[str]) -> list[dict[str, Any]]:
    """Each name of the reference with the transcript span heard for it, when both neighbours
    were heard right (else it cannot be told which transcript words stand for the name).

    A spoken punctuation mark is a neighbour like a word ("&" heard as "and"). When one was
    heard otherwise ("geek in sundry"), a name whose own words were all heard, one after the
    other, still has a known span: the words themselves."""
    ref = align_tokens(reference)
    hyp = align_tokens(hypothesis)
    matcher = SequenceMatcher(None, [t.norm for t in ref], [t.norm for t in hyp], autojunk=False)
    mapped: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for d in range(block.size):
            mapped[block.a + d] = block.b + d
    spans = []
    for m in pattern.finditer(reference):
        inside = [k for k, t in enumerate(ref) if m.start() <= t.start < m.end()]
        if not inside:
            continue
        first, last = inside[0], inside[-1]
        left_ok = first == 0 or first - 1 in mapped
        right_ok = last + 1 >= len(ref) or last + 1 in mapped
        if left_ok and right_ok:
            lo = mapped[first - 1] + 1 if first > 0 else 0
            hi = mapped[last + 1] if last + 1 < len(ref) else len(hyp)
        elif (
            (left_ok or ref[first - 1].mark)
            and (right_ok or ref[last + 1].mark)
            and all(k in mapped for k in inside)
            and mapped[last] - mapped[first] == last - first
        ):
            lo, hi = mapped[first], mapped[last] + 1
        else:
            continue
        while lo < hi and hyp[lo].mark:
            lo += 1  # a mark the transcript wrote ("&") is not a word heard for the name
        while hi > lo and hyp[hi - 1].mark:
            hi -= 1
        if hi <= lo:
            continue  # nothing heard for the name: no word to correct
        start, end = hyp[lo].start, hyp[hi - 1].end
        heard = hypothesis[start:end]
        spans.append(
            {
                "name": m.group(),
                "hyp_start": start,
                "hyp_end": end,
                "heard": heard,
                "misheard": normalize(heard).replace(" ", "")
                != normalize(m.group()).replace(" ", ""),
            }
        )
    return spans


def realign(source: Path, out_dir: Path) -> dict[str, int]:
    """Rewrite the name labels of the corpus in `source` with today's `align_names` into
    `out_dir`, from the transcripts it stores: no audio, no new transcription, so the same
    mishearings are judged by the new aligner. Returns how many lines' labels changed, per half.
    """
    check_new_folder(source, out_dir, "--realign")
    patterns = name_patterns(json.loads((source / "entities.json").read_text(encoding="utf-8")))
    changed = {"tune": 0, "heldout": 0}
    rows = []
    for raw in (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        row = json.loads(raw)
        pattern = patterns.get(row["source"])
        names = align_names(row["reference"], row["hypothesis"], pattern) if pattern else []
        if names != row["names"]:
            changed[row["split"]] += 1
        rows.append(json.dumps(row | {"names": names}, ensure_ascii=False))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "entities.json").write_text(
        (source / "entities.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (out_dir / "corpus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return changed


# speaks a reference line at a speaking rate and transcribes it: (transcript, word confidences)
Hear = Callable[[str, float], tuple[str, list[float]]]


def name_patterns(entities: dict[str, Any]) -> dict[str, re.Pattern[str]]:
    """Each source's name pattern, from a corpus's `entities.json`."""
    return {
        source: name_pattern([n for canonical, aliases in groups for n in (canonical, *aliases)])
        for source, groups in (("crd3", entities["crd3"]), ("demo", entities["demo"]))
    }


def check_new_folder(source: Path, out_dir: Path, flag: str) -> None:
    if out_dir.resolve() == source.resolve():
        raise ValueError(f"{flag} writes a new corpus: --out {out_dir} is the source itself")
    if (out_dir / "corpus.jsonl").exists():
        raise ValueError(f"--out {out_dir} already holds a corpus.jsonl; name a new folder")


def redo_stage_directions(source: Path, out_dir: Path, hear: Hear) -> dict[str, int]:
    """Copy the corpus in `source` into `out_dir`, speaking and transcribing again only the
    lines whose reference held a stage direction, now without it (the rest keep their
    transcripts: rebuilding every line's audio costs an hour of CPU). A line that was nothing
    but a stage direction is left out. Returns how many lines were redone and dropped, per half.
    """
    check_new_folder(source, out_dir, "--drop-stage-directions")
    patterns = name_patterns(json.loads((source / "entities.json").read_text(encoding="utf-8")))
    counts = {"tune_redone": 0, "heldout_redone": 0, "tune_dropped": 0, "heldout_dropped": 0}
    rows = []
    for raw in (source / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        row = json.loads(raw)
        spoken = drop_stage_directions(row["reference"])
        if spoken != row["reference"]:
            if not spoken:
                counts[f"{row['split']}_dropped"] += 1
                continue
            text, confidences = hear(spoken, row["length_scale"])
            pattern = patterns.get(row["source"])
            row |= {
                "reference": spoken,
                "hypothesis": text,
                "word_confidences": [round(p, 4) for p in confidences],
                "names": align_names(spoken, text, pattern) if pattern else [],
            }
            counts[f"{row['split']}_redone"] += 1
        rows.append(json.dumps(row, ensure_ascii=False))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "entities.json").write_text(
        (source / "entities.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (out_dir / "corpus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--crd3-lines", type=int, default=320)
    parser.add_argument("--locomo-lines", type=int, default=160)
    parser.add_argument(
        "--crd3-plain-lines",
        type=int,
        default=0,
        help="CRD3 lines that name no known name (10-40 words), for the damage count",
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="speak only the first N lines")
    parser.add_argument(
        "--realign",
        type=Path,
        default=None,
        metavar="CORPUS",
        help="relabel the names of the corpus in this folder from its stored transcripts "
        "into --out (a new folder), without speaking or transcribing",
    )
    parser.add_argument(
        "--drop-stage-directions",
        type=Path,
        default=None,
        metavar="CORPUS",
        help="copy the corpus in this folder into --out (a new folder), speaking and "
        "transcribing again only its lines that held a stage direction, without it",
    )
    args = parser.parse_args(argv)
    if args.drop_stage_directions is not None:
        if args.out is None:
            parser.error("--drop-stage-directions needs --out, a new folder for the corpus")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech

        tts, stt = TextToSpeech(), SpeechToText(cpu_threads=args.threads)

        def hear(text: str, length_scale: float) -> tuple[str, list[float]]:
            audio = tts.synthesize(text, length_scale=length_scale)
            heard = stt.transcribe(audio.samples, audio.sample_rate)
            return heard.text, list(heard.word_confidences)

        counts = redo_stage_directions(args.drop_stage_directions, args.out, hear)
        print(f"lines spoken again without stage directions: {counts} -> {args.out}")
        print(json.dumps({"bench": "build_stt_corpus", "stage_directions": str(args.out)} | counts))
        return 0
    if args.realign is not None:
        if args.out is None:
            parser.error("--realign needs --out, a new folder for the relabelled corpus")
        changed = realign(args.realign, args.out)
        print(f"lines whose labels changed: {changed} -> {args.out / 'corpus.jsonl'}")
        print(json.dumps({"bench": "build_stt_corpus", "realigned": str(args.out)} | changed))
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from rich.progress import Progress

    from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech

    data = args.data or Path(os.environ.get("GLYPHOXA_SHARED_DATA") or DEFAULT_DATA)
    out_dir = args.out or default_out()
    out_dir.mkdir(parents=True, exist_ok=True)
    names = collect_names(load_lines(data / "crd3" / "cleaned", 8))
    group = group_variants(names)
    entities: dict[str, list[str]] = {}
    for name, canon in group.items():
        entities.setdefault(canon, [])
        if name != canon:
            entities[canon].append(name)
    demo = demo_entities()
    demo_names = [n for canonical, aliases in demo for n in (canonical, *aliases)]
    (out_dir / "entities.json").write_text(
        json.dumps({"crd3": sorted(entities.items()), "demo": demo}, indent=1), encoding="utf-8"
    )
    rows = sample_lines(data, names, demo_names, args)[: args.limit]
    corpus = out_dir / "corpus.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if corpus.exists():
        for raw in corpus.read_text(encoding="utf-8").splitlines():
            row = json.loads(raw)
            done[row["id"]] = row
    tts, stt = TextToSpeech(), SpeechToText(cpu_threads=args.threads)
    patterns = {"crd3": name_pattern(names), "demo": name_pattern(demo_names)}
    with corpus.open("a", encoding="utf-8") as fh, Progress() as progress:
        task = progress.add_task("speak and transcribe", total=len(rows))
        for row in rows:
            if row["id"] not in done:
                audio = tts.synthesize(row["reference"], length_scale=row["length_scale"])
                heard = stt.transcribe(audio.samples, audio.sample_rate)
                row["hypothesis"] = heard.text
                row["word_confidences"] = [round(p, 4) for p in heard.word_confidences]
                pattern = patterns.get(row["source"])
                row["names"] = align_names(row["reference"], heard.text, pattern) if pattern else []
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                fh.flush()
                done[row["id"]] = row
            progress.advance(task)
    kept = [done[r["id"]] for r in rows]
    misheard = sum(n["misheard"] for r in kept for n in r["names"])
    print(f"{len(kept)} utterances, {misheard} misheard names -> {corpus}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
