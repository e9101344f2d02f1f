"""Fit the turn model of `memory.search_sessions` (`realtime/turn_ranking.py`) per question:
a softmax over each question's candidate turns, not a yes/no per turn.

    python bench/locomo.py --no-prefetch --limit 5 --dump-candidates /tmp/loc04.pkl
    python bench/locomo.py --no-prefetch --skip 5 --dump-candidates /tmp/loc59.pkl
    python bench/crd3_play.py --episodes 4 --fit-episodes 2 --per-episode 40 \\
        --dump-candidates /tmp/crd.pkl
    python bench/fit_turn_listwise.py --fit /tmp/loc04.pkl --fit /tmp/crd.pkl:0-1 \\
        --check /tmp/loc04.pkl --check /tmp/loc59.pkl --check /tmp/crd.pkl:0-1 \\
        --check /tmp/crd.pkl:2-3

Packing reads the turns of one question in the order of their scores, so what the model must
get right is the order within a question, not whether a turn is evidence against every
other question's turns. A per-turn logistic fit spends its weights on telling questions apart
(a feature that is the same for all of a question's turns, such as "the question names a
speaker", moves every score alike and reorders nothing). This fit minimises, for each
question, minus the mean log softmax probability of its gold turns, with standardised
features and an L2 penalty; each question counts once, whatever its number of candidates,
times its data set's weight (`DUMP@WEIGHT`). The scores are then mapped to probabilities by
one slope and one bias (Platt scaling, on the first `--fit` set): the neighbour lift and the
per-token packing read probabilities, not just an order.

`--fit` / `--check`: a `--dump-candidates` pickle, optionally `:CONVERSATIONS` (e.g. `0-1`)
and `@WEIGHT`. Prints `TURN_WEIGHTS` / `TURN_BIAS` ready to paste, then the evidence recall
within 1,500 tokens of each `--check` set by the weights now in the code and by the fitted
ones (the replay of `bench/replay_turns.py`, neighbour lift included). Last line one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

Group = tuple[np.ndarray, np.ndarray]  # one question: features (turns x features), gold 0/1


def softmax_loss(w: np.ndarray, groups: Sequence[Group], weights: Sequence[float],
                 penalty: float) -> tuple[float, np.ndarray]:
    """Sum over questions of weight * -mean(log softmax of its gold turns), plus
    `penalty` / 2 * |w|^2; and its gradient. Questions without a gold candidate add nothing."""
    loss = 0.5 * penalty * float(w @ w)
    grad = penalty * w
    for (X, y), weight in zip(groups, weights, strict=True):
        gold = y > 0
        k = int(gold.sum())
        if not k:
            continue
        s = X @ w
        top = s.max()
        e = np.exp(s - top)
        log_z = top + np.log(e.sum())
        p = e / e.sum()
        loss += weight * (k * log_z - s[gold].sum()) / k
        grad = grad + weight * (k * (p @ X) - X[gold].sum(0)) / k
    return loss, grad


def fit_listwise(groups: Sequence[Group], weights: Sequence[float] | None = None,
                 penalty: float = 1.0) -> np.ndarray:
    """Raw-feature weights minimising `softmax_loss` on standardised features (the
    standardisation folded back in; a softmax needs no bias)."""
    from scipy.optimize import minimize

    every = np.vstack([X for X, _y in groups])
    mean, scale = every.mean(0), every.std(0)
    scale = np.where(scale > 0, scale, 1.0)
    standard = [((X - mean) / scale, y) for X, y in groups]
    weights = list(weights) if weights is not None else [1.0] * len(groups)
    found = minimize(softmax_loss, np.zeros(every.shape[1]), args=(standard, weights, penalty),
                     jac=True, method="L-BFGS-B", options={"maxiter": 1000})
    return found.x / scale


def calibrate(groups: Sequence[Group], w: np.ndarray) -> tuple[np.ndarray, float]:
    """`w` scaled and a bias added so that `X @ w + bias` is the log-odds of a turn being
    evidence (one-feature logistic regression on the scores, all candidate turns)."""
    from sklearn.linear_model import LogisticRegression

    scores = np.concatenate([X @ w for X, _y in groups])[:, None]
    gold = np.concatenate([y for _X, y in groups])
    model = LogisticRegression(C=1e4, max_iter=2000).fit(scores, gold)
    return w * float(model.coef_[0][0]), float(model.intercept_[0])


def parse_set(spec: str) -> tuple[Path, set[int] | None, float]:
    """"F.pkl:0-1@0.5" -> (path, conversations or None for all, weight)."""
    spec, _, weight = spec.partition("@")
    path, _, convs = spec.partition(":")
    chosen: set[int] | None = None
    if convs:
        chosen = set()
        for part in convs.split(","):
            lo, _, hi = part.partition("-")
            chosen.update(range(int(lo), int(hi or lo) + 1))
    return Path(path), chosen, float(weight or 1.0)


def load_set(spec: str, cache: dict[Path, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    path, chosen, _weight = parse_set(spec)
    if path not in cache:
        cache[path] = pickle.loads(path.read_bytes())
    return [q for q in cache[path] if chosen is None or q["conversation"] in chosen]


def main() -> None:
    from replay_turns import CATEGORIES, features, recall

    from realtime.turn_ranking import NEIGHBOUR_LIFT, TURN_BIAS, TURN_WEIGHTS, lift_neighbours

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--fit", action="append", required=True, help="DUMP[:CONVS][@WEIGHT]")
    ap.add_argument("--check", action="append", default=[], help="DUMP[:CONVS]")
    ap.add_argument("--penalty", type=float, default=1.0, help="L2 on standardised weights")
    ap.add_argument("--budget", type=int, default=1500)
    args = ap.parse_args()
    dumps: dict[Path, list[dict[str, Any]]] = {}
    prepared: dict[int, tuple[list[int], np.ndarray, Any]] = {}

    def prepare(qs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[int], np.ndarray,
                                                         Any]]:
        out = []
        for q in qs:
            if id(q) not in prepared:
                ids, X, (_rows, _origin, links) = features(q, [])
                prepared[id(q)] = (ids, X, links)
            out.append((q, *prepared[id(q)]))
        return out

    groups: list[Group] = []
    weights: list[float] = []
    first: list[Group] = []
    for n, spec in enumerate(args.fit):
        for q, ids, X, _links in prepare(load_set(spec, dumps)):
            gold = set(q["gold"])
            group = (X, np.array([i in gold for i in ids], dtype=np.float64))
            groups.append(group)
            weights.append(parse_set(spec)[2])
            if n == 0:
                first.append(group)
    w, bias = calibrate(first, fit_listwise(groups, weights, args.penalty))
    names = list(TURN_WEIGHTS)
    print("TURN_WEIGHTS = {")
    for name, value in zip(names, w, strict=True):
        print(f"    {name!r}: {value:.4f},")
    print("}")
    print(f"TURN_BIAS = {bias:.4f}")
    current = (np.array([TURN_WEIGHTS[n] for n in names]), TURN_BIAS)
    checks: dict[str, Any] = {}
    for spec in args.check:
        block: dict[str, Any] = {}
        for label, (weights_now, b) in (("current", current), ("fitted", (w, bias))):
            by_cat: dict[int, list[float]] = {}
            for q, ids, X, links in prepare(load_set(spec, dumps)):
                scores = lift_neighbours(dict(zip(ids, (X @ weights_now + b).tolist(),
                                                  strict=True)), links, NEIGHBOUR_LIFT)
                by_cat.setdefault(q["category"], []).append(recall(q, scores, args.budget))
            every = [v for vs in by_cat.values() for v in vs]
            block[label] = {"recall": round(statistics.mean(every), 4), "by_category": {
                CATEGORIES.get(c, str(c)): round(statistics.mean(v), 4)
                for c, v in sorted(by_cat.items())}}
        checks[spec] = block
        print(f"{spec}: current {block['current']['recall']} -> fitted "
              f"{block['fitted']['recall']}  {block['fitted']['by_category']}", flush=True)
    print(json.dumps({"bench": "fit_turn_listwise", "fit": args.fit, "penalty": args.penalty,
                      "weights": {n: round(float(v), 4) for n, v in zip(names, w, strict=True)},
                      "bias": round(bias, 4), "checks": checks}))


if __name__ == "__main__":
    # After the root: bench/realtime.py would shadow the `realtime` package.
    sys.path.append(str(ROOT / "bench"))
    main()
