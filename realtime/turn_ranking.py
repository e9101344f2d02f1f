"""Which turns of the retrieved windows answer the question: a small logistic model.

`memory.search_sessions` fetches ~60 chunk windows (~300 turns) and can show ~50 turns within
a 1,500-token budget, so the order of the candidate turns decides what the LLM reads. Each
turn is described by a dozen plain features (its window's fused rank, its own cosine to the
query, its rarity-weighted query words, its neighbours' signals, whether it is spoken by a
person the question names, whether it was spoken in a period the question names, its
length) and scored by a linear model whose weights were fitted per question (a softmax over
its candidate turns) on LoCoMo conversations 0-4 and CRD3 episodes 1-2
(`bench/fit_turn_listwise.py`); LoCoMo 5-9 and CRD3 episodes 3-4 are the check. Pure
functions over plain rows: no database.

A turn without a stored embedding (a session the pipeline has not embedded yet) takes the
lowest similarity among the candidates, so it competes on its window rank and its words; with
no embeddings at all the similarity features are zero for every turn.
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache
from itertools import chain
from typing import Any

from realtime.hot_context import estimate_tokens
from realtime.question_time import in_named_period, named_periods

# Weights on raw features (standardisation folded in), fitted per question (a softmax over
# each question's candidate turns: packing needs the order within a question, not a yes/no
# per turn) on LoCoMo conversations 0-4 and CRD3 episodes 1-2 (real play: Critical Role's
# summary sentences over its table talk), each question counted once, then mapped to log-odds
# by one slope and bias on LoCoMo 0-4 (`bench/fit_turn_listwise.py` over `--dump-candidates`
# dumps); LoCoMo 5-9 and CRD3 episodes 3-4 are the check (DESIGN.md, "Session search, seventh
# pass"). The weights say nothing data-set specific: top window ranks, the turn's own
# similarity and rank, rare query words in the turn or beside it, turns by a person the
# question names, turns spoken in a period the question names, turns that say something their
# neighbours do not (`information`), a named person speaking of themself (`own_telling`:
# a question about someone's life is answered by what they said about it; eighth pass), and a
# named person's turn that names things (`named_specifics`: "What books has John read?" is
# answered by "I'm reading Dune by Frank Herbert", not "Books open up new worlds"; ninth).
# `question_names_speaker` is the same for all of a question's turns, so it reorders nothing
# and a per-question fit gives it no weight; it stays a feature for the per-turn fits.
TURN_WEIGHTS: Mapping[str, float] = {
    "window_rank": 24.1607,  # 1 / (11 + rank of the best window holding the turn)
    "similarity": 1.1032,  # cosine of the turn's embedding and the query's
    "similarity_gap": 1.1017,  # similarity minus the best candidate's
    "similarity_rank": 3.3531,  # 1 / (11 + rank by similarity among the candidates)
    "words": 2.7781,  # rarity-weighted query words in the turn / the best candidate's
    "words_rank": -7.0287,  # 1 / (11 + rank by words), 0 without any query word
    "neighbour_words": 1.4387,  # the better adjacent turn's `words`
    "neighbour_words_rank": -3.3330,  # the better adjacent turn's `words_rank`
    "neighbour_similarity_rank": 6.8011,  # the better adjacent turn's `similarity_rank`
    "speaker_named": 1.5208,  # spoken by a person the question names
    "question_names_speaker": 0.0000,  # the question names one of the candidates' speakers
    "length": -0.1028,  # log(1 + tokens of the turn's text)
    "named_period": 3.6025,  # spoken in (or within two weeks after) a date the question names
    "information": 0.3061,  # log(1 + rarity of the turn's own words), see `information`
    "own_telling": 0.5302,  # said in the first person by a person the question names
    "named_specifics": 0.6470,  # log(1 + things a named person's turn names), see `specifics`
}
TURN_BIAS = -10.3614
RANK_K = 11  # the rank features' 1 / (RANK_K + rank)
# Neighbour lift: each turn's log-odds raised by this much times its better adjacent turn's
# evidence probability, so the packing keeps a scene together around a likely answer (a
# summary of an event is answered by a run of short table-talk turns, not one line).
NEIGHBOUR_LIFT = 1.0

_STOP = frozenset(
    "a an the and or but if of to in on at for with about from by as is are was were be been "
    "being do does did have has had i you he she it we they me him her them my your his its our "
    "their this that these those what when where who whom which why how not no so just very can "
    "could would should will shall may might must there here than then too also up down out "
    "over under again once ever any some all".split()
)
_TERM = re.compile(r"[a-z0-9']+")
# A speaker talking about themself: what a question about a person's life is answered by.
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself|we|our|us)\b", re.I)
# Specific things a turn names: a capitalised word inside a sentence (a person, a place, a
# title: not the sentence's first word), a number, a quoted title.
_INNER_CAPITAL = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z'\-]+")
_NUMBER_OR_QUOTE = re.compile(r"\b\d[\d,.:]*\b|\"[^\"]{2,60}\"")
_NOT_A_THING = frozenset(("i'm", "i've", "i'll", "i'd", "ok", "okay"))

Links = Mapping[int, tuple[int | None, int | None]]


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A word crudely stemmed, or "" for a stop word (cached: turns repeat their words)."""
    word = word.strip("'")
    if len(word) < 2 or word in _STOP:
        return ""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=1 << 14)
def terms(text: str) -> frozenset[str]:
    """Content words, crudely stemmed: enough to spot which turns of a window matter. Cached:
    the same turns are candidates for question after question, and reading their words was
    the largest share of ranking them."""
    # `map` over the cached stemmer stays in C for words seen before (nearly all).
    words = set(map(_stem, _TERM.findall(text.lower())))
    words.discard("")
    return frozenset(words)


def word_scores(rows: Mapping[int, Mapping[str, Any]], query: str) -> dict[int, float]:
    """Sum of the query words each turn holds, each weighted by its rarity among the
    candidates (log(1 + n / df)): a name said in every turn counts for little, a rare word of
    the question (a place, an object) for much."""
    wanted = terms(query)
    found = {i: wanted & terms(r["text"]) for i, r in rows.items()}
    df: dict[str, int] = {}
    for words in found.values():
        for t in words:
            df[t] = df.get(t, 0) + 1
    n = max(1, len(found))
    weight = {t: math.log(1.0 + n / c) for t, c in df.items()}
    return {i: sum(weight[t] for t in words) for i, words in found.items()}


@lru_cache(maxsize=1 << 14)
def first_person(text: str) -> bool:
    """The turn speaks of its speaker ("I", "my", "we"); cached like `terms`."""
    return _FIRST_PERSON.search(text) is not None


@lru_cache(maxsize=1 << 14)
def specifics(text: str) -> tuple[tuple[str, ...], int]:
    """What a turn names that could answer "which / what ... has X ...": its capitalised
    words inside a sentence, lower-cased ("Dune", "Frank", "Herbert"; the speaker's "I'm"
    left out), and its count of numbers and quoted titles. Cached like `terms`; the
    speakers' names (a vocative "Thanks, Nate!") are taken out per search."""
    capitals = tuple(w for w in map(str.lower, _INNER_CAPITAL.findall(text))
                     if w not in _NOT_A_THING)
    return capitals, len(_NUMBER_OR_QUOTE.findall(text))


def named_specifics(text: str, speakers: frozenset[str]) -> float:
    """log(1 + the things a turn names, `specifics`, that are not a speaker's name)."""
    capitals, others = specifics(text)
    return math.log1p(others + sum(w not in speakers for w in capitals))


def information(rows: Mapping[int, Mapping[str, Any]], query: str) -> dict[int, float]:
    """How much each turn says beyond the question: log(1 + the summed rarity, log(n / df)
    among the candidates, of its words that are neither the question's nor a speaker's name).
    "Thanks, Nate! Appreciate it!" says next to nothing a neighbour does not; "I took that pic
    on a hike near Fort Wayne" says something. The question's own words are `words`'."""
    seen = {i: terms(str(r["text"])) for i, r in rows.items()}
    df = Counter(chain.from_iterable(seen.values()))
    n = max(1, len(seen))
    rarity = {t: math.log(n / c) for t, c in df.items()}
    names = {str(r.get("speaker_name") or "") for r in rows.values()}
    known = terms(query) | terms(" ".join(sorted(names)))
    return {i: math.log1p(sum(map(rarity.__getitem__, words - known)))
            for i, words in seen.items()}


def _ranks(ids: list[int], key: Callable[[int], Any]) -> dict[int, float]:
    """1 / (RANK_K + rank) of each id in ascending `key` order (ties: candidate order)."""
    return {i: 1.0 / (RANK_K + r) for r, i in enumerate(sorted(ids, key=key))}


def named_speakers(rows: Mapping[int, Mapping[str, Any]], query: str) -> set[str]:
    """Candidate speakers the question names (whole words, any case; a one-letter name would
    match every "a" or "I")."""
    q = query.lower()
    names = {str(r.get("speaker_name") or "").strip().lower() for r in rows.values()}
    return {n for n in names if len(n) > 1 and re.search(rf"\b{re.escape(n)}\b", q)}


# The model's features in the order of its weights: `feature_values` gives each turn's values
# in this order, so a score is one `sum` over the two in step.
FEATURES: tuple[str, ...] = tuple(TURN_WEIGHTS)
_WEIGHTS: tuple[float, ...] = tuple(TURN_WEIGHTS.values())


def feature_values(
    rows: Mapping[int, Mapping[str, Any]],
    origin: Mapping[int, int],
    links: Links,
    query: str,
) -> dict[int, tuple[float, ...]]:
    """Every candidate turn's feature values, in `FEATURES` order. `rows` in candidate order
    (best window first), each with `text`, `speaker_name` and `similarity` (float or None);
    `origin` the rank of the best window holding each turn; `links` each turn's adjacent
    candidate turns. A tuple per turn, not a dictionary: packing scores every search's ~100
    turns, and building their dictionaries was a third of the model's time."""
    ids = list(rows)
    if not ids:
        return {}
    known = [float(r["similarity"]) for r in rows.values() if r.get("similarity") is not None]
    floor = min(known) if known else 0.0
    sim = {i: float(rows[i]["similarity"]) if rows[i].get("similarity") is not None else floor
           for i in ids}
    best_sim = max(sim.values()) if known else 0.0
    sim_rank = _ranks(ids, lambda i: -sim[i]) if known else dict.fromkeys(ids, 0.0)
    words = word_scores(rows, query)
    best_words = max(words.values()) or 1.0
    words_rank = _ranks([i for i in ids if words[i] > 0], lambda i: (-words[i], origin[i]))
    named = named_speakers(rows, query)
    periods = named_periods(query)
    names_speaker = float(bool(named))
    info = information(rows, query)
    # each word of a speaker's name: `specifics` reads words ("Frank", "Herbert")
    speakers = frozenset(w for r in rows.values()
                         for w in str(r.get("speaker_name") or "").lower().split())
    # Each turn's own values once: its neighbours read them again (packing runs this on
    # every search; the per-turn generators and look-ups were most of its time).
    share = {i: words[i] / best_words for i in ids}
    word_rank = {i: words_rank.get(i, 0.0) for i in ids}
    no_links = (None, None)
    out: dict[int, tuple[float, ...]] = {}
    for i in ids:
        row = rows[i]
        near = [n for n in links.get(i, no_links) if n is not None and n in rows]
        if not near:
            near_words = near_word_rank = near_sim_rank = 0.0
        elif len(near) == 1:
            n = near[0]
            near_words, near_word_rank, near_sim_rank = share[n], word_rank[n], sim_rank[n]
        else:  # `max` of two keeps the first on a tie, as `max` of the list does
            a, b = near
            near_words = max(share[a], share[b])
            near_word_rank = max(word_rank[a], word_rank[b])
            near_sim_rank = max(sim_rank[a], sim_rank[b])
        by_named = str(row.get("speaker_name") or "").lower() in named
        out[i] = (
            1.0 / (RANK_K + origin[i]),  # window_rank
            sim[i] if known else 0.0,  # similarity
            sim[i] - best_sim,  # similarity_gap
            sim_rank[i],  # similarity_rank
            share[i],  # words
            word_rank[i],  # words_rank
            near_words,  # neighbour_words
            near_word_rank,  # neighbour_words_rank
            near_sim_rank,  # neighbour_similarity_rank
            float(by_named),  # speaker_named
            names_speaker,  # question_names_speaker
            math.log(estimate_tokens(str(row["text"])) + 1),  # length
            (float(in_named_period(row.get("spoken_at"), periods)) if periods
             else 0.0),  # named_period
            info[i],  # information
            float(by_named and first_person(str(row["text"]))),  # own_telling
            (named_specifics(str(row["text"]), speakers) if by_named
             else 0.0),  # named_specifics
        )
    return out


def turn_features(
    rows: Mapping[int, Mapping[str, Any]],
    origin: Mapping[int, int],
    links: Links,
    query: str,
) -> dict[int, dict[str, float]]:
    """The features of `TURN_WEIGHTS` for every candidate turn, by name (`feature_values`'
    values; the benches replay and fit these)."""
    return {i: dict(zip(FEATURES, v, strict=True))
            for i, v in feature_values(rows, origin, links, query).items()}


def turn_scores(
    rows: Mapping[int, Mapping[str, Any]],
    origin: Mapping[int, int],
    links: Links,
    query: str,
) -> dict[int, float]:
    """Log-odds that each candidate turn is evidence for `query` (higher first), each lifted
    by its better neighbour's (`lift_neighbours`)."""
    values = feature_values(rows, origin, links, query)
    # The weights in the features' order, so each sum adds the same terms in the same order
    # as `sum(weight * value for each feature)`: the same float, bit for bit.
    own = {i: TURN_BIAS + sum(map(operator.mul, _WEIGHTS, v)) for i, v in values.items()}
    return lift_neighbours(own, links, NEIGHBOUR_LIFT)


def lift_neighbours(scores: Mapping[int, float], links: Links, strength: float
                    ) -> dict[int, float]:
    """Each turn's log-odds plus `strength` times the better evidence probability of its
    adjacent candidate turns (computed from the unlifted scores, so the lift does not chain
    along a run)."""
    if strength == 0:
        return dict(scores)
    p = {i: evidence_probability(s) for i, s in scores.items()}
    no_links = (None, None)
    return {i: s + strength * max([p[n] for n in links.get(i, no_links)
                                   if n is not None and n in p], default=0.0)
            for i, s in scores.items()}


def evidence_probability(score: float) -> float:
    """A `turn_scores` log-odds as a probability: what a passage's `score` reports."""
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, score))))
