"""Session search (`memory.search_sessions`, and pre-fetch's temporal cues): hybrid chunk
retrieval, then turn-level packing into a token budget.

`config` (settings as data, named recipes), `legs` (vector, full-text, turn fetch),
`scene` (the best windows widened by the turns around them),
`fulltext` (the full-text leg, bounded by the words it ranks), `fusion` (reciprocal rank),
`packing` (turns into results), `search` (the legs in order), `outcome` (what a search
measured, for its caller to count). Which turns matter is decided in
`realtime/turn_ranking.py`.
"""

from realtime.session_search.config import (
    FULLTEXT_ONLY,
    PREFETCH_SEARCH,
    RECIPES,
    SESSION_SEARCH,
    VECTOR_ONLY,
    SearchConfig,
)
from realtime.session_search.fusion import rrf
from realtime.session_search.legs import Filters, SearchHost
from realtime.session_search.outcome import Candidates, Fused, SearchCounters, SearchOutcome
from realtime.session_search.packing import (
    GAP,
    candidate_turns,
    citation_chars,
    passages,
    turn_chars,
)
from realtime.session_search.search import (
    FULLTEXT_MISSING,
    budget_for,
    fetch_candidates,
    hybrid,
    mark_missing,
    search_sessions,
)

__all__ = [
    "FULLTEXT_MISSING",
    "FULLTEXT_ONLY",
    "GAP",
    "PREFETCH_SEARCH",
    "RECIPES",
    "SESSION_SEARCH",
    "VECTOR_ONLY",
    "Candidates",
    "Filters",
    "Fused",
    "SearchConfig",
    "SearchCounters",
    "SearchHost",
    "SearchOutcome",
    "candidate_turns",
    "citation_chars",
    "fetch_candidates",
    "hybrid",
    "budget_for",
    "mark_missing",
    "passages",
    "rrf",
    "search_sessions",
    "turn_chars",
]
