"""Pseudo-relevance feedback on vectors (Rocchio): a second vector search from the query moved
towards the windows both legs ranked best.

A question that names none of its answer's words ("What might John's hobbies be?") and sits far
from it in embedding space never brings the answer's windows into the candidates, whatever the
turn model does with them afterwards. The best fused windows of the first pass are usually
about the right subject, so their centroid pulls the query towards that subject's other
mentions: `q' = q / |q| + beta * mean(d / |d|)`, normalized. The second search's chunks join
the fusion as a third ranked list; the turns are still compared with the original query.
Only chunks the first pass returned feed the centroid, so a listener's scope holds (the
second search applies the same filters, `visibility.chunk_visible` included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from glyphoxa_pipelines.db.operations import Op, fetch_all


def chunk_vectors_op(
    campaign_id: str, chunk_ids: Sequence[str], model: str
) -> Op[list[np.ndarray]]:
    """The stored vectors of `chunk_ids` under `model`, in the order asked (a chunk without one
    is left out)."""
    if not chunk_ids:
        return []
    rows = yield fetch_all(
        "SELECT chunk_id, embedding FROM chunk_embeddings"
        " WHERE campaign_id = %(c)s AND model = %(m)s AND chunk_id = ANY(%(ids)s)",
        {"c": campaign_id, "m": model, "ids": list(chunk_ids)},
    )
    # The column is untyped `vector` (each model its own dimension): pgvector hands it back
    # as its `Vector`, not as an array.
    by_id = {r["chunk_id"]: np.asarray(r["embedding"].to_numpy(), dtype=np.float32)
             for r in rows}
    return [by_id[c] for c in chunk_ids if c in by_id]


def rocchio(query: np.ndarray, feedback: Sequence[np.ndarray], beta: float) -> np.ndarray:
    """The query moved towards the mean of the feedback vectors (each unit length first, so a
    long window does not outweigh a short one), unit length; the query itself (as float32)
    without feedback or with `beta` 0."""
    q = np.asarray(query, dtype=np.float32)
    if q.ndim != 1 or not np.isfinite(q).all():
        raise ValueError("rocchio: the query must be one finite vector")
    if beta < 0:
        raise ValueError(f"rocchio: beta must be >= 0, not {beta}")
    if not feedback or beta == 0:
        return q
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        raise ValueError("rocchio: the query vector is all zeros")
    docs = np.vstack([np.asarray(d, dtype=np.float32) for d in feedback])
    if docs.shape[1] != q.shape[0]:
        raise ValueError(f"rocchio: feedback vectors have {docs.shape[1]} dimensions, "
                         f"the query {q.shape[0]}")
    lengths = np.linalg.norm(docs, axis=1, keepdims=True)
    docs = docs[lengths[:, 0] > 0] / lengths[lengths[:, 0] > 0]
    if not len(docs):
        return q
    moved = q / norm + beta * docs.mean(axis=0)
    return (moved / np.linalg.norm(moved)).astype(np.float32)
