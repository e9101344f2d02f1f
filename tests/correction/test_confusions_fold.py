"""The folds of confusable consonants must write what a per-letter table writes: B/V (P, F
in Double Metaphone) and M/N, each letter once, whatever else the string holds."""

from __future__ import annotations

import random
import string

from glyphoxa_pipelines.correction.confusions import fold, fold_letters

_CODES = str.maketrans({"P": "F", "M": "N"})
_LETTERS = str.maketrans({"b": "v", "m": "n"})


def test_folds_write_what_a_letter_table_writes() -> None:
    rng = random.Random(13)
    alphabet = string.ascii_letters + "0'’ -"
    changed = 0
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert fold(text) == text.translate(_CODES), text
        assert fold_letters(text) == text.translate(_LETTERS), text
        changed += fold(text) != text
    assert changed > 2_000  # many strings hold a letter that folds
    assert fold("PMPM") == "FNFN" and fold_letters("bmbm") == "vnvn"
