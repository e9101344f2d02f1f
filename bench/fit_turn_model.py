"""Fit the turn relevance model of `memory.search_sessions` (`realtime/turn_ranking.py`).

    python bench/locomo.py --dump-features /tmp/turns.npz    # candidates + gold labels
    python bench/fit_turn_model.py /tmp/turns.npz --train 0-4

Logistic regression (scikit-learn, standardised features, L2 with `--c`) on the candidate
turns of the training conversations; prints `TURN_WEIGHTS` / `TURN_BIAS` with the
standardisation folded in, ready to paste, and, on the held-out conversations, the share of
gold turns ranked within each question's top 50 (about what 1,500 tokens hold) by the fitted
model and by the weights now in the code. The end-to-end check is `bench/locomo.py` itself.
The weights in the code come from the per-question fit (`bench/fit_turn_listwise.py`); this
per-turn fit is the one they replaced, kept to compare with. Last line one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def conversations(spec: str) -> set[int]:
    """"0-4" or "0,2,5" -> conversation indexes."""
    out: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def top_share(scores: np.ndarray, y: np.ndarray, question: np.ndarray, top: int = 50) -> float:
    """Share of gold turns among each question's `top` best-scored candidates."""
    hit = total = 0
    for q in np.unique(question):
        m = question == q
        order = np.argsort(-scores[m], kind="stable")[:top]
        hit += int(y[m][order].sum())
        total += int(y[m].sum())
    return hit / total if total else 0.0


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    from realtime.turn_ranking import TURN_BIAS, TURN_WEIGHTS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("data", type=Path, help="the .npz written by bench/locomo.py --dump-features")
    ap.add_argument("--train", default="0-4", help="conversations to fit on (the rest: held out)")
    ap.add_argument("--c", type=float, default=0.03, help="inverse L2 strength")
    args = ap.parse_args()
    data = np.load(args.data)
    names = [str(n) for n in data["features"]]
    if names != list(TURN_WEIGHTS):
        sys.exit(f"{args.data}: features {names} differ from TURN_WEIGHTS {list(TURN_WEIGHTS)}")
    X, y, question, conv = data["X"], data["y"], data["question"], data["conversation"]
    train = np.isin(conv, sorted(conversations(args.train)))
    if not train.any() or not y[train].any():
        sys.exit(f"no gold turns among conversations {args.train} of {args.data}")
    scaler = StandardScaler().fit(X[train])
    model = LogisticRegression(C=args.c, max_iter=5000).fit(scaler.transform(X[train]), y[train])
    weights = model.coef_[0] / scaler.scale_
    bias = float(model.intercept_[0] - np.sum(model.coef_[0] * scaler.mean_ / scaler.scale_))
    print("TURN_WEIGHTS = {")
    for name, w in zip(names, weights, strict=True):
        print(f"    {name!r}: {w:.4f},")
    print("}")
    print(f"TURN_BIAS = {bias:.4f}")
    held = ~train
    current = X @ np.array([TURN_WEIGHTS[n] for n in names]) + TURN_BIAS
    fitted = X @ weights + bias
    summary = {
        "bench": "fit_turn_model",
        "train_conversations": args.train,
        "train_turns": int(train.sum()),
        "train_gold": int(y[train].sum()),
        "held_out_turns": int(held.sum()),
        "held_out_gold_in_top50_fitted": round(top_share(fitted[held], y[held], question[held]), 4)
        if held.any() else None,
        "held_out_gold_in_top50_current": round(top_share(current[held], y[held], question[held]),
                                                4) if held.any() else None,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
