"""`memory.search_sessions` end to end: both legs concurrently, fused, the turns of the best
windows fetched, packed into the token budget.

The full-text leg needs no embedding, so it runs while the query is embedded; once the vector
leg is in, it is waited for only until the config's grace after the call began (a query of
common words can rank most of a large campaign's chunks; its statement limit still bounds
that work, in the background).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from glyphoxa_pipelines.memory.models import ChunkHit
from realtime.session_search.config import SESSION_SEARCH, SearchConfig
from realtime.session_search.fusion import rrf
from realtime.session_search.legs import Filters, SearchHost, fetch_turns, fulltext_leg, vector_leg
from realtime.session_search.outcome import Candidates, Fused, SearchOutcome, TextLeg
from realtime.session_search.packing import passages
from realtime.tools.args import SearchSessionsArgs

_stragglers: set[asyncio.Future[Any]] = set()


def _forget(leg: asyncio.Future[Any]) -> None:
    """A late leg is done: drop it, and read its outcome so no error goes unretrieved."""
    _stragglers.discard(leg)
    if not leg.cancelled():
        leg.exception()


async def _off() -> list[ChunkHit] | None:
    return []


async def hybrid(
    host: SearchHost,
    campaign_id: str,
    query: str,
    top_k: int,
    filters: Filters,
    config: SearchConfig = SESSION_SEARCH,
) -> tuple[list[Fused], np.ndarray | None, TextLeg]:
    """Vector and full-text candidates fetched concurrently, fused by reciprocal rank; with
    the query's embedding (None when the vector leg is off), which ranks the turns next, and
    how the full-text leg ended."""
    n = config.leg_size(top_k)
    wv, wt = config.fusion_weights
    text_leg = asyncio.ensure_future(
        fulltext_leg(host, campaign_id, query, n, filters, config) if wt else _off()
    )
    start = time.perf_counter()
    late = False
    try:
        vector_hits: list[ChunkHit] = []
        vec = None
        if wv:
            vec = await host.embedder.embed(query)
            vector_hits = await vector_leg(host, campaign_id, vec, n, filters, config)
            remaining = start + config.text_leg_grace_ms / 1000 - time.perf_counter()
            if not text_leg.done():
                await asyncio.wait({text_leg}, timeout=max(0.0, remaining))
            late = not text_leg.done()
        text_hits: list[ChunkHit] | None = []
        if late:  # let it finish (its statement timeout bounds it); the vector leg answers
            _stragglers.add(text_leg)
            text_leg.add_done_callback(_forget)
        else:
            text_hits = await text_leg
    finally:
        if not text_leg.done() and not late:
            text_leg.cancel()
    status: TextLeg = (
        "off" if not wt else "late" if late else "timeout" if text_hits is None else "ok"
    )
    fused = rrf([vector_hits, text_hits or []], k=config.rrf_k, weights=[wv, wt])
    return fused[: config.windows_per_result * top_k], vec, status


async def fetch_candidates(
    host: SearchHost, args: SearchSessionsArgs, campaign_id: str,
    config: SearchConfig = SESSION_SEARCH, listener: str | None = None,
) -> Candidates:
    """Fused chunk windows and their turns, each turn with its cosine to the query; only
    what `listener` may recall (None: everything)."""
    filters = Filters(session_id=args.session_id, speaker=args.speaker, after=args.after,
                      before=args.before, listener=listener)
    hits, vec, text_leg = await hybrid(host, campaign_id, args.query, args.top_k, filters,
                                       config)
    turns = await fetch_turns(host, hits, vec)
    return Candidates(hits, turns, text_leg)


async def search_sessions(
    host: SearchHost, args: SearchSessionsArgs, campaign_id: str,
    config: SearchConfig = SESSION_SEARCH, listener: str | None = None,
) -> SearchOutcome:
    """The tool: fused chunk candidates, their turns, packed into `args.max_tokens`; only
    what `listener` (an NPC id; None: the DM) may recall."""
    found = await fetch_candidates(host, args, campaign_id, config, listener)
    results = passages(found.hits, found.turns, args.query, args.max_tokens, limit=args.top_k)
    return SearchOutcome(results, found.text_leg)
