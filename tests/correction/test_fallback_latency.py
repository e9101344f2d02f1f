"""The spelling fallback's pre-check, with the names' word-count gates kept per letter and
word count, must answer as the gates and the search over every name of the letter would."""

from __future__ import annotations

import math
import random

from rapidfuzz import process
from rapidfuzz.distance import JaroWinkler

from glyphoxa_pipelines.correction import CorrectionConfig, NameIndex
from glyphoxa_pipelines.correction.name_index import spelling_key
from glyphoxa_pipelines.correction.window_scoring import spelling_fallback_possible

LETTERS = "aeioubdgklmnrstvz"


def _reference(index: NameIndex, joined: str, n: int, cfg: CorrectionConfig) -> bool:
    """Some name of the window's letter passes the gates on words and lengths as written
    out here and is spelled within `fuzzy_threshold` (by the same search, whose cut-off
    reads the score as rapidfuzz computes it)."""
    size, key_size = len(joined), len(spelling_key(joined))
    lengths = {len(f.joined) for f in index.forms if f.joined[0] == joined[0]}
    low = max(cfg.fuzzy_min_length, math.ceil(size / 1.25))
    if not any(length in lengths for length in range(low, int(size / 0.8) + 1)):
        return False
    passing = []
    for form in index.forms:
        words = len(form.words)
        if form.joined[0] != joined[0] or form.common:
            continue
        if (n > 1 and n == words) or n > words + cfg.max_extra_words:
            continue
        ratio = size / len(form.joined)
        if not cfg.min_length_ratio <= ratio <= cfg.max_length_ratio:
            ratio = key_size / len(form.key)
            if not cfg.min_length_ratio <= ratio <= cfg.max_length_ratio:
                continue
        if min(size, len(form.joined)) < cfg.fuzzy_min_length or not 0.8 <= ratio <= 1.25:
            continue
        passing.append(form.joined)
    found = process.extractOne(
        joined, passing, scorer=JaroWinkler.similarity, score_cutoff=cfg.fuzzy_threshold
    )
    return found is not None


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 9)))


def test_fallback_pre_check_answers_as_the_full_search() -> None:
    rng = random.Random(11)
    names = [_word(rng).capitalize() for _ in range(300)]
    names += [f"{_word(rng).capitalize()} {_word(rng).capitalize()}" for _ in range(100)]
    index = NameIndex(names)
    cfg = CorrectionConfig()
    yes = 0
    for _ in range(3000):
        name = rng.choice(index.forms).joined
        # the name respelled a little, cut, or grown: near and far windows alike
        chars = list(name)
        for _ in range(rng.randint(0, 3)):
            at = rng.randrange(len(chars))
            chars[at] = rng.choice(LETTERS)
        joined = "".join(chars)[: rng.randint(3, len(chars))] + rng.choice(["", "", _word(rng)])
        n = rng.randint(1, 4)
        expected = _reference(index, joined, n, cfg)
        assert spelling_fallback_possible(index, joined, n, cfg) == expected, (joined, n)
        yes += expected
    assert 150 < yes < 2850, yes  # both answers were compared many times
