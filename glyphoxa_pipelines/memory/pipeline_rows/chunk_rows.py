"""Transcript entries, chunks and their embeddings as the pipeline checks and refreshes them:
coverage figures for the asset checks, a session's chunk vectors, and the entity tags of
chunks once extraction knows more names."""

from __future__ import annotations

from collections.abc import Sequence

from glyphoxa_pipelines.db.operations import Op, execute_many, fetch_all, fetch_one


def correction_coverage_op(session_id: str, corrector_version: str) -> Op:
    row = yield fetch_one(
        """SELECT count(*) AS entries,
                  count(*) FILTER (WHERE corrector_version IS DISTINCT FROM %s) AS uncorrected
           FROM session_entries WHERE session_id = %s""",
        (corrector_version, session_id),
    )
    return row


def chunk_coverage_op(session_id: str) -> Op:
    """Entries no chunk's [first_entry, last_entry] span covers (in spoken order). Computed
    from two index scans in Python: linear, and immune to the planner misjudging fresh tables."""
    entries = yield fetch_all(
        """SELECT id FROM session_entries WHERE session_id = %s AND btrim(text) <> ''
           ORDER BY spoken_at, id""",
        (session_id,),
    )
    spans = yield fetch_all(
        "SELECT first_entry_id, last_entry_id FROM chunks WHERE session_id = %s",
        (session_id,),
    )
    position = {r["id"]: n for n, r in enumerate(entries)}
    delta = [0] * (len(entries) + 1)
    for span in spans:
        lo = position.get(span["first_entry_id"])
        hi = position.get(span["last_entry_id"])
        if lo is None or hi is None or hi < lo:
            continue
        delta[lo] += 1
        delta[hi + 1] -= 1
    uncovered = depth = 0
    for n in range(len(entries)):
        depth += delta[n]
        uncovered += depth == 0
    return {"entries": len(entries), "uncovered": uncovered}


def embedding_coverage_op(session_id: str, model: str, max_tokens: int) -> Op:
    row = yield fetch_one(
        """SELECT count(*) AS chunks,
                  count(*) FILTER (WHERE NOT EXISTS (
                      SELECT 1 FROM chunk_embeddings e
                      WHERE e.campaign_id = c.campaign_id AND e.chunk_id = c.id
                        AND e.model = %s)) AS missing,
                  count(*) FILTER (WHERE c.token_count > %s) AS over_limit,
                  coalesce(max(c.token_count), 0) AS max_tokens
           FROM chunks c WHERE c.session_id = %s""",
        (model, max_tokens, session_id),
    )
    return row


def turn_embedding_coverage_op(session_id: str, model: str) -> Op:
    """The session's entries and how many have no per-turn embedding for `model`."""
    row = yield fetch_one(
        """SELECT count(*) AS entries,
                  count(*) FILTER (WHERE NOT EXISTS (
                      SELECT 1 FROM entry_embeddings x
                      WHERE x.campaign_id = e.campaign_id AND x.entry_id = e.id
                        AND x.model = %s)) AS missing
           FROM session_entries e WHERE e.session_id = %s""",
        (model, session_id),
    )
    return row


def chunk_vectors_op(session_id: str, model: str) -> Op:
    """{chunk id: embedding} of one session for one model (numpy arrays via pgvector)."""
    rows = yield fetch_all(
        """SELECT e.chunk_id, e.embedding FROM chunk_embeddings e
           WHERE e.session_id = %s AND e.model = %s""",
        (session_id, model),
    )
    return {r["chunk_id"]: r["embedding"] for r in rows}


def set_chunk_entities_op(updates: Sequence[tuple[str, list[str]]]) -> Op:
    """(chunk id, entity ids): refresh what chunks mention once extraction knows more names."""
    if not updates:
        return 0
    n = yield execute_many(
        """UPDATE chunks SET entity_ids = %s
           WHERE id = %s AND entity_ids IS DISTINCT FROM %s""",
        [(ids, cid, ids) for cid, ids in updates],
    )
    return n
