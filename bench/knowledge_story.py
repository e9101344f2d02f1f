"""Story bench: session summaries and "Previously on..." recaps on the eight CRD3 episodes.

Each episode is imported and chunked as the pipeline does (offline, no stored embeddings:
both sides get none), summarized and recapped by the code under test, and - with --base DIR,
a worktree of the commit before - by that code too, side by side in the same run (the base
runs in a child process with PYTHONPATH=DIR and the same harness). The code under test is
given who plays whom as read from the episodes before each one (the pipeline passes the
campaign graph's `played_by`; --session-cast-only leaves it out, for an ablation); the base's
pipeline passed none, so its side gets none.

Summaries: content-word ROUGE-1 recall of the wiki synopsis' story sections (pre-show,
announcements, the previous-episode recap, breaks, Q&A and afterwords left out) against two
baselines cut to the summary's own length, measured in this run: random sentences of the DM's
in-game narration, the pool the summary itself draws from (mean of 20 draws; `random_dm_all`
keeps the older pool of every DM sentence, rules calls and sponsor reads included), and the
first N words of DM narration (the largest of: from the transcript's start, from the DM's
"last we left off", from the in-game narration's start). Out-of-game sentences: summary
sentences the table-talk classifier calls table talk (speaker taken as the DM, or the "NAME:"
a line carries).
Recaps: words, cast names (speaker labels and the cast's full names), in-game names (the
synopsis' names, cast removed), the last scene (a recap sentence with >= 3 content words, at
least half of them in the last tenth of the session's narration), table lines quoted, broken
sentences, and read aloud: quotes, a sentence opening on he/she/it (after its connective), the
table's voice ("guys", "kind of", "Vex, they ..."). Tuning was done on C1E001/3/5/7;
C1E002/4/6/8 are held out, reported apart.

    PYTHONPATH=. .venv/bin/python bench/knowledge_story.py [--base DIR] [--data DIR] [--show EP]

The last line is one JSON object: {"bench": "knowledge_story", ...}.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
EPISODES = [f"C1E00{n}" for n in range(1, 9)]
TUNE = ["C1E001", "C1E003", "C1E005", "C1E007"]
HELD_OUT = ["C1E002", "C1E004", "C1E006", "C1E008"]
DM = "MATT"
CAMPAIGN = "Critical Role"
OUT_OF_STORY = ("pre-show", "announcements", "break", "q&a", "post-show", "afterword",
                "featured song", "recap", "previously on")
CAST_NAMES = """Matt Matthew Mercer Travis Willingham Laura Bailey Liam O'Brien Marisha Ray Sam
    Riegel Taliesin Jaffe Orion Acaba Ashley Johnson Zac Ivan Hector""".split()
STOP = set(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves also one two back get got go goes going gets like really well yeah okay oh
    would could them they're it's that's there's he's she's you're we're i'm don't can't""".split()
)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CAP = re.compile(r"\b[A-Z][a-z]+(?:['’][A-Za-z]+)?")
# Read aloud, a recap sentence that opens (after its connective) on he/she/it points at
# nobody the listener has heard of; the transcript's table voice ("you guys", "kind of",
# "Vex, you ...", a broken contraction like "dons't") is not a narrator's.
LEADS = re.compile(r"^(?:(?:at first|then|soon after|before long|later|and so|and|"
                   r"when we left them)\b,?\s*)+", re.I)
DANGLING = re.compile(r"^(?:he|she|it|his|her|its|him)\b", re.I)
SPOKEN = re.compile(r"\b(?:guys|by the way|kind of|sort of|okay|basically|essentially|"
                    r"literally|gonna|wanna|my god)\b|\b\w+s't\b", re.I)
VOCATIVE = re.compile(r"(?:^|,\s)[A-Z][\w']+, (?:they|our heroes|their|them)\b")  # "Vex, they"
SHOW_WORDS = {"Part", "Break", "Episode", "Pre", "Show", "Announcements", "Critical", "Role",
              "Geek", "Sundry", "Dungeons", "Dragons", "Twitch", "Thursday", "Previously"}


def content_words(text: str) -> list[str]:
    words = _WORD.findall(text.lower().replace("’", "'"))
    return [w.removesuffix("'s") for w in words if w not in STOP and len(w) > 2]


def rouge1_recall(reference: list[str], candidate: list[str]) -> float:
    if not reference:
        return 0.0
    cand = Counter(candidate)
    return sum(min(n, cand[w]) for w, n in Counter(reference).items()) / len(reference)


def synopsis(episode: dict[str, Any]) -> str:
    parts = []
    for section in episode["METADATA"].get("Synopsis", []):
        heading = section.get("heading", "").strip().lower()
        if any(heading.startswith(h) for h in OUT_OF_STORY):
            continue
        parts += [sub.get("content", "") for sub in section.get("content", [])]
    return "\n".join(parts)


def synopsis_names(text: str) -> set[str]:
    from wordfreq import zipf_frequency

    cast = set(CAST_NAMES)
    return {
        w for w in _CAP.findall(text)
        if w not in cast and w not in SHOW_WORDS and zipf_frequency(w.lower(), "en") < 3.5
    }


# ------------------------------------------------------------------ produce (runs per code root)


def produce(data: Path, episodes: list[str], campaign_cast: bool = False) -> dict[str, Any]:
    """Summaries and recaps by the code on sys.path (this tree or the base's).

    With `campaign_cast`, each summary is given who plays whom as read from the episodes
    before it (in order; never a later one), as the pipeline passes the campaign graph's
    `played_by` from earlier sessions; the recap's party stays the session's own."""
    from glyphoxa_pipelines.campaign.transcript_import import import_transcript
    from glyphoxa_pipelines.processing import recaps, summaries
    from glyphoxa_pipelines.processing.chunking import chunk_transcript
    from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder

    count_tokens = SentenceTransformerEmbedder().count_tokens
    try:  # the code under test maps players to characters from each session's own lines,
        # as the pipeline does (text_products.session_characters); the base cannot
        from glyphoxa_pipelines.processing.cast import infer_characters
        from glyphoxa_pipelines.processing.table_talk import TableLine
    except ImportError:
        infer_characters = None
    out: dict[str, Any] = {"characters": {}, "episodes": {}}
    recap_args = inspect.signature(recaps.recap_from_summary).parameters
    known: dict[str, str] = {}
    for ep in sorted(episodes):
        started = time.perf_counter()
        entries = import_transcript(data / "crd3" / "cleaned" / f"{ep}.json",
                                    dm_speakers={DM.lower()}).as_entries("cr", ep.lower())
        chunks = chunk_transcript(entries, count_tokens=count_tokens)
        t_chunk = time.perf_counter() - started
        started = time.perf_counter()
        extra = {"characters": dict(known)} if campaign_cast else {}
        summary = summaries.summarize_session(chunks, None, dm_names=[DM], **extra)
        t_summary = time.perf_counter() - started
        kwargs: dict[str, Any] = {"campaign_name": CAMPAIGN}
        if "characters" in recap_args and infer_characters is not None:
            mapping = infer_characters(
                [TableLine(e.speaker_name, e.text, e.speaker_role) for e in entries])
            out["characters"][ep] = mapping
            kwargs["characters"] = sorted(set(mapping.values()))
            for player, name in mapping.items():  # the campaign's reading, for later sessions
                known.setdefault(player, name)
        recap = recaps.recap_from_summary(summary, **kwargs)
        out["episodes"][ep] = {
            "method": summary.method,
            "summary": summary.summary,
            "key_points": summary.key_points,
            "recap": recap.text,
            "recap_method": recap.method,
            "chunk_s": round(t_chunk, 2),
            "summary_s": round(t_summary, 2),
        }
    return out


# ------------------------------------------------------------------ score (this tree's code)


def _episode_lines(data: Path, ep: str) -> tuple[dict[str, Any], list[Any]]:
    from glyphoxa_pipelines.processing.table_talk import TableLine

    episode = json.loads((data / "crd3" / "cleaned" / f"{ep}.json").read_text())
    lines = [
        TableLine(", ".join(t["NAMES"]), " ".join(u.strip() for u in t["UTTERANCES"]).strip(),
                  "dm" if t["NAMES"] == [DM] else "player")
        for t in episode["TURNS"]
    ]
    return episode, [ln for ln in lines if ln.text]


def score(data: Path, produced: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    from glyphoxa_pipelines.processing.chunking import split_sentences
    from glyphoxa_pipelines.processing.table_talk import (
        STORY_START,
        TableContext,
        TalkKind,
        classify_sentence,
        classify_transcript,
    )

    rows: dict[str, Any] = {}
    for ep, got in produced["episodes"].items():
        episode, lines = _episode_lines(data, ep)
        context = TableContext.from_lines(lines, extra_cast=CAST_NAMES)
        ref = content_words(synopsis(episode))
        summary_words = got["summary"].split()
        n = len(summary_words)
        ours = rouge1_recall(ref, content_words(got["summary"]))
        classified = classify_transcript(lines, context)
        narration = [c.text for c in classified if c.kind is TalkKind.NARRATION]
        dm_sentences = [s for ln in lines if ln.role == "dm" for s in split_sentences(ln.text)]
        random_r = _random_recall(ref, narration, n, seed)
        random_all = _random_recall(ref, dm_sentences, n, seed)
        dm_words = " ".join(ln.text for ln in lines if ln.role == "dm").split()
        start = next((i for i, ln in enumerate(lines)
                      if ln.role == "dm" and i < len(lines) / 4 and STORY_START.search(ln.text)), 0)
        story_words = " ".join(ln.text for ln in lines[start:] if ln.role == "dm").split()
        narration_words = " ".join(narration).split()
        lead = max(rouge1_recall(ref, content_words(" ".join(dm_words[:n]))),
                   rouge1_recall(ref, content_words(" ".join(story_words[:n]))),
                   rouge1_recall(ref, content_words(" ".join(narration_words[:n]))))
        out_of_game = []
        for point in got["key_points"]:
            m = re.match(r"^([A-Z][\w' ,]{0,40}):\s(.*)$", point)
            speaker, text = (m.group(1), m.group(2)) if m else (DM, point)
            for s in split_sentences(text):
                role = "dm" if speaker == DM else "player"
                if classify_sentence(s, speaker, context, role) is TalkKind.TABLE_TALK:
                    out_of_game.append(s)
        rows[ep] = {
            "summary_words": n,
            "rouge1": round(ours, 4),
            "random_dm": round(random_r, 4),
            "random_dm_all": round(random_all, 4),
            "lead_dm": round(lead, 4),
            "x_random": round(ours / random_r, 2) if random_r else None,
            "x_lead": round(ours / lead, 2) if lead else None,
            "out_of_game_sentences": len(out_of_game),
            "out_of_game_sample": out_of_game[:3],
            **_recap_checks(got["recap"], episode, narration, split_sentences),
        }
    return rows


def _random_recall(ref: list[str], pool: list[str], n: int, seed: int) -> float:
    """Mean recall of 20 draws of whole sentences from `pool`, cut to `n` words."""
    rng = random.Random(seed)
    got = []
    for _ in range(20):
        shuffled = pool[:]
        rng.shuffle(shuffled)
        picked, size = [], 0
        for s in shuffled:
            if size >= n:
                break
            picked.append(s)
            size += len(s.split())
        got.append(rouge1_recall(ref, content_words(" ".join(" ".join(picked).split()[:n]))))
    return sum(got) / len(got)


def _recap_checks(recap: str, episode: dict[str, Any], narration: list[str],
                  split_sentences: Any) -> dict[str, Any]:
    body = recap.split("\n", 1)[1] if "\n" in recap else recap  # the title is fixed text
    cast = sorted({c for c in CAST_NAMES if re.search(rf"\b{re.escape(c)}\b", body, re.I)})
    names = sorted(n for n in synopsis_names(synopsis(episode)) if n in body)
    tail_words = set(content_words(" ".join(narration[int(len(narration) * 0.9):])))
    last_scene = False
    for s in split_sentences(body):
        words = set(content_words(s))
        if len(words & tail_words) >= 3 and len(words & tail_words) >= 0.5 * len(words):
            last_scene = True
    sentences = split_sentences(" ".join(body.split()))
    broken = [s for s in sentences if "--" in s or not s.rstrip('"”’').endswith((".", "!", "?",
                                                                                  "…"))]
    quoted_table = [s for s in sentences
                    if re.search(r"\b[A-Z][a-z]+ declared\b|[\"“”]", s)]  # no speaker read aloud
    dangling = [s for s in sentences if DANGLING.match(LEADS.sub("", s))]
    spoken = [s for s in sentences if SPOKEN.search(s) or VOCATIVE.search(LEADS.sub("", s))]
    words = len(body.split())
    return {
        "recap_words": words,
        "recap_cast_names": cast,
        "recap_in_game_names": len(names),
        "recap_names_sample": names[:6],
        "recap_last_scene": last_scene,
        "recap_broken_sentences": len(broken),
        "recap_quotes_table": len(quoted_table),
        "recap_dangling_pronouns": len(dangling),
        "recap_spoken_fillers": len(spoken),
        "recap_read_sample": (dangling + spoken)[:3],
        "recap_ok": (150 <= words <= 250 and not cast and len(names) >= 3 and last_scene
                     and not broken and not quoted_table and not dangling and not spoken),
    }


def _means(rows: dict[str, Any], eps: list[str]) -> dict[str, Any]:
    got = [rows[e] for e in eps if e in rows]
    if not got:
        return {}

    def mean(key: str) -> float:
        return round(sum(r[key] for r in got) / len(got), 4)

    return {
        "rouge1": mean("rouge1"), "random_dm": mean("random_dm"), "lead_dm": mean("lead_dm"),
        "random_dm_all": mean("random_dm_all"),
        "x_random_all": round(mean("rouge1") / mean("random_dm_all"), 2),
        "x_random": round(mean("rouge1") / mean("random_dm"), 2),
        "x_lead": round(mean("rouge1") / mean("lead_dm"), 2),
        "min_x_random": min(r["x_random"] or 0 for r in got),
        "min_x_lead": min(r["x_lead"] or 0 for r in got),
        "out_of_game_sentences": sum(r["out_of_game_sentences"] for r in got),
        "recaps_ok": sum(r["recap_ok"] for r in got),
        "episodes": len(got),
    }


def _run_child(root: Path, data: Path, episodes: list[str],
               campaign_cast: bool = False) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as tmp:
        env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"}
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--produce", tmp.name,
             "--data", str(data), "--episodes", ",".join(episodes),
             *(["--campaign-cast"] if campaign_cast else [])],
            check=True, env=env, cwd=root,
        )
        return json.loads(Path(tmp.name).read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(
        os.environ.get("GLYPHOXA_SHARED_DATA", DEFAULT_DATA)))
    parser.add_argument("--base", type=Path, help="worktree of the code before, run side by side")
    parser.add_argument("--episodes", default=",".join(EPISODES))
    parser.add_argument("--show", default="", help="print these episodes' outputs (comma list)")
    parser.add_argument("--produce", help=argparse.SUPPRESS)
    parser.add_argument("--campaign-cast", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--session-cast-only", action="store_true",
                        help="the after side without the campaign's earlier cast (ablation)")
    args = parser.parse_args()
    episodes = [e for e in args.episodes.split(",") if e]
    if not (args.data / "crd3" / "cleaned" / f"{episodes[0]}.json").exists():
        print(f"CRD3 not found under {args.data}: nothing to measure")
        print(json.dumps({"bench": "knowledge_story", "skipped": "no data"}))
        return 0
    if args.produce:
        Path(args.produce).write_text(json.dumps(produce(args.data, episodes,
                                                         args.campaign_cast)))
        return 0
    # the base's pipeline passed no campaign cast to its summaries; this one does
    sides = {"after": _run_child(ROOT, args.data, episodes, not args.session_cast_only)}
    if args.base:
        sides = {"before": _run_child(args.base.resolve(), args.data, episodes), **sides}
    result: dict[str, Any] = {"bench": "knowledge_story", "load_1m": os.getloadavg()[0]}
    for name, produced in sides.items():
        rows = score(args.data, produced)
        print(f"== {name}: {produced['episodes'][episodes[0]]['method']} / "
              f"{produced['episodes'][episodes[0]]['recap_method']}; characters "
              f"{produced.get('characters')}")
        for ep, r in rows.items():
            print(f"{ep} words {r['summary_words']:4d} R1 {r['rouge1']:.3f} random "
                  f"{r['random_dm']:.3f} (x{r['x_random']}) lead {r['lead_dm']:.3f} "
                  f"(x{r['x_lead']}) ooG {r['out_of_game_sentences']} | recap "
                  f"{r['recap_words']}w cast {r['recap_cast_names']} names "
                  f"{r['recap_in_game_names']} last {r['recap_last_scene']} broken "
                  f"{r['recap_broken_sentences']} quotes {r['recap_quotes_table']} pronoun "
                  f"{r['recap_dangling_pronouns']} spoken {r['recap_spoken_fillers']} "
                  f"ok {r['recap_ok']}")
        result[name] = {"tune": _means(rows, TUNE), "held_out": _means(rows, HELD_OUT),
                        "all": _means(rows, episodes),
                        "summary_s_max": max(g["summary_s"] for g in
                                             produced["episodes"].values())}
        for ep in [e for e in args.show.split(",") if e]:
            got = produced["episodes"][ep]
            print(f"\n--- {name} {ep} summary ---\n{got['summary']}\n--- recap ---\n{got['recap']}")
            print("out-of-game:", rows[ep]["out_of_game_sample"])
            print("recap reads badly:", rows[ep]["recap_read_sample"])
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
