"""Turn-level packing of session search: the turns of the fused windows, scored one by one
(`turn_ranking.py`), packed into a token budget by evidence per token, one result per session
in spoken order, results best first. Pure: no database.

The budget is the scarce thing, not the number of turns: a long turn that is a little more
likely to be evidence than three short ones costs what the three do. Turns are therefore
taken in order of `p / cost ** cost_exponent` (p the turn model's evidence probability, cost
the turn's line in tokens): at 0 the most probable first whatever their length, at 1 the
knapsack order for a calibrated p. The turn model already rewards length (long turns hold
answers), so the exponent is a damped half-way (`SearchConfig.cost_exponent`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from realtime.hot_context import estimate_tokens
from realtime.session_search.config import SESSION_SEARCH
from realtime.session_search.outcome import Fused
from realtime.tools.results import chunk_result, iso
from realtime.turn_ranking import Links, evidence_probability, turn_scores

CITATION_TOKENS = 12  # what the session / time / speakers line of a result costs the reader
# One result per session: its chosen turns in spoken order, a `…` line where turns are
# skipped (better recall within a budget than a result, and its citation line, per run).
GAP = "…"
GAP_TOKENS = 1
# (rows, origin, links, query) -> each candidate turn's log-odds (`turn_ranking.turn_scores`).
Scorer = Callable[[Mapping[int, Mapping[str, Any]], Mapping[int, int], Links, str],
                  Mapping[int, float]]


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


def log_probability(score: float) -> float:
    """log of a log-odds' probability, without underflow for very unlikely turns."""
    return -math.log1p(math.exp(-score)) if score > -30.0 else score


def packing_order(final: Mapping[int, float], costs: Mapping[int, int],
                  origin: Mapping[int, int], cost_exponent: float) -> list[int]:
    """Candidate turns in the order packing takes them: evidence per token,
    `log p - cost_exponent * log cost` (ties: the better window, then id)."""
    value = {i: log_probability(s) - cost_exponent * math.log(max(1, costs[i]))
             for i, s in final.items()}
    return sorted(final, key=lambda i: (-value[i], origin[i], i))


def passages(
    hits: list[Fused],
    turns: dict[str, list[dict[str, Any]]],
    query: str,
    max_tokens: int,
    limit: int | None = None,
    scorer: Scorer = turn_scores,
    cost_exponent: float = SESSION_SEARCH.cost_exponent,
) -> list[dict[str, Any]]:
    """Turn-level packing: every turn of a candidate window is scored on its own
    (`turn_ranking.turn_scores`: its window's rank, its own similarity, its query words, its
    neighbours', who speaks), and the turns are packed one by one, by evidence per token
    (`packing_order`), until `max_tokens`.
    The chosen turns of one session become one result, in spoken order, with one citation
    line (session, time span, speakers, entry ids); runs that are not adjacent are separated by
    a `…` line. Results come best first (by their most probable turn); at most `limit` of them (the
    tool's `top_k`): a turn that would open a session beyond that is passed over. A window with
    no turns (none fetched) competes whole, as one pseudo-turn and its own result. Turn rows
    may carry `similarity` (cosine to the query; None or absent when the turn has no
    embedding). `scorer` is the turn model (benches replay others)."""
    rows, origin, links, whole = candidate_turns(hits, turns)
    final = scorer(rows, origin, links, query)

    def line(r: dict[str, Any]) -> str:
        return f"{r['speaker_name'] or r['speaker_id']}: {r['text']}"

    def group_of(i: int) -> str | int:
        return i if i in whole else hits[origin[i]][0].chunk.session_id

    costs = {i: estimate_tokens(rows[i]["text"] if i in whole else line(rows[i])) + 1
             for i in final}
    order = packing_order(final, costs, origin, cost_exponent)

    # Approximate (per line, rounded up) costs, an upper bound of the exact check below.
    groups: dict[str | int, list[int]] = {}  # session (or pseudo-turn) -> chosen, best first
    used = 0
    for i in order:
        key = group_of(i)
        if key not in groups and limit is not None and len(groups) >= limit:
            continue
        cost = costs[i]
        if key not in groups:
            cost += CITATION_TOKENS
        elif not any(n in groups[key] for n in links[i] if n is not None):
            cost += GAP_TOKENS
        if used + cost <= max_tokens:
            used += cost
            groups.setdefault(key, []).append(i)
    def rank(i: int) -> tuple[float, int, int]:
        return (-final[i], origin[i], i)

    out: list[dict[str, Any]] = []
    used = 0
    # Results in order of their most probable turn: the first result is the likeliest
    # answer, whatever the per-token order picked first.
    for key, chosen in sorted(groups.items(), key=lambda kv: min(rank(i) for i in kv[1])):
        best = min(chosen, key=rank)
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
                    "when": iso(rows[spoken[0]]["spoken_at"]),
                    "until": iso(rows[spoken[-1]]["spoken_at"]),
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
