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
from datetime import UTC, datetime
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

from realtime.session_search.config import SESSION_SEARCH
from realtime.session_search.outcome import Fused
from realtime.tools.results import CHARS_PER_TOKEN, chunk_result, iso_minute, reader_chars
from realtime.turn_ranking import Links, evidence_probability, turn_scores

# One result per session: its chosen turns in spoken order, a `…` line where turns are
# skipped (better recall within a budget than a result, and its citation, per run).
GAP = "…"
NEWLINE_CHARS = 2  # a line break inside a JSON string is sent as `\n`
GAP_CHARS = len(GAP) + NEWLINE_CHARS
ID_SEP_CHARS = 2  # `, ` between two ids or names of a citation's list
# The latest time a citation can show, for its cost (`iso_minute` is fixed-width today).
WIDEST_TIME = datetime.max.replace(tzinfo=UTC)
# The probability a result carries: enough to order and trim by, not six digits to read.
SCORE_DIGITS = 2
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


def turn_line(row: Mapping[str, Any]) -> str:
    """A turn as the model reads it: who spoke, then what was said."""
    return f"{row['speaker_name'] or row['speaker_id']}: {row['text']}"


def session_result(text: str, score: float, session_id: str,
                   spoken: list[Mapping[str, Any]]) -> dict[str, Any]:
    """A session's packed turns as the tool returns them: the text (each line names its
    speaker), the probability of its best turn, and one citation for all its turns: the
    session, when its first chosen turn was spoken, the entry ids. Every character is read by
    the model and paid from the budget, so nothing it does not use rides along (the hot
    context cites session and time; benches and the DM cite entry ids)."""
    return {
        "text": text,
        "score": round(score, SCORE_DIGITS),
        "source": {
            "session_id": session_id,
            "when": iso_minute(spoken[0]["spoken_at"]) if spoken else None,
            "entry_ids": [r["id"] for r in spoken],
        },
    }


def json_chars(text: str) -> int:
    """Characters of `text` inside a JSON string as sent (escapes counted, quotes not):
    the encoder `json.dumps` itself uses for strings, without its per-call set-up."""
    return len(encode_basestring(text)) - 2


def turn_chars(line: str, entry_id: int) -> int:
    """What one more turn adds to its session's result as sent: its escaped line, the line
    break before it and its entry id in the citation."""
    return json_chars(line) + NEWLINE_CHARS + len(str(entry_id)) + ID_SEP_CHARS


@lru_cache(maxsize=1 << 12)  # a JSON encoding per session tried, per search, otherwise
def citation_chars(session_id: str) -> int:
    """What opening a session's result costs before any turn: its keys, its citation (at
    the widest time it can show) and the separator from the next result."""
    widest = {"id": 0, "spoken_at": WIDEST_TIME}
    return reader_chars(session_result("", 1 / 3, session_id, [widest])) - len("0")


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
    (`packing_order`), until the answer as the model reads it (`results.reader_chars`: the
    JSON, keys and citations included) would pass `max_tokens`.
    The chosen turns of one session become one result, in spoken order, with one citation
    (session, time span, speakers, entry ids); runs that are not adjacent are separated by
    a `…` line. Results come best first (by their most probable turn); at most `limit` of them (the
    tool's `top_k`): a turn that would open a session beyond that is passed over. A window with
    no turns (none fetched) competes whole, as one pseudo-turn and its own result. Turn rows
    may carry `similarity` (cosine to the query; None or absent when the turn has no
    embedding). `scorer` is the turn model (benches replay others)."""
    rows, origin, links, whole = candidate_turns(hits, turns)
    final = scorer(rows, origin, links, query)
    budget = max_tokens * CHARS_PER_TOKEN

    def group_of(i: int) -> str | int:
        return i if i in whole else hits[origin[i]][0].chunk.session_id

    def whole_result(i: int) -> dict[str, Any]:
        return chunk_result(hits[origin[i]][0], evidence_probability(final[i]),
                            hits[origin[i]][2])

    # Per turn: its escaped line, the newline before it and its entry id in the citation.
    costs = {i: reader_chars(whole_result(i)) if i in whole
             else turn_chars(turn_line(rows[i]), i) for i in final}
    order = packing_order(final, {i: -(-c // CHARS_PER_TOKEN) for i, c in costs.items()},
                          origin, cost_exponent)

    # Approximate costs (a gap counted wherever a turn joins no chosen neighbour), an upper
    # bound of the exact check below.
    groups: dict[str | int, list[int]] = {}  # session (or pseudo-turn) -> chosen, best first
    citations: dict[str | int, int] = {}
    used = 0
    for i in order:
        key = group_of(i)
        if key not in groups and limit is not None and len(groups) >= limit:
            continue
        cost = costs[i]
        if i not in whole:
            if key not in groups:
                if key not in citations:  # tried by many turns of a session not yet opened
                    citations[key] = citation_chars(str(key))
                cost += citations[key]
            elif not any(n in groups[key] for n in links[i] if n is not None):
                cost += GAP_CHARS
        if used + cost <= budget:
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
        if best in whole:
            result = whole_result(best)
        else:
            spoken = sorted(chosen, key=lambda j: (rows[j]["spoken_at"], j))
            lines: list[str] = []
            for k, j in enumerate(spoken):
                if k and links[spoken[k - 1]][1] != j:
                    lines.append(GAP)
                lines.append(turn_line(rows[j]))
            result = session_result("\n".join(lines), evidence_probability(final[best]),
                                    str(key), [rows[j] for j in spoken])
        cost = reader_chars(result)
        if used + cost > budget:  # never, while the estimate above stays an upper bound
            continue
        used += cost
        out.append(result)
    return out
