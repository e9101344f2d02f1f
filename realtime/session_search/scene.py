"""The best windows widened into their scene: the turns just before and after each.

A chunk window is cut by the chunker's token budget, not by where the talk about something
starts and ends. On real play (short table-talk turns: "I roll", "Nat 20", a DM's line) the
run of turns an event took is often wider than the window that matches its words, and the
turns a question is about sit just outside it. The legs cannot find those turns (they rank
chunks), so the best windows are widened by the turns around them, counted in tokens, not
turns: a scene is a stretch of talk, and a dozen one-line turns take what three long messages
do. Widened turns join their window (its rank, its links), so the turn model ranks them with
everything else. A listener's scope applies per turn (`visibility.dialogue_visible`): a widened
window never shows a line the NPC did not hear.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np
from pgvector import Vector
from psycopg import sql

from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory.visibility import dialogue_visible
from realtime.hot_context import estimate_tokens

# What a widened turn carries beside the window's own turn rows (benches strip them to
# replay the unwidened candidates).
SCENE_MARK = "scene"


@cache
def scene_statement(scored: bool) -> str:
    """`scene_turns_op`'s statement, with each turn's cosine to `%(v)s` under `%(m)s` or
    without (NULL). Composed once per form: composing and rendering it took ~0.1 ms a search."""
    similarity = sql.SQL(
        "(SELECT 1 - (x.embedding <=> %(v)s::vector) FROM entry_embeddings x"
        " WHERE x.campaign_id = e.campaign_id AND x.entry_id = e.id AND x.model = %(m)s)"
    ) if scored else sql.SQL("NULL::float8")
    side = sql.SQL(
        """(SELECT {dir} AS side, e.id, e.speaker_name, e.speaker_id, e.text, e.spoken_at,
                   {sim} AS similarity
            FROM (SELECT n.*, row_number() OVER w AS k,
                         sum((length(n.text) + 3) / 4 + 1) OVER w AS upto
                  FROM (SELECT e.id, e.campaign_id, e.speaker_name, e.speaker_id, e.text,
                               e.spoken_at
                        FROM session_entries e
                        WHERE e.session_id = c.session_id
                          AND e.spoken_at {cmp_eq} {edge}.spoken_at
                          AND (e.spoken_at, e.id) {cmp} ({edge}.spoken_at, {edge}.id)
                          AND {visible}
                        ORDER BY e.spoken_at {order}, e.id {order} LIMIT %(most)s) n
                  WINDOW w AS (ORDER BY n.spoken_at {order}, n.id {order})) e
            WHERE e.k = 1 OR e.upto <= %(tokens)s)""")
    visible = dialogue_visible("e")
    before = side.format(dir=sql.Literal("before"), sim=similarity, cmp_eq=sql.SQL("<="),
                         cmp=sql.SQL("<"), edge=sql.Identifier("f"), visible=visible,
                         order=sql.SQL("DESC"))
    after = side.format(dir=sql.Literal("after"), sim=similarity, cmp_eq=sql.SQL(">="),
                        cmp=sql.SQL(">"), edge=sql.Identifier("l"), visible=visible,
                        order=sql.SQL("ASC"))
    query = sql.SQL(
        """SELECT c.id AS chunk_id, t.*
           FROM chunks c
           JOIN session_entries f ON f.id = c.first_entry_id
           JOIN session_entries l ON l.id = c.last_entry_id
           CROSS JOIN LATERAL ({before} UNION ALL {after}) t
           WHERE c.id = ANY(%(ids)s)""").format(before=before, after=after)
    return query.as_string(None)


def scene_turns_op(
    chunk_ids: Sequence[str],
    tokens: int,
    *,
    listener: str | None = None,
    query_vector: np.ndarray | None = None,
    model: str | None = None,
) -> Op[dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]]:
    """The turns of each chunk's session just before its first turn and just after its last
    (the listener's only), as many as fit in `tokens` on each side (the nearest always; the
    cost `within_tokens` counts), each with its cosine to `query_vector` under `model` (None
    without a stored vector), nearest first: chunk id -> (before, after). The budget is cut in
    the statement, so only the turns kept are compared with the query."""
    if not chunk_ids or tokens <= 0:
        return {}
    scored = query_vector is not None and model is not None
    extra: dict[str, Any] = ({"v": Vector(np.asarray(query_vector, dtype=np.float32)),
                              "m": model} if scored else {})
    # Rows read per side before the budget is summed: a turn costs at least 2 (its line).
    most = max(1, tokens // 2)
    query = scene_statement(scored)
    rows = yield fetch_all(query, {"ids": list(chunk_ids), "most": most, "tokens": tokens,
                                   "listener": listener, **extra},
                           generic_plan=True)  # index probes whatever the windows: DESIGN.md
    out: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
        cid: ([], []) for cid in chunk_ids}
    for r in rows:
        if r["similarity"] is not None:
            r["similarity"] = float(r["similarity"])
        out[r.pop("chunk_id")][0 if r.pop("side") == "before" else 1].append(r)
    for before_rows, after_rows in out.values():  # nearest first
        before_rows.sort(key=lambda r: (r["spoken_at"], r["id"]), reverse=True)
        after_rows.sort(key=lambda r: (r["spoken_at"], r["id"]))
    return out


def within_tokens(rows: Sequence[dict[str, Any]], tokens: int) -> list[dict[str, Any]]:
    """The nearest of `rows` (nearest first) whose text fits in `tokens` together; the first
    turn always, so a long message next to a window still counts as its scene."""
    out: list[dict[str, Any]] = []
    used = 0
    for r in rows:
        cost = estimate_tokens(str(r["text"])) + 1
        if out and used + cost > tokens:
            break
        used += cost
        out.append(r)
    return out


def widen(
    turns: Mapping[str, list[dict[str, Any]]],
    around: Mapping[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]],
    tokens: int,
) -> dict[str, list[dict[str, Any]]]:
    """Each window's turns with up to `tokens` of its scene's turns on either side, in spoken
    order, the added ones marked `SCENE_MARK`. A window without turns (none fetched) stays
    empty: it competes whole as its text. Pure."""
    out = {cid: list(rows) for cid, rows in turns.items()}
    for cid, (before, after) in around.items():
        own = out.get(cid)
        if not own:
            continue
        seen = {r["id"] for r in own}
        lead = [r | {SCENE_MARK: True} for r in reversed(within_tokens(before, tokens))
                if r["id"] not in seen]
        tail = [r | {SCENE_MARK: True} for r in within_tokens(after, tokens)
                if r["id"] not in seen]
        out[cid] = lead + own + tail
    return out
