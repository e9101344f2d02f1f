"""Reciprocal rank fusion of the legs' ranked chunk lists."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_pipelines.memory.models import ChunkHit
from realtime.session_search.config import SESSION_SEARCH
from realtime.session_search.outcome import Fused


def rrf(
    lists: Sequence[Sequence[ChunkHit]], k: int = SESSION_SEARCH.rrf_k,
    weights: Sequence[float] | None = None,
) -> list[Fused]:
    """Reciprocal rank fusion of ranked chunk lists (ties: session, seq), each chunk with its
    fused score and the legs that found it."""
    scores: dict[str, float] = {}
    hits: dict[str, ChunkHit] = {}
    methods: dict[str, list[str]] = {}
    for li, ranked in enumerate(lists):
        w = weights[li] if weights else 1.0
        for rank, hit in enumerate(ranked):
            cid = hit.chunk.id
            scores[cid] = scores.get(cid, 0.0) + w / (k + rank + 1)
            hits.setdefault(cid, hit)
            methods.setdefault(cid, []).append(hit.method)
    order = sorted(scores, key=lambda c: (-scores[c], hits[c].chunk.session_id, hits[c].chunk.seq))
    return [(hits[c], scores[c], methods[c]) for c in order]
