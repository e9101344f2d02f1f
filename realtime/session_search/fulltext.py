"""The full-text leg of session search, bounded by the words it ranks rather than by a clock.

A full-text leg that ORs every word of a question ranks every chunk holding any of them: on a
large campaign a question of common words ("what did the party do in the city?") matches most
chunks, and ranking them all costs tens of milliseconds. The leg used to be waited for only
until a deadline, so under load the vector leg answered alone and the same question got
different memories. Here the cost is bounded by the data instead: each word's chunk count in
the campaign is read first (counted only up to `common_word_chunks`, so the count itself is
bounded), words at that count are dropped (a word in that many chunks says little about which
one answers; the vector leg still reads it), and only the `fulltext_words` rarest remaining
words are ranked. Which words are kept depends on the stored chunks alone, never on timing, so
the answer is the same on an idle machine and a saturated one, and the search always waits for
it. Small campaigns (fewer chunks than the cap) keep every word.

Scope (which chunks a caller may see) is one more SQL arm: `ranked_op` takes a composed
`sql.Composable` condition on `c` (a `chunks` row) and its parameters, which the visibility
module's session arm can supply.

The leg is one statement (`fulltext_op`): the counts, the pick and the ranking run in the
server, in one round trip and no transaction. As five round trips (BEGIN, the statement limit,
counts, ranking, COMMIT) its few milliseconds of database work cost several times that on a
loaded machine, each trip waiting for the backend and then the event loop to be scheduled.
Word counts come from `chunk_lexeme_counts` (migration 025: one key probe a word, where
counting a common word's chunks read hundreds of heap rows). The SQL pick is `pick_words`' rule
word for word (rarest first, ties by the word in code-point order, `COLLATE "C"`) and builds
the same tsquery string, so it ranks exactly what the two-step form (`fulltext_two_step_op`,
kept as the reference the tests compare it with) ranked. Figures: docs/DESIGN.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from psycopg import sql

from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory.models import Chunk, ChunkHit
from glyphoxa_pipelines.memory.rows import from_row
from glyphoxa_pipelines.memory.semantic_index import CHUNK_COLUMNS, or_tsquery

# The filters every search leg understands, on a `chunks` row aliased `c`.
CHUNK_FILTERS = sql.SQL(
    " AND (%(s)s::text IS NULL OR c.session_id = %(s)s)"
    " AND (%(sp)s::text IS NULL OR %(sp)s = ANY(c.speakers))"
    " AND (%(after)s::timestamptz IS NULL OR c.end_at >= %(after)s)"
    " AND (%(before)s::timestamptz IS NULL OR c.start_at < %(before)s)"
)
NO_SCOPE: tuple[sql.Composable, Mapping[str, Any]] = (sql.SQL("TRUE"), {})


@dataclass(frozen=True, slots=True)
class WordPick:
    """The words the leg ranks, and those it left out because too many chunks hold them."""

    kept: tuple[str, ...]
    common: tuple[str, ...]

    @property
    def tsquery(self) -> str | None:
        return or_tsquery(" ".join(self.kept)) if self.kept else None


def query_words(query: str) -> list[str]:
    """The question's words as `or_tsquery` quotes them, each once, in order."""
    q = or_tsquery(query)
    return [w.strip("'") for w in q.split(" | ")] if q else []


def pick_words(counts: Mapping[str, int], cap: int, limit: int) -> WordPick:
    """Words matching fewer than `cap` chunks, the `limit` rarest of them (ties: the word),
    kept; the rest reported as common. Words no chunk holds (or stop words, absent from
    `counts`) are not kept: they match nothing."""
    if cap <= 0 or limit <= 0:
        raise ValueError(f"pick_words: cap ({cap}) and limit ({limit}) must be positive")
    rare = sorted((n, w) for w, n in counts.items() if 0 < n < cap)
    return WordPick(
        kept=tuple(w for _, w in rare[:limit]),
        common=tuple(sorted(w for w, n in counts.items() if n >= cap)),
    )


def word_counts_op(campaign_id: str, words: Sequence[str], cap: int) -> Op[dict[str, int]]:
    """How many of the campaign's chunks hold each word, counted up to `cap` (a bitmap scan
    of the word's postings, then at most `cap` rows). Stop words (an empty tsquery) are left
    out of the answer."""
    if not words:
        return {}
    rows = yield fetch_all(
        """SELECT w.word, (SELECT count(*) FROM (
                   SELECT 1 FROM chunks c
                   WHERE c.campaign_id = %(c)s AND c.tsv @@ q.q LIMIT %(cap)s) m) AS n
           FROM unnest(%(words)s::text[]) AS w(word),
                LATERAL (SELECT to_tsquery('english', quote_literal(w.word)) AS q) q
           WHERE numnode(q.q) > 0""",
        {"c": campaign_id, "words": list(words), "cap": cap},
    )
    return {r["word"]: int(r["n"]) for r in rows}


def ranked_op(
    campaign_id: str, tsquery: str, n: int, params: Mapping[str, Any],
    scope: tuple[sql.Composable, Mapping[str, Any]] = NO_SCOPE,
) -> Op[list[ChunkHit]]:
    """The `n` chunks best ranked by term frequency (`ts_rank`) for `tsquery`, under the
    filters in `params` (`s`, `sp`, `after`, `before`) and the caller's scope condition."""
    where, scope_params = scope
    query = sql.SQL(
        """SELECT {cols}, ts_rank(c.tsv, q) AS rank
           FROM chunks c, to_tsquery('english', %(q)s) q
           WHERE c.campaign_id = %(c)s AND c.tsv @@ q{filters} AND ({scope})
           ORDER BY rank DESC, c.session_id, c.seq LIMIT %(k)s"""
    ).format(cols=sql.SQL(CHUNK_COLUMNS), filters=CHUNK_FILTERS, scope=where)
    rows = yield fetch_all(query, {**params, **scope_params, "c": campaign_id, "q": tsquery,
                                   "k": n})
    return [ChunkHit(from_row(Chunk, r), float(r["rank"]), "fulltext") for r in rows]


def fulltext_two_step_op(
    campaign_id: str, query: str, n: int, params: Mapping[str, Any], *, cap: int,
    words: int, scope: tuple[sql.Composable, Mapping[str, Any]] = NO_SCOPE,
) -> Op[tuple[list[ChunkHit], WordPick]]:
    """The leg as two statements, the pick in Python between them: the reference
    `fulltext_op` must equal (tests and `bench/fulltext_leg.py` compare them)."""
    counts = yield from word_counts_op(campaign_id, query_words(query), cap)
    pick = pick_words(counts, cap, words)
    tsquery = pick.tsquery
    if tsquery is None:
        return [], pick
    hits = yield from ranked_op(campaign_id, tsquery, n, params, scope)
    return hits, pick


# The leg in one statement. `words`: each question word's chunk count in the campaign, up to
# the cap: a one-lexeme word (nearly all) reads it from `chunk_lexeme_counts` (migration 025,
# kept exact by triggers on chunks), any other is counted as the two-step form counts it (a
# bitmap scan of its postings, at most `cap` rows); `kept`: `pick_words`' rule;
# `pick`: the tsquery `or_tsquery` would build from the kept words (quoted, ` | `-joined, in
# rarity order) and the lists the caller reports; then the ranking, under the filters and the
# scope. A pick with no word still returns its one row (the chunk columns NULL).
_ONE_STATEMENT = """
WITH words AS MATERIALIZED (
    SELECT w.word, CASE WHEN numnode(q.q) = 1 AND cardinality(q.lexemes) = 1
        THEN least(coalesce((SELECT s.chunks FROM chunk_lexeme_counts s
                             WHERE s.campaign_id = %(c)s AND s.lexeme = q.lexemes[1]), 0),
                   %(cap)s)
        ELSE (SELECT count(*) FROM (
                  SELECT 1 FROM chunks c
                  WHERE c.campaign_id = %(c)s AND c.tsv @@ q.q LIMIT %(cap)s) m) END AS n
    FROM unnest(%(words)s::text[]) AS w(word),
         LATERAL (SELECT to_tsquery('english', quote_literal(w.word)) AS q,
                         tsvector_to_array(to_tsvector('english', w.word)) AS lexemes) q
    WHERE numnode(q.q) > 0),
kept AS MATERIALIZED (
    SELECT word, n FROM words WHERE n > 0 AND n < %(cap)s
    ORDER BY n, word COLLATE "C" LIMIT %(limit)s),
pick AS MATERIALIZED (
    SELECT to_tsquery('english', string_agg('''' || word || '''', ' | '
                                            ORDER BY n, word COLLATE "C")) AS q,
           coalesce(array_agg(word ORDER BY n, word COLLATE "C"), '{{}}') AS kept,
           coalesce((SELECT array_agg(word ORDER BY word COLLATE "C") FROM words
                     WHERE n >= %(cap)s), '{{}}') AS common
    FROM kept)
SELECT p.kept, p.common, h.*
FROM pick p LEFT JOIN LATERAL (
    SELECT {cols}, ts_rank(c.tsv, p.q) AS rank
    FROM chunks c
    WHERE p.q IS NOT NULL AND c.campaign_id = %(c)s AND c.tsv @@ p.q{filters} AND ({scope})
    ORDER BY rank DESC, c.session_id, c.seq LIMIT %(k)s) h ON true
ORDER BY h.rank DESC NULLS LAST, h.session_id, h.seq"""


@lru_cache(maxsize=64)
def one_statement(scope: str) -> str:
    """`_ONE_STATEMENT` with the chunk columns, the filters and the scope condition (`scope`,
    rendered SQL), rendered once per scope: composing it took ~0.15 ms of every search, and the
    leg composes before the query embedding starts (figures: docs/DESIGN.md, "Session search
    latency, fourth pass")."""
    return sql.SQL(_ONE_STATEMENT).format(cols=sql.SQL(CHUNK_COLUMNS), filters=CHUNK_FILTERS,
                                          scope=sql.SQL(scope)).as_string(None)


def fulltext_op(
    campaign_id: str, query: str, n: int, params: Mapping[str, Any], *, cap: int,
    words: int, scope: tuple[sql.Composable, Mapping[str, Any]] = NO_SCOPE,
) -> Op[tuple[list[ChunkHit], WordPick]]:
    """The leg: the question's distinctive words counted, picked, then ranked, in one
    statement (one round trip; no transaction needed)."""
    if cap <= 0 or words <= 0:
        raise ValueError(f"fulltext_op: cap ({cap}) and words ({words}) must be positive")
    asked = query_words(query)
    if not asked:
        return [], WordPick((), ())
    where, scope_params = scope
    rows = yield fetch_all(one_statement(where.as_string(None)),
                           {**params, **scope_params, "c": campaign_id, "words": asked,
                            "cap": cap, "limit": words, "k": n})
    if not rows:  # every word a stop word: nothing was counted
        return [], WordPick((), ())
    pick = WordPick(tuple(rows[0]["kept"]), tuple(rows[0]["common"]))
    hits = [ChunkHit(from_row(Chunk, r), float(r["rank"]), "fulltext") for r in rows
            if r["id"] is not None]
    return hits, pick
