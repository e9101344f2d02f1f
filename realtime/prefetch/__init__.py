"""Speculative pre-fetch: `triggers` (what in a partial fires a fetch), `cache` (pre-fetched
results per session until the next hot context), `prefetcher` (scheduling and fetching in the
background).

The top level re-exports the in-memory parts only; import `realtime.prefetch.prefetcher` for
the fetching side (it needs the database and session search).
"""

from realtime.prefetch.cache import PrefetchCache, Prefetched
from realtime.prefetch.triggers import MIN_TOPIC_WORDS, TEMPORAL_CUES, Trigger, detect, topic_of

__all__ = [
    "MIN_TOPIC_WORDS",
    "TEMPORAL_CUES",
    "PrefetchCache",
    "Prefetched",
    "Trigger",
    "detect",
    "topic_of",
]
