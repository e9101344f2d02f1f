"""`memory.search_sessions`: hybrid chunk retrieval and turn-level packing into a token budget.

Kept apart from `service.py` (caches, lifecycle, hot context) so retrieval can change without
touching the service's other parts. The pure pieces (`rrf`, `terms`, `passages`, ...) need no
database; `hybrid` and `search_sessions` take the service only for its pool, its stores and its
query embedder (`SearchHost`).
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import SemanticIndex
from glyphoxa_pipelines.memory.models import ChunkHit
from realtime import fact_search as fs
from realtime import tools as tl

Fused = tuple[ChunkHit, float, list[str]]

# Reciprocal rank fusion of the vector and full-text chunk lists.
RRF_K = 20
# Turn scoring in `passages`: weight / (TURN_RRF_K + rank + 1) for the turn's window rank
# (CHUNK_WEIGHT) and its rarity-weighted query-word rank (TURN_WEIGHT). Tuned on LoCoMo
# conversations 0-4 only (grid: weights 1-3 x 0.5-2, k 10 / 20 / 40), then checked on the
# held-out 5-9; evidence recall within 1,500 tokens, before -> after (2 / 1 / k 20 -> 1 / 1 /
# k 10): 0-4 0.824 -> 0.835, 5-9 0.801 -> 0.812. Nothing here is LoCoMo-specific: it says a
# turn's own words count as much as its window's rank, and that only the top ranks matter.
TURN_RRF_K = 10
TURN_WEIGHT = 1.0
CHUNK_WEIGHT = 1.0
# Fused windows whose turns compete, per passage asked (`top_k`). LoCoMo recall within 1,500
# tokens at top_k 30, conversations 0-4 / held-out 5-9: 1x 0.835 / 0.810, 2x 0.835 / 0.812,
# 3x-4x 0.838 on 0-4; more windows only cost time.
CANDIDATE_FACTOR = 2
CITATION_TOKENS = 12  # what the session / time / speakers line of a result costs the reader


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
) -> list[Fused]:
    """Vector and full-text candidates fetched concurrently, fused by reciprocal rank."""
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
    return rrf([vector_hits, text_hits], weights=[wv, wt])[:top_k]


async def search_sessions(
    host: SearchHost, args: tl.SearchSessionsArgs, campaign_id: str
) -> list[dict[str, Any]]:
    """The tool: fused chunk candidates, their turns, packed into `args.max_tokens`."""
    hits = await hybrid(
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
    turns = await host.run(fs.chunk_turns_op([h.chunk.id for h, _, _ in hits]), transaction=False)
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


_STOP = frozenset(
    "a an the and or but if of to in on at for with about from by as is are was were be been "
    "being do does did have has had i you he she it we they me him her them my your his its our "
    "their this that these those what when where who whom which why how not no so just very can "
    "could would should will shall may might must there here than then too also up down out "
    "over under again once ever any some all".split()
)
_TERM = re.compile(r"[a-z0-9']+")


def terms(text: str) -> set[str]:
    """Content words, crudely stemmed: enough to spot which turns of a window matter."""
    out = set()
    for word in _TERM.findall(text.lower()):
        word = word.strip("'")
        if len(word) < 2 or word in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def _turn_weights(
    turns: dict[str, list[dict[str, Any]]], wanted: set[str]
) -> tuple[dict[int, set[str]], dict[str, float]]:
    """Query terms each candidate turn holds, and each term's weight: inverse frequency over
    the candidate turns, so a name said in every turn counts for little and a rare word of the
    question (a place, an object) for much."""
    row_terms: dict[int, set[str]] = {}
    for rows in turns.values():
        for r in rows:
            if r["id"] not in row_terms:
                row_terms[r["id"]] = wanted & terms(r["text"])
    n = max(1, len(row_terms))
    df: dict[str, int] = {}
    for found in row_terms.values():
        for t in found:
            df[t] = df.get(t, 0) + 1
    return row_terms, {t: math.log(1.0 + n / c) for t, c in df.items()}


def passages(
    hits: list[Fused],
    turns: dict[str, list[dict[str, Any]]],
    query: str,
    max_tokens: int,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Turn-level packing: every turn of a candidate window is scored on its own (its
    window's fused rank plus its rarity-weighted query-word rank), then lifted by its better
    neighbour (`window_scores`: a question matched in one turn is answered in the next), and
    the best turns are packed one by one until `max_tokens`; chosen turns that are adjacent in
    their session become one passage, so context costs no second citation line. Windows with
    no turns (none fetched) compete whole at their own rank. At most `limit` passages, best
    first (the tool's `top_k`)."""
    from realtime.hot_context import estimate_tokens

    rows: dict[int, dict[str, Any]] = {}
    origin: dict[int, int] = {}  # turn -> rank of its best window
    links: dict[int, tuple[int | None, int | None]] = {}
    whole: list[tuple[float, int]] = []
    for rank, (hit, _score, _methods) in enumerate(hits):
        window = turns.get(hit.chunk.id) or []
        if not window:
            whole.append((CHUNK_WEIGHT / (TURN_RRF_K + rank + 1), rank))
        for j, r in enumerate(window):
            rows.setdefault(r["id"], r)
            origin.setdefault(r["id"], rank)
            prev, nxt = links.get(r["id"], (None, None))
            links[r["id"]] = (prev if prev is not None else (window[j - 1]["id"] if j else None),
                              nxt if nxt is not None else
                              (window[j + 1]["id"] if j + 1 < len(window) else None))
    own = {i: CHUNK_WEIGHT / (TURN_RRF_K + rank + 1) for i, rank in origin.items()}
    row_terms, weight = _turn_weights({"": list(rows.values())}, terms(query))
    lexical = sorted(
        (-sum(weight[t] for t in found), origin[i], i) for i, found in row_terms.items() if found
    )
    for lex_rank, (_neg, _rank, i) in enumerate(lexical):
        own[i] += TURN_WEIGHT / (TURN_RRF_K + lex_rank + 1)
    final = window_scores(own, links)
    order = sorted(final, key=lambda i: (-final[i], origin[i], rows[i]["spoken_at"], i))

    def line(r: dict[str, Any]) -> str:
        return f"{r['speaker_name'] or r['speaker_id']}: {r['text']}"

    chosen: set[int] = set()
    used = 0
    for i in order:  # approximate (per line) costs; the exact check is below
        cost = estimate_tokens(line(rows[i])) + 1
        if not any(n in chosen for n in links[i] if n is not None):
            cost += CITATION_TOKENS
        if used + cost <= max_tokens:
            used += cost
            chosen.add(i)
    units: list[tuple[float, int, list[int] | None]] = [
        (final[i], origin[i], _run(i, chosen, links)) for i in order if i in chosen
    ]
    units += [(score, rank, None) for score, rank in whole]
    units.sort(key=lambda u: (-u[0], u[1]))
    out: list[dict[str, Any]] = []
    done: set[int] = set()
    used = 0
    for score, rank, run in units:
        if limit is not None and len(out) >= limit:
            break
        hit, hscore, methods = hits[rank]
        if run is None:
            result = chunk_result(hit, hscore, methods)
            cost = estimate_tokens(result["text"]) + CITATION_TOKENS
            if used + cost <= max_tokens:
                used += cost
                out.append(result)
            continue
        if run[0] in done:
            continue
        done.update(run)
        selected = [rows[i] for i in run]
        text = "\n".join(line(r) for r in selected)
        cost = estimate_tokens(text) + CITATION_TOKENS
        if used + cost > max_tokens:
            continue
        used += cost
        out.append(
            {
                "text": text,
                "score": round(score, 6),
                "methods": methods,
                "chunk_id": hit.chunk.id,
                "source": {
                    "session_id": hit.chunk.session_id,
                    "when": _iso(selected[0]["spoken_at"]),
                    "until": _iso(selected[-1]["spoken_at"]),
                    "speakers": list(dict.fromkeys(r["speaker_name"] for r in selected)),
                    "entry_ids": run,
                },
                "token_estimate": cost,
            }
        )
    return out


def window_scores(
    own: dict[int, float], links: dict[int, tuple[int | None, int | None]]
) -> dict[int, float]:
    """A turn's score plus its better neighbour's: the evidence is often the turn next to the
    one that shares the question's words (LoCoMo, conversations 0-4: packing seeds with both
    neighbours 0.801, this 0.810, recall@5 0.69 -> 0.75; held out 5-9: 0.764 -> 0.788)."""
    out = {}
    for i, score in own.items():
        lift = max((own.get(n, 0.0) for n in links.get(i, ()) if n is not None), default=0.0)
        out[i] = score + lift
    return out


def _run(i: int, chosen: set[int], links: dict[int, tuple[int | None, int | None]]) -> list[int]:
    """The chosen turns adjacent to `i` (itself included), in spoken order."""
    start = i
    while (p := links[start][0]) is not None and p in chosen:
        start = p
    run = [start]
    while (n := links[run[-1]][1]) is not None and n in chosen:
        run.append(n)
    return run
