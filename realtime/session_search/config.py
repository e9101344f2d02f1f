"""Session search settings as data: one frozen `SearchConfig`, and named recipes for the tool,
pre-fetch and the benches. A variant is a recipe (`dataclasses.replace`), never a constructor
flag. The figures behind each default are in docs/DESIGN.md, "Session search".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal


@dataclass(frozen=True, slots=True)
class SearchConfig:
    # Results asked and the token budget they are packed into; the tool's caller (the LLM)
    # may ask for others within the tool's schema.
    top_k: int = 8
    max_tokens: int = 1500
    # Reciprocal rank fusion of the two legs: rank constant, and each leg's weight
    # (vector, full-text); 0 switches a leg off.
    rrf_k: int = 20
    fusion_weights: tuple[float, float] = (1.0, 1.0)
    # Chunks each leg returns: `max(candidates_per_result * top_k, min_candidates)`.
    candidates_per_result: int = 3
    min_candidates: int = 15
    # Fused windows whose turns compete, per result asked: more windows only cost time.
    windows_per_result: int = 2
    # The best `scene_windows` fused windows widened by up to `scene_tokens` of the turns
    # just before and after each (`scene.py`): on real play an event's turns run past the
    # window that matches it. 0 switches widening off.
    scene_windows: int = 5
    scene_tokens: int = 100
    # Packing takes turns by evidence per token, `p / cost ** cost_exponent` (`packing.py`):
    # 0 is most probable first, 1 the knapsack order; the turn model already rewards length,
    # so half-way (figures per half in DESIGN.md).
    cost_exponent: float = 0.5
    # HNSW candidate list of the vector leg (at least twice the neighbours asked), set for
    # that one statement: enough recall for a turn re-ranker, cheaper than the pool's 200.
    hnsw_ef_search: int = 64
    # Pseudo-relevance feedback (`feedback.py`): a second vector search from the query moved
    # towards the best `feedback_windows` fused windows (`feedback_beta` of their mean), fused
    # as a third list with weight `feedback_weight`. 0 windows switches it off.
    feedback_windows: int = 0
    feedback_beta: float = 0.7
    feedback_weight: float = 1.0
    # The full-text leg ranks by term frequency (`ts_rank`), not cover density: proximity
    # says little when any word may match, and cover density costs several times as much.
    text_rank: Literal["frequency", "cover_density"] = "frequency"
    # The full-text leg ranks only words fewer than this many of the campaign's chunks hold,
    # the `fulltext_words` rarest of them: its cost is bounded by the data, not by a clock, so
    # the search always waits for it and the same question gets the same memory under any load
    # (`fulltext.py`). Small campaigns (fewer chunks than the cap) keep every word.
    common_word_chunks: int = 500
    fulltext_words: int = 8
    # An outage guard, not a ranking knob: a full-text statement still running after this long
    # means the database is in trouble; the vector leg answers alone and every result says so.
    fulltext_guard_ms: int = 1000
    # GraphRAG's full-text statement limit is a multiple of this (`tools/search_graph.py`).
    fulltext_timeout_ms: int = 20

    def leg_size(self, top_k: int) -> int:
        return max(self.candidates_per_result * top_k, self.min_candidates)


# `memory.search_sessions`, as the LLM calls it.
SESSION_SEARCH = SearchConfig()
# A temporal cue's pre-fetch: the tool's search cut to what a hot context can carry beside
# identity, scene and the last minutes (its budget trims memories first).
PREFETCH_SEARCH = replace(SESSION_SEARCH, top_k=6, max_tokens=400)
# Bench variants: one leg alone.
VECTOR_ONLY = replace(SESSION_SEARCH, fusion_weights=(1.0, 0.0))
FULLTEXT_ONLY = replace(SESSION_SEARCH, fusion_weights=(0.0, 1.0))
# Bench variant: twice the windows from longer legs, so one dump can be replayed at any
# narrower width (`bench/replay_turns.py --windows`) to see what reach buys.
WIDE_CANDIDATES = replace(SESSION_SEARCH, candidates_per_result=5, windows_per_result=4)
# Bench variant: the most scene widening a dump holds, replayed narrower by
# `bench/replay_turns.py --scene WINDOWS,TOKENS`.
SCENE_PROBE = replace(SESSION_SEARCH, scene_windows=40, scene_tokens=300)
# Bench variant: packing by evidence alone, whatever a turn costs (before evidence per token).
PROBABLE_FIRST = replace(SESSION_SEARCH, cost_exponent=0.0)
# Bench variants: pseudo-relevance feedback on vectors.
FEEDBACK = replace(SESSION_SEARCH, feedback_windows=3)
FEEDBACK_LIGHT = replace(SESSION_SEARCH, feedback_windows=3, feedback_weight=0.5)
FEEDBACK_FAR = replace(SESSION_SEARCH, feedback_windows=5, feedback_beta=1.5)

RECIPES: dict[str, SearchConfig] = {
    "session_search": SESSION_SEARCH,
    "prefetch": PREFETCH_SEARCH,
    "vector_only": VECTOR_ONLY,
    "fulltext_only": FULLTEXT_ONLY,
    "wide_candidates": WIDE_CANDIDATES,
    "scene_probe": SCENE_PROBE,
    "probable_first": PROBABLE_FIRST,
    "feedback": FEEDBACK,
    "feedback_light": FEEDBACK_LIGHT,
    "feedback_far": FEEDBACK_FAR,
}
