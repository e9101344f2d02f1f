"""L2 semantic index: transcript chunks and their embeddings, several models side by side,
plus one embedding per session entry (turn) and model, which session search reads by entry id.

The vector column is untyped so models of different dimensions coexist; each model has a
partial HNSW index on `embedding::vector(dim)`. Queries name the model and dimension as SQL
literals (composed with psycopg.sql, never string-formatted) so the planner can match the
partial index even with prepared statements.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import fields
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pgvector import Vector
from psycopg import sql

from glyphoxa_pipelines.db.operations import (
    Op,
    execute,
    execute_many,
    fetch_all,
    fetch_one,
    operation,
    read_operation,
)
from glyphoxa_pipelines.memory.errors import EmbeddingDimensionError, NotFoundError
from glyphoxa_pipelines.memory.models import Chunk, ChunkHit, TurnText
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.visibility import chunk_visible

_CHUNK_FIELDS = tuple(f.name for f in fields(Chunk))
# 14 parameters a row: 1,000 rows stay well under PostgreSQL's 65,535 parameters a statement
_CHUNK_ROWS_PER_STATEMENT = 1000

CHUNK_COLUMNS = (
    "c.id, c.campaign_id, c.session_id, c.seq, c.text, c.speakers, c.entity_ids, c.topic, "
    "c.first_entry_id, c.last_entry_id, c.start_at, c.end_at, c.token_count, c.chunker_version"
)


# Optional chunk filters shared by vector and full-text search; `{session}` names the column
# to filter the session on (the embedding row's copy lets the k-NN use its own index).
# `%(listener)s`: the NPC whose recall this is (`visibility.chunk_visible`), None for all.
_CHUNK_FILTERS = """
    AND (%(s)s::text IS NULL OR {session} = %(s)s)
    AND (%(sp)s::text IS NULL OR %(sp)s = ANY(c.speakers))
    AND (%(ents)s::text[] IS NULL OR c.entity_ids && %(ents)s::text[])
    AND (%(after)s::timestamptz IS NULL OR c.end_at >= %(after)s)
    AND (%(before)s::timestamptz IS NULL OR c.start_at < %(before)s)
    AND """ + chunk_visible("c").as_string()


def _filter_params(
    campaign_id: str,
    top_k: int,
    session_id: str | None,
    speaker: str | None,
    entity_ids: Sequence[str] | None,
    after: datetime | None,
    before: datetime | None,
    listener: str | None = None,
) -> dict[str, Any]:
    return {
        "c": campaign_id,
        "s": session_id,
        "sp": speaker,
        "ents": list(entity_ids) if entity_ids is not None else None,
        "after": after,
        "before": before,
        "k": top_k,
        "listener": listener,
    }


# HNSW build effort for every model's index (migration 012 sets it on existing ones): half
# pgvector's default of 64 makes embedding inserts ~40% faster, and recall@10 stays above
# 0.99 because queries search with hnsw.ef_search = 200.
HNSW_EF_CONSTRUCTION = 32


def index_name(model: str) -> str:
    return "chunk_embeddings_hnsw_" + re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")


def _as_vector(embedding: Sequence[float] | np.ndarray, model: str, dim: int) -> Vector:
    arr = np.asarray(embedding, dtype=np.float32)
    if arr.ndim != 1 or arr.shape[0] != dim:
        given = arr.shape[0] if arr.ndim == 1 else int(np.prod(arr.shape))
        raise EmbeddingDimensionError(model, dim, given)
    if not np.isfinite(arr).all():
        raise ValueError(f"embedding for model {model!r} contains NaN or infinity")
    return Vector(arr)


def knn_query(
    model: str, dim: int, *, exact: bool, chunk_filter: bool, ef_search: bool
) -> sql.Composed:
    """The k-NN statement of `SemanticIndex.search` for one model: an exact scan (`exact`: a
    session or entity filter; `chunk_filter`: another filter reads chunk columns), or the HNSW
    walk with the pool's candidate list or, with `ef_search`, the statement's own (`%(ef)s`)."""
    distance = sql.SQL("(e.embedding::vector({dim}) <=> %(v)s::vector({dim}))").format(
        dim=sql.Literal(dim)
    )
    filters = sql.SQL(
        "e.model = {model} AND e.campaign_id = %(c)s"
        + _CHUNK_FILTERS.format(session="e.session_id")
    ).format(model=sql.Literal(model))
    if exact:
        # Selective filters: an exact scan of the few matching rows beats an HNSW walk
        # that would discard most candidates (and loses no recall). The top k are picked
        # inside the CTE, so only k chunk rows are fetched afterwards; chunks is joined
        # in the scan only when a filter reads its columns (a session's ~1,000 index
        # probes into chunks cost 5 of the 6 ms this query used to take).
        scan = (
            sql.SQL(
                "chunk_embeddings e JOIN chunks c"
                " ON c.campaign_id = e.campaign_id AND c.id = e.chunk_id WHERE {}"
            ).format(filters)
            if chunk_filter
            else sql.SQL(
                "chunk_embeddings e WHERE e.model = {model} AND e.campaign_id = %(c)s"
                " AND (%(s)s::text IS NULL OR e.session_id = %(s)s)"
            ).format(model=sql.Literal(model))
        )
        return sql.SQL(
            """WITH candidates AS MATERIALIZED (
                       SELECT e.chunk_id, {distance} AS distance FROM {scan}
                       ORDER BY distance, e.chunk_id LIMIT %(k)s)
                   SELECT {cols}, x.distance FROM candidates x
                   JOIN chunks c ON c.campaign_id = %(c)s AND c.id = x.chunk_id
                   ORDER BY x.distance, c.id"""
        ).format(cols=sql.SQL(CHUNK_COLUMNS), distance=distance, scan=scan)
    if not ef_search:
        return sql.SQL(
            """SELECT {cols}, {distance} AS distance
                   FROM chunk_embeddings e
                   JOIN chunks c ON c.campaign_id = e.campaign_id AND c.id = e.chunk_id
                   WHERE {filters}
                   ORDER BY {distance} LIMIT %(k)s"""
        ).format(cols=sql.SQL(CHUNK_COLUMNS), distance=distance, filters=filters)
    # This statement's own HNSW candidate list, made LOCAL by `set_config` in an
    # InitPlan that runs before the index scan starts (and ends with the statement's
    # implicit transaction): no BEGIN / SET LOCAL / COMMIT round trips.
    return sql.SQL(
        """WITH cfg AS MATERIALIZED (
                       SELECT set_config('hnsw.ef_search', %(ef)s, true) AS ef)
                   SELECT {cols}, {distance} AS distance
                   FROM chunk_embeddings e
                   JOIN chunks c ON c.campaign_id = e.campaign_id AND c.id = e.chunk_id
                   WHERE {filters} AND (SELECT ef FROM cfg) IS NOT NULL
                   ORDER BY {distance} LIMIT %(k)s"""
    ).format(cols=sql.SQL(CHUNK_COLUMNS), distance=distance, filters=filters)


@lru_cache(maxsize=256)
def knn_statement(
    model: str, dim: int, *, exact: bool, chunk_filter: bool, ef_search: bool
) -> str:
    """`knn_query` rendered, once per form: composing and rendering it took ~0.25 ms of every
    live search's vector leg, on its critical path (figures: docs/DESIGN.md, "Session search
    latency, fourth pass"). The text equals the connection's rendering (tested)."""
    return knn_query(model, dim, exact=exact, chunk_filter=chunk_filter,
                     ef_search=ef_search).as_string(None)


class SemanticIndex:
    """Chunks + per-model embeddings; cosine k-NN with metadata filters."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._dims: dict[str, int] = {}

    # -- models ---------------------------------------------------------------------------
    def _dimension_op(self, model: str) -> Op:
        if model not in self._dims:
            row = yield fetch_one(
                "SELECT dimension FROM embedding_models WHERE name = %s", (model,)
            )
            if row is None:
                raise NotFoundError(
                    f"unknown embedding model {model!r}; register it with register_model()"
                )
            self._dims[model] = int(row["dimension"])
        return self._dims[model]

    @operation
    def register_model(self, model: str, dimension: int) -> Op:
        """Declare a model and build its partial HNSW index (idempotent)."""
        row = yield fetch_one(
            """INSERT INTO embedding_models (name, dimension) VALUES (%s, %s)
               ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING dimension""",
            (model, dimension),
        )
        if int(row["dimension"]) != dimension:
            raise EmbeddingDimensionError(model, int(row["dimension"]), dimension)
        yield execute(
            sql.SQL(
                "CREATE INDEX IF NOT EXISTS {} ON chunk_embeddings USING hnsw "
                "((embedding::vector({})) vector_cosine_ops) WITH (m = 16, ef_construction = {}) "
                "WHERE model = {}"
            ).format(
                sql.Identifier(index_name(model)),
                sql.Literal(dimension),
                sql.Literal(HNSW_EF_CONSTRUCTION),
                sql.Literal(model),
            )
        )
        self._dims[model] = dimension
        return dimension

    @read_operation
    def model_dimension(self, model: str) -> Op:
        return (yield from self._dimension_op(model))

    # -- writes ---------------------------------------------------------------------------
    def _upsert_chunks_op(self, chunks: Sequence[Chunk]) -> Op:
        """Upsert in multi-row statements: `chunks` carries statement-level triggers (the
        per-campaign lexeme counts), so one statement per row paid them per row. A chunk id
        given twice keeps its last version, as row-by-row upserts did."""
        if not chunks:
            return 0
        latest = list({(c.campaign_id, c.id): c for c in chunks}.values())
        n = 0
        for start in range(0, len(latest), _CHUNK_ROWS_PER_STATEMENT):
            batch = latest[start : start + _CHUNK_ROWS_PER_STATEMENT]
            row = sql.SQL("({})").format(
                sql.SQL(", ").join([sql.Placeholder()] * len(_CHUNK_FIELDS))
            )
            query = sql.SQL(
                """INSERT INTO chunks ({columns})
               VALUES {rows}
               ON CONFLICT (campaign_id, id) DO UPDATE SET text = EXCLUDED.text,
                   speakers = EXCLUDED.speakers, entity_ids = EXCLUDED.entity_ids,
                   topic = EXCLUDED.topic, first_entry_id = EXCLUDED.first_entry_id,
                   last_entry_id = EXCLUDED.last_entry_id, start_at = EXCLUDED.start_at,
                   end_at = EXCLUDED.end_at, token_count = EXCLUDED.token_count,
                   chunker_version = EXCLUDED.chunker_version, created_at = now()"""
            ).format(
                columns=sql.SQL(", ").join(map(sql.Identifier, _CHUNK_FIELDS)),
                rows=sql.SQL(", ").join([row] * len(batch)),
            )
            params = [getattr(c, f) for c in batch for f in _CHUNK_FIELDS]
            n += yield execute(query, params)
        return n

    def _upsert_embeddings_op(
        self, model: str, items: Sequence[tuple[str, Sequence[float] | np.ndarray]]
    ) -> Op:
        if not items:
            return 0
        dim = yield from self._dimension_op(model)
        vectors = [(cid, _as_vector(vec, model, dim)) for cid, vec in items]
        n = yield execute_many(
            """INSERT INTO chunk_embeddings (chunk_id, model, campaign_id, session_id, embedding)
               SELECT c.id, %s, c.campaign_id, c.session_id, %s FROM chunks c WHERE c.id = %s
               ON CONFLICT (campaign_id, chunk_id, model)
               DO UPDATE SET embedding = EXCLUDED.embedding,
                   created_at = now()""",
            [(model, vec, cid) for cid, vec in vectors],
        )
        return n

    @operation
    def index_chunks(
        self,
        chunks: Sequence[Chunk],
        embeddings: Sequence[Sequence[float]] | np.ndarray | None = None,
        *,
        model: str | None = None,
    ) -> Op:
        """Bulk upsert chunks, and their embeddings for `model` when given (same order)."""
        n = yield from self._upsert_chunks_op(chunks)
        if embeddings is not None:
            if model is None:
                raise ValueError("index_chunks: embeddings given without a model")
            if len(embeddings) != len(chunks):
                raise ValueError(
                    f"index_chunks: {len(chunks)} chunks but {len(embeddings)} embeddings"
                )
            yield from self._upsert_embeddings_op(
                model, [(c.id, e) for c, e in zip(chunks, embeddings, strict=True)]
            )
        return n

    @operation
    def replace_session_chunks(self, session_id: str, chunks: Sequence[Chunk]) -> Op:
        """Make `chunks` the session's whole chunk set in one transaction (reprocessing).
        Embeddings of chunks whose text did not change survive; others are dropped."""
        ids = [c.id for c in chunks]
        yield execute(
            "DELETE FROM chunks WHERE session_id = %s AND NOT (id = ANY(%s))", (session_id, ids)
        )
        changed = yield fetch_all(
            "SELECT id, text FROM chunks WHERE session_id = %s", (session_id,)
        )
        new_text = {c.id: c.text for c in chunks}
        stale = [r["id"] for r in changed if new_text.get(r["id"]) != r["text"]]
        if stale:
            yield execute(
                """DELETE FROM chunk_embeddings e USING chunks c
                   WHERE c.id = ANY(%s) AND e.campaign_id = c.campaign_id AND e.chunk_id = c.id""",
                (stale,),
            )
        n = yield from self._upsert_chunks_op(chunks)
        return n

    @operation
    def add_embeddings(
        self, model: str, items: Sequence[tuple[str, Sequence[float] | np.ndarray]]
    ) -> Op:
        """Store (chunk id, embedding) pairs for `model`; dimension checked before writing."""
        return (yield from self._upsert_embeddings_op(model, items))

    @operation
    def add_entry_embeddings(
        self,
        model: str,
        items: Sequence[tuple[int, Sequence[float] | np.ndarray]],
        *,
        texts: Sequence[str] | None = None,
    ) -> Op:
        """Store (entry id, embedding) pairs for `model` (upsert); every dimension is checked
        before anything is written. `texts` (same order): the entry text each vector was made
        from; a row is then written only if the entry still has that text, so a correction
        committed meanwhile (whose trigger drops the entry's embeddings) is never undone by a
        vector of the old text. Entries that no longer exist are skipped."""
        if not items:
            return 0
        if texts is not None and len(texts) != len(items):
            raise ValueError(f"add_entry_embeddings: {len(items)} items but {len(texts)} texts")
        dim = yield from self._dimension_op(model)
        rows = [
            (model, _as_vector(vec, model, dim), int(eid), None if texts is None else texts[i])
            for i, (eid, vec) in enumerate(items)
        ]
        # FOR SHARE waits for an uncommitted text update of the entry and re-checks its text.
        n = yield execute_many(
            """INSERT INTO entry_embeddings (model, embedding, entry_id, campaign_id, session_id)
               SELECT %s, %s, e.id, e.campaign_id, e.session_id FROM session_entries e
               WHERE e.id = %s AND (%s::text IS NULL OR e.text = %s)
               FOR SHARE OF e
               ON CONFLICT (campaign_id, entry_id, model)
               DO UPDATE SET embedding = EXCLUDED.embedding,
                   created_at = now()""",
            [(m, v, eid, t, t) for m, v, eid, t in rows],
        )
        return n

    # -- reads ----------------------------------------------------------------------------
    @read_operation
    def get_chunks(self, session_id: str) -> Op:
        rows = yield fetch_all(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.session_id = %s ORDER BY c.seq",
            (session_id,),
        )
        return [from_row(Chunk, r) for r in rows]

    @read_operation
    def chunks_missing_embeddings(
        self, model: str, *, campaign_id: str | None = None, session_id: str | None = None
    ) -> Op:
        rows = yield fetch_all(
            f"""SELECT {CHUNK_COLUMNS} FROM chunks c
                WHERE (%(c)s::text IS NULL OR c.campaign_id = %(c)s)
                  AND (%(s)s::text IS NULL OR c.session_id = %(s)s)
                  AND NOT EXISTS (SELECT 1 FROM chunk_embeddings e
                                  WHERE e.campaign_id = c.campaign_id AND e.chunk_id = c.id
                                    AND e.model = %(m)s)
                ORDER BY c.session_id, c.seq""",
            {"c": campaign_id, "s": session_id, "m": model},
        )
        return [from_row(Chunk, r) for r in rows]

    @read_operation
    def entries_missing_embeddings(self, model: str, *, session_id: str) -> Op:
        """The session's turns with no embedding for `model`, in spoken order (an unknown
        model is an error, not "everything missing")."""
        yield from self._dimension_op(model)
        rows = yield fetch_all(
            """SELECT e.id, e.text, coalesce(nullif(e.speaker_name, ''), e.speaker_id) AS speaker
               FROM session_entries e
               WHERE e.session_id = %(s)s
                 AND NOT EXISTS (SELECT 1 FROM entry_embeddings x
                                 WHERE x.campaign_id = e.campaign_id AND x.entry_id = e.id
                                   AND x.model = %(m)s)
               ORDER BY e.spoken_at, e.id""",
            {"s": session_id, "m": model},
        )
        return [TurnText(int(r["id"]), r["text"], r["speaker"]) for r in rows]

    def _search_op(
        self,
        campaign_id: str,
        embedding: Sequence[float] | np.ndarray,
        top_k: int,
        *,
        model: str | None,
        session_id: str | None,
        speaker: str | None,
        entity_ids: Sequence[str] | None,
        after: datetime | None,
        before: datetime | None,
        ef_search: int | None = None,
        listener: str | None = None,
    ) -> Op:
        if model is None:
            row = yield fetch_one(
                "SELECT active_embedding_model FROM campaigns WHERE id = %s", (campaign_id,)
            )
            if row is None:
                raise NotFoundError(f"unknown campaign {campaign_id!r}")
            model = row["active_embedding_model"]
        dim = yield from self._dimension_op(model)
        vec = _as_vector(embedding, model, dim)
        if top_k <= 0:
            return []
        exact = session_id is not None or entity_ids is not None
        # chunks is joined in an exact scan only when a filter reads its columns
        chunk_filter = exact and any(
            x is not None for x in (speaker, entity_ids, after, before, listener)
        )
        query = knn_statement(model, dim, exact=exact, chunk_filter=chunk_filter,
                              ef_search=ef_search is not None)
        params = _filter_params(
            campaign_id, top_k, session_id, speaker, entity_ids, after, before, listener
        )
        if ef_search is not None:
            params["ef"] = str(int(ef_search))
        rows = yield fetch_all(query, dict(params, v=vec))
        return [ChunkHit(from_row(Chunk, r), float(r["distance"]), "vector") for r in rows]

    @read_operation
    def search(
        self,
        campaign_id: str,
        embedding: Sequence[float] | np.ndarray,
        top_k: int = 10,
        *,
        model: str | None = None,
        session_id: str | None = None,
        speaker: str | None = None,
        entity_id: str | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
        ef_search: int | None = None,
        listener: str | None = None,
    ) -> Op:
        """k nearest chunks by cosine distance (ascending), within one campaign.
        `ef_search` sets this statement's HNSW candidate list (the pool's is 200, for recall
        above 0.99); a session or entity filter scans exactly and needs none. `listener`: only
        chunks that NPC may recall (`visibility.chunk_visible`); None, every chunk."""
        return (
            yield from self._search_op(
                campaign_id,
                embedding,
                top_k,
                model=model,
                session_id=session_id,
                speaker=speaker,
                entity_ids=[entity_id] if entity_id else None,
                after=after,
                before=before,
                ef_search=ef_search,
                listener=listener,
            )
        )

    @read_operation
    def fulltext_search(
        self,
        campaign_id: str,
        query: str,
        top_k: int = 10,
        *,
        session_id: str | None = None,
        speaker: str | None = None,
        entity_ids: Sequence[str] | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
        rank: Literal["cover_density", "frequency"] = "cover_density",
        listener: str | None = None,
    ) -> Op:
        """Full-text over chunks (OR of the query's words), best rank first. `rank`:
        `ts_rank_cd` (cover density, proximity counts) or `ts_rank` (term frequency, ~4x
        cheaper per matching chunk: what the live search uses)."""
        tsquery = or_tsquery(query)
        if tsquery is None:
            return []
        rank_fn = "ts_rank_cd" if rank == "cover_density" else "ts_rank"
        rows = yield fetch_all(
            f"""SELECT {CHUNK_COLUMNS}, {rank_fn}(c.tsv, q) AS rank
                FROM chunks c, to_tsquery('english', %(q)s) q
                WHERE c.campaign_id = %(c)s AND c.tsv @@ q
                {_CHUNK_FILTERS.format(session="c.session_id")}
                ORDER BY rank DESC, c.session_id, c.seq LIMIT %(k)s""",
            dict(
                _filter_params(
                    campaign_id, top_k, session_id, speaker, entity_ids, after, before, listener
                ),
                q=tsquery,
            ),
        )
        return [ChunkHit(from_row(Chunk, r), float(r["rank"]), "fulltext") for r in rows]


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)


def or_tsquery(text: str) -> str | None:
    """A to_tsquery string OR-ing the words of `text` (each quoted as a lexeme source), so a
    natural-language question matches chunks that share any of its terms; ranking does the
    rest. Stop words are dropped by PostgreSQL's English configuration.

    None when `text` has no word at all (`?`, `(((`, emoji): there is nothing to match, and
    an empty quoted lexeme is a tsquery syntax error. Callers skip the full-text leg then.
    Only letters and digits reach the string, so it is always valid tsquery syntax."""
    words = [w.replace("'", "") for w in _WORD.findall(text)]
    return " | ".join(f"'{w}'" for w in dict.fromkeys(words) if w) or None
