"""`memory.search_sessions`: hybrid chunk retrieval and turn-level packing into a token budget.

Kept apart from `service.py` (caches, lifecycle, hot context) so retrieval can change without
touching the service's other parts. The pure pieces (`rrf`, `candidate_turns`, `passages`)
need no database; `hybrid`, `fetch_candidates` and `search_sessions` take the service only for
its pool, its stores and its query embedder (`SearchHost`). Which turns matter is decided in
`turn_ranking.py`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SemanticIndex
from glyphoxa_pipelines.memory.models import ChunkHit
from realtime import fact_search as fs
from realtime import tools as tl
from realtime.turn_ranking import Links, evidence_probability, turn_scores

Fused = tuple[ChunkHit, float, list[str]]

# Reciprocal rank fusion of the vector and full-text chunk lists.
RRF_K = 20
# Fused windows whose turns compete, per result asked (`top_k`). LoCoMo recall within 1,500
# tokens at top_k 30 with the turn model (offline replay, mean of 0-4 and 5-9, each half
# scored by weights fitted on the other): 1x 0.848, 2x 0.858, 3x 0.858; more windows only
# cost time.
CANDIDATE_FACTOR = 2
CITATION_TOKENS = 12  # what the session / time / speakers line of a result costs the reader
# One result per session: its chosen turns in spoken order, a `…` line where turns are
# skipped. LoCoMo (offline replay, turn model): recall within 1,500 tokens 0-4 0.865 -> 0.873,
# held-out 5-9 0.848 -> 0.854 against a result (and its citation line) per run of turns.
GAP = "…"
GAP_TOKENS = 1


# The full-text leg runs while the query is embedded. Once the vector leg is in, it waits for
# the full-text leg only until this long after the call started: a query of common words can
# rank most of a large campaign's chunks (its statement time limit still bounds that work, in
# the background). Full-scale bench (50k chunks), 2 loaded cores, side by side: waiting the
# leg out p50 18.8 / p95 42.7 ms (full-text in 184 of 190 answers), this grace 17.1 / 38.9 ms
# (146 of 190). LoCoMo's small campaigns always finish in time.
TEXT_LEG_GRACE_MS = 15.0
# HNSW candidate list of the vector leg (at least twice the neighbours asked). Full-scale
# bench, 2 loaded cores, side by side: the pool's ef_search 200 p50 29.9 ms, 64 26.1 ms even
# with the transaction a SET LOCAL needs (`SemanticIndex.search(ef_search=...)` sets it in
# the statement itself). Recall@10 against exact search at full scale: 0.984 (200: 0.994).
HNSW_EF_SEARCH = 64
# The full-text leg ranks by term frequency (`ts_rank`), not cover density (`ts_rank_cd`): on
# 50k chunks cover density costs ~4x as much per matching chunk (5.7 vs 1.4 ms for ~570
# matches), and proximity says little when any word may match. LoCoMo evidence recall within
# 1,500 tokens 0.797 -> 0.812 over all 10 conversations (0-4: 0.815 -> 0.824, 5-9: 0.780 ->
# 0.801).
TEXT_RANK: Literal["frequency"] = "frequency"
_stragglers: set[asyncio.Future[Any]] = set()


def _forget(leg: asyncio.Future[Any]) -> None:
    """A late leg is done: drop it, and read its outcome so no error goes unretrieved."""
    _stragglers.discard(leg)
    if not leg.cancelled():
        leg.exception()


class SearchHost(Protocol):
    """What search needs of `MemoryService`."""

    index: SemanticIndex
    embedder: Any  # QueryEmbedder
    fusion_weights: tuple[float, float]
    fulltext_timeout_ms: int
    fulltext_timeouts: int

    async def run(self, op: Op, *, transaction: bool = True) -> Any: ...


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


async def _nothing() -> list[Any]:
    return []


async def guarded(host: SearchHost, op: Op) -> list[Any]:
    """The full-text leg under its own time limit: a query of very common words can match
    most of a campaign; then the vector leg answers alone."""
    from realtime.service import QueryTimeoutError

    try:
        return await host.run(op)
    except QueryTimeoutError:
        host.fulltext_timeouts += 1
        return []


async def hybrid(
    host: SearchHost,
    campaign_id: str,
    query: str,
    top_k: int,
    *,
    session_id: str | None = None,
    speaker: str | None = None,
    after: datetime | None = None,
    before: datetime | None = None,
    candidates: int | None = None,
) -> tuple[list[Fused], Any]:
    """Vector and full-text candidates fetched concurrently, fused by reciprocal rank; with
    the query's embedding (None when the vector leg is off), which ranks the turns next."""
    n = candidates or max(3 * top_k, 15)
    filters = {"session_id": session_id, "speaker": speaker, "after": after, "before": before}
    wv, wt = host.fusion_weights
    # The full-text leg needs no embedding: it runs while the query is being embedded.
    text_leg = asyncio.ensure_future(
        guarded(host, fs.statement_timeout_op(
            SemanticIndex.fulltext_search.op(
                host.index, campaign_id, query, n, rank=TEXT_RANK, **filters),
            host.fulltext_timeout_ms))
        if wt else _nothing()
    )
    start = time.perf_counter()
    late = False
    try:
        vector_hits: list[ChunkHit] = []
        vec = None
        if wv:
            vec = await host.embedder.embed(query)
            vector_hits = await host.run(SemanticIndex.search.op(
                host.index, campaign_id, vec, n, model=host.embedder.model_id,
                ef_search=max(HNSW_EF_SEARCH, 2 * n), **filters), transaction=False)
            remaining = start + TEXT_LEG_GRACE_MS / 1000 - time.perf_counter()
            if not text_leg.done():
                await asyncio.wait({text_leg}, timeout=max(0.0, remaining))
            late = not text_leg.done()
        if late:  # let it finish (its statement timeout bounds it); the vector leg answers
            _stragglers.add(text_leg)
            text_leg.add_done_callback(_forget)
            text_hits: list[ChunkHit] = []
        else:
            text_hits = await text_leg
    finally:
        if not text_leg.done() and not late:
            text_leg.cancel()
    return rrf([vector_hits, text_hits], weights=[wv, wt])[:top_k], vec


async def fetch_candidates(
    host: SearchHost, args: tl.SearchSessionsArgs, campaign_id: str
) -> tuple[list[Fused], dict[str, list[dict[str, Any]]]]:
    """Fused chunk windows and their turns, each turn with its cosine to the query
    (`similarity`; None for a turn the pipeline has not embedded yet)."""
    hits, vec = await hybrid(
        host,
        campaign_id,
        args.query,
        CANDIDATE_FACTOR * args.top_k,
        candidates=max(3 * args.top_k, 15),
        session_id=args.session_id,
        speaker=args.speaker,
        after=args.after,
        before=args.before,
    )
    turns = await host.run(
        fs.chunk_turns_op([h.chunk.id for h, _, _ in hits], query_vector=vec,
                          model=host.embedder.model_id if vec is not None else None),
        transaction=False,
    )
    return hits, turns


async def search_sessions(
    host: SearchHost, args: tl.SearchSessionsArgs, campaign_id: str
) -> list[dict[str, Any]]:
    """The tool: fused chunk candidates, their turns, packed into `args.max_tokens`."""
    hits, turns = await fetch_candidates(host, args, campaign_id)
    return passages(hits, turns, args.query, args.max_tokens, limit=args.top_k)


def rrf(
    lists: Sequence[Sequence[ChunkHit]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[Fused]:
    """Reciprocal rank fusion of ranked chunk lists (ties: session, seq)."""
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


def chunk_result(hit: ChunkHit, score: float, methods: list[str]) -> dict[str, Any]:
    c = hit.chunk
    return {
        "text": c.text,
        "score": round(score, 6),
        "methods": methods,
        "chunk_id": c.id,
        "source": {
            "session_id": c.session_id,
            "when": _iso(c.start_at),
            "until": _iso(c.end_at),
            "speakers": list(c.speakers),
            "first_entry_id": c.first_entry_id,
            "last_entry_id": c.last_entry_id,
        },
        "entity_ids": list(c.entity_ids),
        "token_count": c.token_count,
    }


def candidate_turns(
    hits: list[Fused], turns: dict[str, list[dict[str, Any]]]
) -> tuple[dict[int, dict[str, Any]], dict[int, int], Links, dict[int, int]]:
    """The turns of the candidate windows, each once, in candidate order (best window
    first): rows by id, the rank of the best window holding each, each turn's adjacent
    candidate turns (within its windows and across consecutive ones), and the pseudo-turns
    (negative ids) standing for windows with no turns fetched, which compete whole as their
    text."""
    rows: dict[int, dict[str, Any]] = {}
    origin: dict[int, int] = {}
    links: dict[int, tuple[int | None, int | None]] = {}
    whole: dict[int, int] = {}
    for rank, (hit, _score, _methods) in enumerate(hits):
        window = turns.get(hit.chunk.id) or []
        if not window:
            pseudo = -(rank + 1)
            rows[pseudo] = {"id": pseudo, "text": hit.chunk.text, "speaker_name": "",
                            "similarity": None}
            origin[pseudo], links[pseudo], whole[pseudo] = rank, (None, None), rank
        for j, r in enumerate(window):
            rows.setdefault(r["id"], r)
            origin.setdefault(r["id"], rank)
            prev, nxt = links.get(r["id"], (None, None))
            links[r["id"]] = (prev if prev is not None else (window[j - 1]["id"] if j else None),
                              nxt if nxt is not None else
                              (window[j + 1]["id"] if j + 1 < len(window) else None))
    # Consecutive windows of a session are contiguous (the chunker overlaps them by a turn,
    # or cuts at a scene break without a gap): join the last turn of one to the first of the
    # next, so neighbours and runs do not stop at a window's edge.
    edges = {(h.chunk.session_id, h.chunk.seq): turns[h.chunk.id]
             for h, _s, _m in hits if turns.get(h.chunk.id)}
    for (session, seq), window in edges.items():
        after = edges.get((session, seq + 1))
        last, first = window[-1]["id"], after[0]["id"] if after else None
        if first is None or first == last:
            continue
        if links[last][1] is None:
            links[last] = (links[last][0], first)
        if links[first][0] is None:
            links[first] = (last, links[first][1])
    return rows, origin, links, whole


def passages(
    hits: list[Fused],
    turns: dict[str, list[dict[str, Any]]],
    query: str,
    max_tokens: int,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Turn-level packing: every turn of a candidate window is scored on its own
    (`turn_ranking.turn_scores`: its window's rank, its own similarity, its query words, its
    neighbours', who speaks), and the best turns are packed one by one until `max_tokens`.
    The chosen turns of one session become one result, in spoken order, with one citation
    line (session, time span, speakers, entry ids); runs that are not adjacent are separated by
    a `…` line. Results come best first (by their best turn); at most `limit` of them (the
    tool's `top_k`): a turn that would open a session beyond that is passed over. A window with
    no turns (none fetched) competes whole, as one pseudo-turn and its own result. Turn rows
    may carry `similarity` (cosine to the query; None or absent when the turn has no
    embedding)."""
    from realtime.hot_context import estimate_tokens

    rows, origin, links, whole = candidate_turns(hits, turns)
    final = turn_scores(rows, origin, links, query)
    order = sorted(final, key=lambda i: (-final[i], origin[i], i))

    def line(r: dict[str, Any]) -> str:
        return f"{r['speaker_name'] or r['speaker_id']}: {r['text']}"

    def group_of(i: int) -> str | int:
        return i if i in whole else hits[origin[i]][0].chunk.session_id

    # Approximate (per line, rounded up) costs, an upper bound of the exact check below.
    groups: dict[str | int, list[int]] = {}  # session (or pseudo-turn) -> chosen, best first
    used = 0
    for i in order:
        key = group_of(i)
        if key not in groups and limit is not None and len(groups) >= limit:
            continue
        cost = estimate_tokens(rows[i]["text"] if i in whole else line(rows[i])) + 1
        if key not in groups:
            cost += CITATION_TOKENS
        elif not any(n in groups[key] for n in links[i] if n is not None):
            cost += GAP_TOKENS
        if used + cost <= max_tokens:
            used += cost
            groups.setdefault(key, []).append(i)
    out: list[dict[str, Any]] = []
    used = 0
    for key, chosen in groups.items():  # in order of their best turn
        best = chosen[0]
        hit, _fused, methods = hits[origin[best]]
        if best in whole:
            result = chunk_result(hit, evidence_probability(final[best]), methods)
            cost = estimate_tokens(result["text"]) + CITATION_TOKENS
        else:
            spoken = sorted(chosen, key=lambda j: (rows[j]["spoken_at"], j))
            lines: list[str] = []
            for k, j in enumerate(spoken):
                if k and links[spoken[k - 1]][1] != j:
                    lines.append(GAP)
                lines.append(line(rows[j]))
            text = "\n".join(lines)
            cost = estimate_tokens(text) + CITATION_TOKENS
            result = {
                "text": text,
                "score": round(evidence_probability(final[best]), 6),
                "methods": methods,
                "chunk_id": hit.chunk.id,
                "source": {
                    "session_id": key,
                    "when": _iso(rows[spoken[0]]["spoken_at"]),
                    "until": _iso(rows[spoken[-1]]["spoken_at"]),
                    "speakers": list(dict.fromkeys(rows[j]["speaker_name"] for j in spoken)),
                    "entry_ids": spoken,
                },
                "token_estimate": cost,
            }
        if used + cost > max_tokens:  # never, while the estimate above stays an upper bound
            continue
        used += cost
        out.append(result)
    return out
