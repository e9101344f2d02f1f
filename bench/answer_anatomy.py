"""Where `memory.search_sessions`' budget goes, replayed on stored candidates: the characters of
each packed answer by part (the turns' words, speaker names, line breaks, `…` lines, each
citation's session, time, entry ids and score, the JSON keys and punctuation, the answer's
envelope), and where the gold turns went (shown, never a candidate, a candidate packed out,
with its place in the packing order).

    python bench/answer_anatomy.py /tmp/fit.pkl     # a `bench/locomo.py --dump-candidates` dump
    python bench/answer_anatomy.py /tmp/crd3.pkl    # or `bench/crd3_play.py --dump-candidates`

The packing replayed is this checkout's (`session_search.passages`, the tool's budget), so the
figures are the tool's on the dump's candidates. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from realtime.session_search import GAP, candidate_turns, passages, turn_chars  # noqa: E402
from realtime.session_search.config import SESSION_SEARCH  # noqa: E402
from realtime.session_search.packing import json_chars, packing_order, turn_line  # noqa: E402
from realtime.tools.results import (  # noqa: E402
    CHARS_PER_TOKEN,
    RESULT_SEPARATOR_CHARS,
    envelope_chars,
    reader_chars,
)
from realtime.tools.search_sessions import NAME, results_tokens  # noqa: E402
from realtime.turn_ranking import turn_scores  # noqa: E402

BUDGET_TOKENS = 1500


def anatomy(result: Mapping[str, Any]) -> dict[str, int]:
    """A session result's characters as sent (`reader_chars`, its separator included) by
    part; the parts sum to the whole ("keys" is what is left: keys, quotes, brackets)."""
    src = result.get("source") or {}
    lines = str(result["text"]).split("\n")
    gaps = sum(line == GAP for line in lines)
    speakers = sum(json_chars(line.split(": ", 1)[0]) + 2 for line in lines
                   if line != GAP and ": " in line)
    parts = {
        "words": json_chars(str(result["text"])) - 2 * (len(lines) - 1) - speakers
        - gaps * len(GAP),
        "speakers": speakers,
        "line_breaks": 2 * (len(lines) - 1),
        "gap_lines": gaps * len(GAP),
        "session_id": len(json.dumps(src.get("session_id"), ensure_ascii=False)),
        "when": len(json.dumps(src.get("when"))),
        "entry_ids": len(json.dumps(src.get("entry_ids", []))),
        "score": len(json.dumps(result.get("score"))),
    }
    parts["keys"] = reader_chars(result) - sum(parts.values())
    return parts


def gold_places(q: Mapping[str, Any], shown: set[int]) -> tuple[list[int], int, int]:
    """Each packed-out gold turn's place in the packing order, the gold turns that were no
    candidate, and the place of the last turn packed."""
    rows, origin, links, whole = candidate_turns(q["hits"], q["turns"])
    final = turn_scores(rows, origin, links, q["question"])
    costs = {i: -(-turn_chars(turn_line(rows[i]), i) // CHARS_PER_TOKEN) for i in final
             if i not in whole}
    costs |= {i: BUDGET_TOKENS for i in whole}  # a window without turns (rare), as its text
    order = packing_order(final, costs, origin, SESSION_SEARCH.cost_exponent)
    place = {i: k for k, i in enumerate(order)}
    out = [place[g] for g in q["gold"] if g not in shown and g in place]
    missing = sum(g not in place for g in q["gold"])
    return out, missing, max((place[i] for i in shown if i in place), default=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("dump", type=Path, help="a --dump-candidates .pkl")
    args = ap.parse_args()
    questions = pickle.loads(args.dump.read_bytes())
    parts: dict[str, list[int]] = {}
    n_results, n_turns, last, packed_out = [], [], [], []
    gold = shown_gold = missing = 0
    for q in questions:
        out = passages(q["hits"], q["turns"], q["question"],
                       results_tokens(BUDGET_TOKENS, q["top_k"]), limit=q["top_k"])
        whole: dict[str, int] = {"envelope": envelope_chars(NAME, q["top_k"])
                                 - RESULT_SEPARATOR_CHARS}
        for r in out:
            for k, v in anatomy(r).items():
                whole[k] = whole.get(k, 0) + v
        for k, v in whole.items():
            parts.setdefault(k, []).append(v)
        shown = {i for r in out for i in r["source"].get("entry_ids", [])}
        n_results.append(len(out))
        n_turns.append(len(shown))
        places, gone, end = gold_places(q, shown)
        packed_out += places
        last.append(end)
        gold += len(q["gold"])
        shown_gold += sum(g in shown for g in q["gold"])
        missing += gone
    total = statistics.mean(sum(v[i] for v in parts.values()) for i in range(len(questions)))
    share = {k: round(statistics.mean(v) / total, 4) for k, v in parts.items()}
    print(f"{len(questions)} questions, {total:.0f} characters an answer on average")
    for k, s in sorted(share.items(), key=lambda kv: -kv[1]):
        print(f"  {k:12} {statistics.mean(parts[k]):7.1f}  {s:.3f}")
    quant = np.percentile(packed_out, [25, 50, 75]).tolist() if packed_out else []
    print(f"results {statistics.mean(n_results):.2f}, turns {statistics.mean(n_turns):.2f} "
          f"an answer; last turn packed at place {statistics.median(last)} (median)")
    print(f"gold turns {gold}: shown {shown_gold / gold:.3f}, never a candidate "
          f"{missing / gold:.3f}, packed out {len(packed_out) / gold:.3f} "
          f"(place in packing order, quartiles {quant})")
    print(json.dumps({"bench": "answer_anatomy", "questions": len(questions),
                      "answer_chars_mean": round(total, 1), "share": share,
                      "results_mean": round(statistics.mean(n_results), 2),
                      "turns_mean": round(statistics.mean(n_turns), 2),
                      "gold_shown": round(shown_gold / gold, 4),
                      "gold_not_candidate": round(missing / gold, 4),
                      "gold_packed_out": round(len(packed_out) / gold, 4),
                      "packed_out_place_quartiles": quant,
                      "last_packed_place_median": statistics.median(last)}))


if __name__ == "__main__":
    main()
