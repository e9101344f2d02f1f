"""What a user would pick instead of `memory.search_sessions`, for `bench/locomo.py` to score
side by side: BM25 over single turns, and dense top-k turns (the turns' own stored MiniLM
vectors, cosine to the same query vector the tool uses). Both rank every turn of the
campaign; `pack` then fills the same token budget by the tool's own cost model (the answer as
the model reads it: each turn's line and entry id, each session's citation,
`realtime/session_search/packing.py`), so a difference in recall is a difference in
which turns were chosen, not in how much text was shown. Pure: plain rows in, ids out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")
# A standard English stop list (the words BM25 implementations commonly drop).
_STOP = frozenset(
    "a an the and or but if of to in on at for with about from by as is are was were be been "
    "being do does did have has had i you he she it we they me him her them my your his its our "
    "their this that these those what when where who whom which why how not no so just very can "
    "could would should will shall may might must there here than then too also up down out "
    "over under again once ever any some all am s t".split()
)


@dataclass(frozen=True, slots=True)
class Turn:
    id: int
    session_id: str
    line: str  # "<speaker>: <text>", as the tool shows a turn


def tokens(text: str) -> list[str]:
    """Lower-case words without stop words, suffixes stripped the way the tool's word
    features strip them (so neither side gains from a better stemmer)."""
    out = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP or len(w) < 2:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        out.append(w)
    return out


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75, the Lucene idf) over a fixed set of turns."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self._docs = [Counter(tokens(t)) for t in texts]
        lengths = np.array([sum(d.values()) for d in self._docs], dtype=np.float64)
        self._norm = k1 * (1 - b + b * lengths / max(1.0, float(lengths.mean() or 1.0)))
        df: Counter[str] = Counter()
        for d in self._docs:
            df.update(d.keys())
        n = len(self._docs)
        self._idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._k1 = k1

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(len(self._docs))
        for t in set(tokens(query)):
            idf = self._idf.get(t)
            if idf is None:
                continue
            tf = np.array([d.get(t, 0) for d in self._docs], dtype=np.float64)
            out += idf * tf * (self._k1 + 1) / (tf + self._norm)
        return out


def ranked(scores: np.ndarray, turns: Sequence[Turn]) -> list[Turn]:
    """Turns best first (ties: their order in `turns`)."""
    return [turns[i] for i in np.argsort(-scores, kind="stable")]


def dense_scores(query_vector: np.ndarray, turn_vectors: np.ndarray) -> np.ndarray:
    """Cosine of each (unit) turn vector with the query's."""
    q = np.asarray(query_vector, dtype=np.float32)
    return turn_vectors @ (q / (np.linalg.norm(q) or 1.0))


def pack(order: Sequence[Turn], max_tokens: int, top_k: int = 30) -> list[Turn]:
    """Turns taken best first while they fit `max_tokens`, counted as the tool's packing
    counts its own answer (its envelope paid first, as the tool's is)."""
    from realtime.session_search import citation_chars, turn_chars
    from realtime.tools.results import CHARS_PER_TOKEN
    from realtime.tools.search_sessions import results_tokens

    budget = results_tokens(max_tokens, top_k) * CHARS_PER_TOKEN
    used = 0
    opened: set[str] = set()
    chosen: list[Turn] = []
    for t in order:
        c = turn_chars(t.line, t.id) + (0 if t.session_id in opened else
                                        citation_chars(t.session_id))
        if used + c > budget:
            continue
        used += c
        opened.add(t.session_id)
        chosen.append(t)
    return chosen
