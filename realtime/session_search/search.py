"""`memory.search_sessions` end to end: both legs concurrently, fused, the turns of the best
windows fetched, packed into the token budget.

The full-text leg needs no embedding, so it runs while the query is embedded and the vector
leg searches; then it is always waited for. Its cost is bounded by the words it ranks
(`fulltext.py`), so no deadline decides what the answer holds: the same question over the
same data gets the same memories on an idle or a saturated machine. Its statement limit is
an outage guard only; when it fires, every result says the keyword leg is missing.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from glyphoxa_pipelines.memory.models import ChunkHit
from realtime.session_search.config import SESSION_SEARCH, SearchConfig
from realtime.session_search.feedback import chunk_vectors_op, rocchio
from realtime.session_search.fusion import rrf
from realtime.session_search.legs import (
    Filters,
    QueryVector,
    SearchHost,
    embed_query,
    fetch_scene_turns,
    fulltext_leg,
    vector_leg,
)
from realtime.session_search.outcome import Candidates, Fused, SearchOutcome, TextLeg
from realtime.session_search.packing import passages
from realtime.tools.args import SearchSessionsArgs
from realtime.tools.results import CHARS_PER_TOKEN

# What each result says when the outage guard cut the full-text leg short.
FULLTEXT_MISSING = "keyword matching timed out: these are semantic matches only"


async def _off() -> list[ChunkHit] | None:
    return []


async def hybrid(
    host: SearchHost,
    campaign_id: str,
    query: str,
    top_k: int,
    filters: Filters,
    config: SearchConfig = SESSION_SEARCH,
) -> tuple[list[Fused], QueryVector | None, TextLeg]:
    """Vector and full-text candidates fetched concurrently, fused by reciprocal rank; with
    the query's embedding and its model (None when the vector leg is off or the campaign has
    no vectors), which ranks the turns next, and how the full-text leg ended."""
    n = config.leg_size(top_k)
    wv, wt = config.fusion_weights
    text_leg = asyncio.ensure_future(
        fulltext_leg(host, campaign_id, query, n, filters, config) if wt else _off()
    )
    try:
        vector_hits: list[ChunkHit] = []
        vec = None
        if wv:
            vec = await embed_query(host, campaign_id, query)
            if vec is not None:
                vector_hits = await vector_leg(host, campaign_id, vec, n, filters, config)
        text_hits = await text_leg
    finally:
        if not text_leg.done():  # the vector leg failed: do not leave the other running
            text_leg.cancel()
    status: TextLeg = "off" if not wt else "timeout" if text_hits is None else "ok"
    fused = rrf([vector_hits, text_hits or []], k=config.rrf_k, weights=[wv, wt])
    if config.feedback_windows > 0 and vec is not None and fused:
        second = await feedback_leg(host, campaign_id, vec, fused, n, filters, config)
        fused = rrf([vector_hits, text_hits or [], second], k=config.rrf_k,
                    weights=[wv, wt, config.feedback_weight])
    return fused[: config.windows_per_result * top_k], vec, status


async def feedback_leg(
    host: SearchHost, campaign_id: str, vec: QueryVector, fused: list[Fused], n: int,
    filters: Filters, config: SearchConfig,
) -> list[ChunkHit]:
    """The `n` nearest chunks to the query moved towards the best fused windows
    (`feedback.py`), under the same filters and model."""
    best = [h.chunk.id for h, _, _ in fused[: config.feedback_windows]]
    docs = await host.run(chunk_vectors_op(campaign_id, best, vec.model), transaction=False)
    moved = rocchio(vec.vector, docs, config.feedback_beta)
    return await vector_leg(host, campaign_id, QueryVector(moved, vec.model), n, filters,
                            config)


async def fetch_candidates(
    host: SearchHost, args: SearchSessionsArgs, campaign_id: str,
    config: SearchConfig = SESSION_SEARCH, listener: str | None = None,
) -> Candidates:
    """Fused chunk windows and their turns (the best windows widened into their scene), each
    turn with its cosine to the query; only what `listener` may recall (None: everything)."""
    filters = Filters(session_id=args.session_id, speaker=args.speaker, after=args.after,
                      before=args.before, listener=listener)
    hits, vec, text_leg = await hybrid(host, campaign_id, args.query, args.top_k, filters,
                                       config)
    turns = await fetch_scene_turns(host, hits, vec, listener, config)
    return Candidates(hits, turns, text_leg)


def budget_for(max_tokens: int, top_k: int, text_leg: TextLeg) -> int:
    """The packing budget: `max_tokens`, less what the keyword-leg mark will add to each of
    up to `top_k` results when the leg was cut short, so a marked answer still fits."""
    if text_leg != "timeout":
        return max_tokens
    mark = len(', "degraded": ' + json.dumps(FULLTEXT_MISSING, ensure_ascii=False))
    return max(1, max_tokens - -(-mark * top_k // CHARS_PER_TOKEN))


def mark_missing(results: list[dict[str, Any]], text_leg: TextLeg) -> list[dict[str, Any]]:
    """Each result marked when the full-text leg timed out (copies; the rest unchanged)."""
    if text_leg != "timeout":
        return results
    return [dict(r, degraded=FULLTEXT_MISSING) for r in results]


async def search_sessions(
    host: SearchHost, args: SearchSessionsArgs, campaign_id: str,
    config: SearchConfig = SESSION_SEARCH, listener: str | None = None,
) -> SearchOutcome:
    """The tool: fused chunk candidates, their turns, packed into `args.max_tokens`; only
    what `listener` (an NPC id; None: the DM) may recall."""
    found = await fetch_candidates(host, args, campaign_id, config, listener)
    budget = budget_for(args.max_tokens, args.top_k, found.text_leg)
    results = passages(found.hits, found.turns, args.query, budget, limit=args.top_k,
                       cost_exponent=config.cost_exponent)
    return SearchOutcome(mark_missing(results, found.text_leg), found.text_leg)
