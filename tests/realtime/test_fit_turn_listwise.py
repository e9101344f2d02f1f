"""`bench/fit_turn_listwise.py`: the per-question softmax fit of the turn model (pure numpy)."""

from __future__ import annotations

import numpy as np

from bench.fit_turn_listwise import calibrate, fit_listwise, parse_set, softmax_loss


def _questions(seed: int = 7, n: int = 40) -> list[tuple[np.ndarray, np.ndarray]]:
    """Questions of 30 candidate turns: feature 0 is higher on the gold turns, feature 1 is
    the same for all of a question's turns (and higher where the question has more gold),
    feature 2 is noise."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = np.zeros(30)
        y[rng.choice(30, size=int(rng.integers(1, 4)), replace=False)] = 1.0
        X = np.column_stack([y * 2.0 + rng.normal(size=30),
                             np.full(30, y.sum() + rng.normal()),
                             rng.normal(size=30)])
        out.append((X, y))
    return out


def test_the_gradient_is_the_loss_s_slope() -> None:
    groups = _questions(n=5)
    w = np.array([0.3, -0.2, 0.5])
    loss, grad = softmax_loss(w, groups, [1.0, 2.0, 1.0, 0.5, 1.0], 0.1)
    for j in range(3):
        step = np.zeros(3)
        step[j] = 1e-6
        up, _ = softmax_loss(w + step, groups, [1.0, 2.0, 1.0, 0.5, 1.0], 0.1)
        down, _ = softmax_loss(w - step, groups, [1.0, 2.0, 1.0, 0.5, 1.0], 0.1)
        assert abs((up - down) / 2e-6 - grad[j]) < 1e-4
    assert loss > 0


def test_the_fit_weighs_what_orders_a_question_and_ignores_what_does_not() -> None:
    groups = _questions()
    w = fit_listwise(groups, penalty=0.01)
    assert w[0] > 1.0  # the feature that marks the gold turns
    assert abs(w[1]) < 1e-6  # the same for every turn of a question: reorders nothing
    assert abs(w[2]) < 0.5 * w[0]
    # A question with no gold turn adds nothing to the loss.
    empty = (np.ones((4, 3)), np.zeros(4))
    assert softmax_loss(w, [empty], [1.0], 0.0)[0] == 0.0


def test_calibrated_scores_are_log_odds_in_the_same_order() -> None:
    groups = _questions()
    w = fit_listwise(groups, penalty=0.01)
    scaled, bias = calibrate(groups, w)
    X = np.vstack([X for X, _y in groups])
    assert np.array_equal(np.argsort(X @ w), np.argsort(X @ scaled + bias))
    gold = np.concatenate([y for _X, y in groups])
    p = 1.0 / (1.0 + np.exp(-(X @ scaled + bias)))
    assert abs(p.mean() - gold.mean()) < 0.01  # calibrated: mean probability = gold share


def test_a_set_names_its_dump_conversations_and_weight() -> None:
    assert parse_set("/tmp/crd.pkl:0-1,3@0.5") == (parse_set("/tmp/crd.pkl")[0], {0, 1, 3}, 0.5)
    assert parse_set("/tmp/loc.pkl")[1:] == (None, 1.0)
