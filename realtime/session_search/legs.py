"""The retrieval legs of session search, one function each: the vector leg (HNSW k-NN over
chunk embeddings), the full-text leg (`fulltext.py`: ranked `tsquery` over chunks) and the
turn fetch (every turn of the chosen windows, with its cosine to the query). Fusion is
`fusion.py`'s, packing `packing.py`'s; `search.py` runs them in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from glyphoxa_pipelines.db import StatementTimeoutError
from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SemanticIndex
from glyphoxa_pipelines.memory.models import ChunkHit
from glyphoxa_pipelines.memory.visibility import chunk_visible
from realtime import fact_search as fs
from realtime.session_search.config import SearchConfig
from realtime.session_search.fulltext import fulltext_op
from realtime.session_search.outcome import Fused
from realtime.session_search.scene import scene_turns_op, widen
from realtime.turn_ranking import terms

if TYPE_CHECKING:
    from realtime.campaign_models import CampaignModels


class SearchHost(Protocol):
    """What search needs of its caller: the semantic index, each campaign's query embedder
    (`campaign_models.CampaignModels`: the campaign's active model, not the service's), and a
    guarded way to run store operations."""

    index: SemanticIndex
    campaign_models: CampaignModels

    async def run(self, op: Op, *, transaction: bool = True) -> Any: ...


@dataclass(frozen=True, slots=True)
class QueryVector:
    """A query's embedding and the model that made it: every vector the search compares it
    with (chunks, turns, scene turns) is read under this one model."""

    vector: np.ndarray
    model: str


async def embed_query(host: SearchHost, campaign_id: str, query: str) -> QueryVector | None:
    """The query embedded by the campaign's active model's encoder; None when the campaign has
    no vectors to search (`CampaignModels.query_embedder`)."""
    embedder = await host.campaign_models.query_embedder(campaign_id)
    if embedder is None:
        return None
    return QueryVector(await embedder.embed(query), embedder.model_id)


class Filters(TypedDict):
    session_id: str | None
    speaker: str | None
    after: datetime | None
    before: datetime | None
    # The NPC whose recall this is: only chunks it heard whole (`visibility.chunk_visible`),
    # so every turn fetched from them is one it may recall. None: the DM's, everything.
    listener: str | None


async def vector_leg(
    host: SearchHost, campaign_id: str, query: QueryVector, n: int, filters: Filters,
    config: SearchConfig,
) -> list[ChunkHit]:
    """The `n` nearest chunks under the query's model; HNSW's candidate list set for this one
    statement."""
    return await host.run(SemanticIndex.search.op(
        host.index, campaign_id, query.vector, n, model=query.model,
        ef_search=max(config.hnsw_ef_search, 2 * n), **filters), transaction=False)


async def fulltext_leg(
    host: SearchHost, campaign_id: str, query: str, n: int, filters: Filters,
    config: SearchConfig,
) -> list[ChunkHit] | None:
    """The `n` best full-text matches over the question's distinctive words (`fulltext.py`);
    None only when the outage guard cut the statement short."""
    params = {"s": filters["session_id"], "sp": filters["speaker"], "after": filters["after"],
              "before": filters["before"]}
    # The listener's scope is the same chunk rule the vector leg applies (visibility module).
    scope = (chunk_visible("c"), {"listener": filters["listener"]})
    op = fulltext_op(campaign_id, query, n, params, cap=config.common_word_chunks,
                     words=config.fulltext_words, scope=scope)
    # One statement outside any transaction: a server-side limit (SET LOCAL) would need
    # BEGIN and COMMIT round trips around it, four of the leg's five on a loaded machine. The
    # guard is the client's instead: cancelling the await makes psycopg cancel the statement
    # in the server, and the connection goes back to the pool idle.
    try:
        async with asyncio.timeout(config.fulltext_guard_ms / 1000):
            hits, _pick = await host.run(op, transaction=False)
    except (TimeoutError, StatementTimeoutError):
        return None
    return hits


async def fetch_turns(
    host: SearchHost, hits: list[Fused], query: QueryVector | None
) -> dict[str, list[dict[str, Any]]]:
    """The turns of each fused window, by chunk id, each with its cosine to the query (None
    without one)."""
    return await host.run(
        fs.chunk_turns_op([h.chunk.id for h, _, _ in hits],
                          query_vector=query.vector if query else None,
                          model=query.model if query else None),
        transaction=False,
    )


async def fetch_scene_turns(
    host: SearchHost, hits: list[Fused], query: QueryVector | None, listener: str | None,
    config: SearchConfig,
) -> dict[str, list[dict[str, Any]]]:
    """The turns of each fused window (`fetch_turns`), the best `config.scene_windows`
    widened by up to `config.scene_tokens` of their scene on either side (`scene.py`), both
    statements at once (as one statement they cost more: their server time adds up instead
    of overlapping; DESIGN.md)."""
    plain = fetch_turns(host, hits, query)
    if config.scene_windows <= 0 or config.scene_tokens <= 0:
        return await plain
    best = [h.chunk.id for h, _, _ in hits[: config.scene_windows]]
    # The scene statement first: it is the slower of the two, and whichever task starts
    # second waits while the first sends its pipelined statements (~1.5 ms at load 3.6).
    scene_task = asyncio.ensure_future(host.run(
        scene_turns_op(best, config.scene_tokens, listener=listener,
                       query_vector=query.vector if query else None,
                       model=query.model if query else None),
        transaction=False))
    turns_task = asyncio.ensure_future(plain)
    try:
        # Whichever statement answers first, its turns' words are read while the other is
        # still out: the turn model reads every candidate's words next (`turn_ranking.terms`,
        # cached by text), and here that CPU is off the call's path.
        done, _ = await asyncio.wait((turns_task, scene_task),
                                     return_when=asyncio.FIRST_COMPLETED)
        first = next(iter(done))
        if not first.cancelled() and first.exception() is None:
            read_words(first.result())
        turns, around = await turns_task, await scene_task
    finally:
        for task in (turns_task, scene_task):  # one failed: do not leave the other running
            if not task.done():
                task.cancel()
    return widen(turns, around, config.scene_tokens)


def read_words(fetched: Mapping[str, Any]) -> None:
    """Every fetched turn's words read into the turn model's cache: `fetch_turns`' rows by
    chunk, or `scene_turns_op`'s (before, after) pairs."""
    for rows in fetched.values():
        for group in (rows if isinstance(rows, tuple) else (rows,)):
            for r in group:
                terms(r["text"])
