"""Replay `memory.search_sessions`' turn ranking and packing offline, on the candidates
`bench/locomo.py --dump-candidates F.pkl` saved, to compare turn models without a database.

    python bench/replay_turns.py /tmp/cand.pkl              # current weights vs refits
    python bench/replay_turns.py /tmp/cand.pkl --extra session_hits,first_mention

The candidates (windows and their turns) do not depend on the turn model, so evidence recall
within the budget here is what the tool would score with each model. Each half (conversations
0-4, 5-9) is scored by weights fitted on the other half ("cross") and the current weights
("current"); extra candidate features (`EXTRAS`) are added to the fit by name. Last line one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import statistics
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from realtime.question_time import in_named_period, named_periods  # noqa: E402
from realtime.session_search import candidate_turns, passages  # noqa: E402
from realtime.session_search.scene import SCENE_MARK, within_tokens  # noqa: E402
from realtime.tools.search_sessions import results_tokens  # noqa: E402
from realtime.turn_ranking import (  # noqa: E402
    TURN_BIAS,
    TURN_WEIGHTS,
    lift_neighbours,
    turn_features,
)

STOP_WORDS = frozenset("what when where who which why how did does do is was were the a an in "
                       "on at of to and or for".split())

CATEGORIES = {0: "crd3_play", 1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}

Extra = Callable[[dict[str, Any], dict[int, dict[str, Any]], dict[int, int]], dict[int, float]]


def _session_of(q: dict[str, Any], origin: Mapping[int, int]) -> dict[int, str]:
    return {i: q["hits"][r][0].chunk.session_id for i, r in origin.items()}


def session_hits(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                 origin: dict[int, int]) -> dict[int, float]:
    """Fused score mass of the turn's session among the candidate windows (session
    relevance: an answer sits in a session the question is about)."""
    mass: dict[str, float] = {}
    for hit, score, _m in q["hits"]:
        mass[hit.chunk.session_id] = mass.get(hit.chunk.session_id, 0.0) + score
    top = max(mass.values()) if mass else 1.0
    sess = _session_of(q, origin)
    return {i: mass.get(sess[i], 0.0) / top for i in rows}


def first_mention(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                  origin: dict[int, int]) -> dict[int, float]:
    """1 for a turn whose similarity no candidate turn of an earlier session comes within 0.05
    of (the earliest telling of what it says), else 0."""
    sims = {i: r.get("similarity") for i, r in rows.items()}
    out = {}
    times = {i: r.get("spoken_at") for i, r in rows.items()}
    known = [(times[i], sims[i]) for i in rows if sims[i] is not None and times[i] is not None]
    for i in rows:
        s, t = sims[i], times[i]
        if s is None or t is None:
            out[i] = 0.0
            continue
        out[i] = float(not any(tt < t and ss >= s - 0.05 for tt, ss in known))
    return out


def window_methods(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                   origin: dict[int, int]) -> dict[int, float]:
    """Both legs found the turn's best window."""
    return {i: float(len(set(q["hits"][origin[i]][2])) > 1) for i in rows}


def named_period(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                 origin: dict[int, int]) -> dict[int, float]:
    """The turn was spoken in (or just after) a date the question names."""
    periods = named_periods(q["question"])
    return {i: float(in_named_period(r.get("spoken_at"), periods)) for i, r in rows.items()}


def session_best_gap(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                     origin: dict[int, int]) -> dict[int, float]:
    """The best similarity in the turn's session minus the best overall (session relevance
    by its best turn)."""
    sess = _session_of(q, origin)
    best: dict[str, float] = {}
    for i, r in rows.items():
        s = r.get("similarity")
        if s is not None:
            best[sess[i]] = max(best.get(sess[i], -1.0), float(s))
    top = max(best.values()) if best else 0.0
    return {i: best.get(sess[i], top) - top for i in rows}


_CAPITAL = re.compile(r"\b[A-Z][a-zA-Z'\-]+")


def question_names(question: str) -> set[str]:
    """Capitalised words of the question past its first word (names of people, places,
    things: "Kraghammer", "Caroline"), lower-cased, stop words out."""
    words = _CAPITAL.findall(question)[1:] if question[:1].isupper() else _CAPITAL.findall(
        question)
    return {w.lower().strip("'") for w in words} - set(STOP_WORDS)


def names_in_turn(q: dict[str, Any], rows: dict[int, dict[str, Any]],
                  origin: dict[int, int]) -> dict[int, float]:
    """Share of the question's names that the turn's text says (not who speaks it)."""
    names = question_names(q["question"])
    if not names:
        return dict.fromkeys(rows, 0.0)
    return {i: sum(bool(re.search(rf"\b{re.escape(n)}", str(r["text"]).lower())) for n in names)
            / len(names) for i, r in rows.items()}


_RETELLING = re.compile(
    r"\b(last (time|session|game|we left)|previously|left off|recap|as you (recall|remember))\b",
    re.I)


def retelling(q: dict[str, Any], rows: dict[int, dict[str, Any]],
              origin: dict[int, int]) -> dict[int, float]:
    """The turn retells something earlier ("last we left off", "previously", "remember
    when"): a recap, not the scene where it happened."""
    return {i: float(bool(_RETELLING.search(str(r["text"])))) for i, r in rows.items()}


EXTRAS: dict[str, Extra] = {
    "retelling": retelling,
    "names_in_turn": names_in_turn,
    "named_period": named_period,
    "session_best_gap": session_best_gap,
    "session_hits": session_hits,
    "first_mention": first_mention,
    "window_methods": window_methods,
}


def narrower_scene(q: dict[str, Any], windows: int, tokens: int) -> dict[str, Any]:
    """`q` as if searched with `scene_windows` = `windows` and `scene_tokens` = `tokens`
    (at most what its dump's recipe held): widened turns dropped from the other windows and
    trimmed to `tokens` on either side (nearest first)."""
    keep = {h.chunk.id for h, _s, _m in q["hits"][:windows]}
    turns = {}
    for cid, rows in q["turns"].items():
        own = [i for i, r in enumerate(rows) if not r.get(SCENE_MARK)]
        if not own:
            turns[cid] = rows
            continue
        lead, body, tail = rows[: own[0]], rows[own[0]: own[-1] + 1], rows[own[-1] + 1:]
        if cid not in keep:
            turns[cid] = body
            continue
        turns[cid] = (within_tokens(lead[::-1], tokens)[::-1] + body
                      + within_tokens(tail, tokens))
    return q | {"turns": turns}


def features(q: dict[str, Any], extras: list[str]) -> tuple[list[int], np.ndarray, Any]:
    rows, origin, links, whole = candidate_turns(q["hits"], q["turns"])
    base = turn_features(rows, origin, links, q["question"])
    more = [EXTRAS[name](q, rows, origin) for name in extras]
    ids = list(base)
    X = np.array([[base[i][n] for n in TURN_WEIGHTS] + [m[i] for m in more] for i in ids],
                 dtype=np.float64).reshape(len(ids), len(TURN_WEIGHTS) + len(more))
    return ids, X, (rows, origin, links)


def recall(q: dict[str, Any], scores: Mapping[int, float], budget: int) -> float:
    def scorer(rows: Any, origin: Any, links: Any, query: str) -> Mapping[int, float]:
        return scores

    # `budget` is the whole answer, as the tool counts it: its envelope is paid first
    out = passages(q["hits"], q["turns"], q["question"], results_tokens(budget, q["top_k"]),
                   limit=q["top_k"], scorer=scorer)
    shown = {i for r in out for i in r["source"].get("entry_ids", [])}
    return sum(g in shown for g in q["gold"]) / len(q["gold"])


def fit(X: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=c, max_iter=5000).fit((X - scaler.mean_) / scale, y)
    w = model.coef_[0] / scale
    return w, float(model.intercept_[0] - np.sum(model.coef_[0] * scaler.mean_ / scale))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("--extra", default="", help="comma-separated names of EXTRAS")
    ap.add_argument("--c", type=float, default=0.03)
    ap.add_argument("--budget", type=int, default=1500)
    ap.add_argument("--smooth", default="0",
                    help="neighbour lifts to compare, e.g. 0,1 (`turn_ranking.lift_neighbours`)")
    ap.add_argument("--split", type=int, default=5,
                    help="conversations below it are one half, the rest the other")
    ap.add_argument("--windows", type=int, default=0,
                    help="replay only the best N x top_k fused windows of each question (a dump "
                         "taken with the wide_candidates recipe replayed narrower; 0: all)")
    ap.add_argument("--scene", default="",
                    help="WINDOWS,TOKENS: replay a dump taken with the scene_probe recipe as if "
                         "widened less (0,0: not at all; `session_search/scene.py`)")
    ap.add_argument("--fit-set", default="",
                    help="conversations fitted on, e.g. 0-4,10-13 (the rest held out): for a "
                         "merged dump of several data sets; overrides --split")
    args = ap.parse_args()
    halves = {f"fit_0_{args.split - 1}": set(range(args.split)),
              f"held_out_{args.split}_9": set(range(args.split, 10))}
    if args.fit_set:
        fitted = {c for part in args.fit_set.split(",")
                  for a, _, b in [part.partition("-")] for c in range(int(a), int(b or a) + 1)}
        halves = {"fit": fitted, "held_out": set(range(1000)) - fitted}
    extras = [e for e in args.extra.split(",") if e]
    strengths = [float(a) for a in args.smooth.split(",")]
    for e in extras:
        if e not in EXTRAS:
            sys.exit(f"unknown extra feature {e!r}; known: {', '.join(EXTRAS)}")
    qs = pickle.loads(args.data.read_bytes())
    if args.windows:
        qs = [q | {"hits": q["hits"][: args.windows * q["top_k"]]} for q in qs]
    if args.scene:
        sw, st = (int(v) for v in args.scene.split(","))
        qs = [narrower_scene(q, sw, st) for q in qs]
    prepared = []
    for q in qs:
        ids, X, (_rows, _origin, links) = features(q, extras)
        gold = set(q["gold"])
        prepared.append((q, ids, X, np.array([i in gold for i in ids], dtype=np.int8), links))
    current = np.array(list(TURN_WEIGHTS.values()))
    out: dict[str, Any] = {"questions": len(qs), "extras": extras, "windows": args.windows,
                           "scene": args.scene}
    for half, convs in halves.items():
        test = [p for p in prepared if p[0]["conversation"] in convs]
        train = [p for p in prepared if p[0]["conversation"] not in convs]
        if not test:
            continue
        block: dict[str, Any] = {}
        models: dict[str, tuple[np.ndarray, float] | None] = {"current": None}
        if train and any(p[3].any() for p in train):
            models["cross"] = fit(np.vstack([p[2] for p in train]),
                                  np.concatenate([p[3] for p in train]), args.c)
            w, b = models["cross"]
            names = [*TURN_WEIGHTS, *extras]
            block["cross_weights"] = {n: round(float(v), 4) for n, v in zip(names, w,
                                                                            strict=True)}
            block["cross_bias"] = round(b, 4)
        for (name, model), a in ((m, a) for m in models.items() for a in strengths):
            rec: dict[int, list[float]] = {}
            for q, ids, X, _y, links in test:
                if model is None:
                    s = X[:, : len(current)] @ current + TURN_BIAS
                else:
                    s = X @ model[0] + model[1]
                scored = lift_neighbours(dict(zip(ids, s.tolist(), strict=True)), links, a)
                rec.setdefault(q["category"], []).append(recall(q, scored, args.budget))
            every = [v for vs in rec.values() for v in vs]
            if a:
                name = f"{name}_smooth_{a}"
            block[name] = {"recall": round(statistics.mean(every), 4), "by_category": {
                CATEGORIES.get(c, str(c)): round(statistics.mean(v), 4)
                for c, v in sorted(rec.items())}}
        out[half] = block
        print(half, json.dumps(block))
    coverage = [sum(g in set(ids) for g in q["gold"]) / len(q["gold"]) for q, ids, _X, _y, _l
                in prepared]
    out["gold_among_candidates"] = round(statistics.mean(coverage), 4) if coverage else None
    print(f"gold among the candidate turns: {out['gold_among_candidates']}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
