"""The consonant pairs Whisper trades most, folded away in Double Metaphone codes and in
spelling keys: B and V, M and N, each pair made at the same place ("Bex" for "Vex",
"scamlin" for "Scanlan"). The context stage compares codes and spellings through these folds,
and codes one edit apart through their variants.
"""

from __future__ import annotations

from functools import lru_cache


def fold(code: str) -> str:
    """A Double Metaphone code with B and V, and M and N, folded (Double Metaphone writes B as
    P, V as F). Two `str.replace` calls, not `str.translate` with a table: the same letters
    out (neither F nor N is folded again) at a third of the cost, and the context stage folds
    codes per window and per scene name."""
    return code.replace("P", "F").replace("M", "N")


@lru_cache(maxsize=65_536)
def fold_letters(spelling: str) -> str:
    """A spelling key with the same consonant pairs folded as `fold` folds in codes: "backs"
    spells the sounds of "Vax" once B is V."""
    return spelling.replace("b", "v").replace("m", "n")


@lru_cache(maxsize=65_536)
def code_variants(code: str) -> frozenset[str]:
    """A folded code and, from four letters on, each of its one-letter deletions: two codes
    within one edit share a variant."""
    folded = fold(code)
    out = {folded}
    if len(folded) >= 4:
        out.update(folded[:k] + folded[k + 1 :] for k in range(len(folded)))
    return frozenset(out)
