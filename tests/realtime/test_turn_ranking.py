"""The turn relevance model of `memory.search_sessions` (pure: no database)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from realtime import turn_ranking as tr


def _rows(*turns: tuple[str, str, float | None]) -> dict[int, dict[str, Any]]:
    return {i: {"id": i, "speaker_name": who, "text": text, "similarity": sim}
            for i, (who, text, sim) in enumerate(turns, start=1)}


def _chain(ids: list[int]) -> dict[int, tuple[int | None, int | None]]:
    return {i: (ids[k - 1] if k else None, ids[k + 1] if k + 1 < len(ids) else None)
            for k, i in enumerate(ids)}


def test_terms_stem_and_drop_stop_words() -> None:
    assert tr.terms("The dragons were sleeping in the Mountains") == {"dragon", "sleep",
                                                                      "mountain"}
    assert tr.terms("") == set() and tr.terms("it is what it is") == set()


def test_rare_query_words_weigh_more_than_common_ones() -> None:
    rows = _rows(("Bo", "the dragon again", None), ("Bo", "the dragon and the silver key", None),
                 ("Bo", "a dragon", None))
    words = tr.word_scores(rows, "dragon silver key")
    assert words[2] > words[1] == words[3] > 0


def test_a_closer_turn_outranks_an_otherwise_equal_one() -> None:
    rows = _rows(("Bo", "We walked to the mill.", 0.31), ("Bo", "We walked to the inn.", 0.62))
    scores = tr.turn_scores(rows, {1: 0, 2: 0}, {1: (None, None), 2: (None, None)},
                            "where did they go")
    assert scores[2] > scores[1]


def test_turns_by_the_person_the_question_names_come_first() -> None:
    rows = _rows(("Mira", "I bought a new lute last week.", 0.5),
                 ("Bo", "I bought a new lute last week.", 0.5))
    links = {1: (None, None), 2: (None, None)}
    feats = tr.turn_features(rows, {1: 0, 2: 0}, links, "What did Mira buy?")
    assert feats[1]["speaker_named"] == 1.0 and feats[2]["speaker_named"] == 0.0
    assert feats[1]["question_names_speaker"] == feats[2]["question_names_speaker"] == 1.0
    scores = tr.turn_scores(rows, {1: 0, 2: 0}, links, "What did Mira buy?")
    assert scores[1] > scores[2]
    # a name inside another word is not a mention
    assert tr.named_speakers(rows, "What did Miranda buy?") == set()
    assert tr.named_speakers(_rows(("A", "hello", None)), "Was a lute bought?") == set()


def test_a_turn_next_to_the_matching_one_is_lifted() -> None:
    rows = _rows(("Bo", "Where did you hide the silver key?", 0.4),
                 ("Mira", "Under the third floorboard.", 0.2),
                 ("Bo", "Nice weather today.", 0.2))
    links = _chain([1, 2, 3])
    links[3] = (None, None)  # turn 3 sits in another window, away from the question
    scores = tr.turn_scores(rows, {1: 0, 2: 0, 3: 0}, links, "silver key hidden")
    assert scores[2] > scores[3]


def test_missing_embeddings_take_the_lowest_similarity_and_none_at_all_zero() -> None:
    rows = _rows(("Bo", "the bell tolls", 0.7), ("Bo", "a quiet night", None),
                 ("Bo", "more rain", 0.2))
    links = _chain([1, 2, 3])
    feats = tr.turn_features(rows, {1: 0, 2: 1, 3: 2}, links, "bell")
    assert feats[2]["similarity"] == pytest.approx(0.2)
    assert feats[1]["similarity_gap"] == 0.0 and feats[2]["similarity_gap"] < 0
    bare = _rows(("Bo", "the bell tolls", None), ("Bo", "a quiet night", None))
    feats = tr.turn_features(bare, {1: 0, 2: 1}, _chain([1, 2]), "bell")
    assert all(f["similarity"] == f["similarity_rank"] == 0.0 for f in feats.values())
    scores = tr.turn_scores(bare, {1: 0, 2: 1}, _chain([1, 2]), "bell")
    assert scores[1] > scores[2]  # words and window rank still decide


def test_no_candidates_no_scores() -> None:
    assert tr.turn_scores({}, {}, {}, "anything") == {}


def test_evidence_probability_is_a_bounded_monotone_map_of_the_log_odds() -> None:
    values = [tr.evidence_probability(x) for x in (-1e9, -5.0, 0.0, 5.0, 1e9)]
    assert values == sorted(values) and values[2] == 0.5
    assert 0.0 <= values[0] < 1e-20 and 0.999999 < values[-1] <= 1.0


def test_a_turn_spoken_in_the_period_the_question_names_comes_first() -> None:
    from datetime import UTC, datetime

    rows = _rows(("Bo", "We went camping by the lake.", 0.5),
                 ("Bo", "We went camping by the lake.", 0.5))
    rows[1]["spoken_at"] = datetime(2023, 9, 2, tzinfo=UTC)  # the later retelling
    rows[2]["spoken_at"] = datetime(2023, 6, 20, tzinfo=UTC)  # the June trip itself
    origin, links = {1: 0, 2: 0}, {1: (None, None), 2: (None, None)}
    feats = tr.turn_features(rows, origin, links, "When did Bo go camping in June?")
    assert feats[2]["named_period"] == 1.0 and feats[1]["named_period"] == 0.0
    scores = tr.turn_scores(rows, origin, links, "When did Bo go camping in June?")
    assert scores[2] > scores[1]
    plain = tr.turn_scores(rows, origin, links, "When did Bo go camping?")
    # No period named: when each was spoken does not move either score.
    rows[1]["spoken_at"], rows[2]["spoken_at"] = rows[2]["spoken_at"], rows[1]["spoken_at"]
    assert tr.turn_scores(rows, origin, links, "When did Bo go camping?") == plain


def test_the_neighbour_of_a_likely_answer_is_lifted_but_the_lift_does_not_chain() -> None:
    scores = {1: 4.0, 2: -6.0, 3: -6.0, 4: -6.0}
    links = _chain([1, 2, 3, 4])
    lifted = tr.lift_neighbours(scores, links, 1.0)
    assert lifted[2] > lifted[3] == pytest.approx(lifted[4])
    assert lifted[2] == pytest.approx(-6.0 + tr.evidence_probability(4.0))
    assert lifted[1] > scores[1]  # by its neighbour's small probability only
    assert tr.lift_neighbours(scores, links, 0.0) == scores


def test_each_feature_value_sits_under_its_own_name() -> None:
    # `feature_values` returns plain tuples in `FEATURES` order: a value out of step with its
    # weight would score silently wrong, so every name is pinned to what it measures.
    import math

    from realtime.hot_context import estimate_tokens

    rows = _rows(("Bo", "the silver key lies under the mill", 0.6),
                 ("Mira", "a quiet night by the river, nothing else", 0.3))
    origin, links = {1: 0, 2: 3}, _chain([1, 2])
    feats = tr.turn_features(rows, origin, links, "Where did Bo put the silver key?")
    assert tuple(feats[1]) == tr.FEATURES == tuple(tr.TURN_WEIGHTS)
    for i in (1, 2):
        assert feats[i]["window_rank"] == 1.0 / (tr.RANK_K + origin[i])
        assert feats[i]["length"] == math.log(estimate_tokens(rows[i]["text"]) + 1)
    assert feats[1]["similarity"] == 0.6 and feats[2]["similarity_gap"] == pytest.approx(-0.3)
    assert feats[1]["words"] == 1.0 and feats[2]["words"] == 0.0
    assert feats[2]["neighbour_words"] == 1.0 and feats[1]["neighbour_words"] == 0.0
    assert feats[1]["speaker_named"] == 1.0 and feats[2]["speaker_named"] == 0.0
    assert feats[1]["named_period"] == feats[2]["named_period"] == 0.0
    assert feats[2]["information"] > 0.0 and feats[1]["information"] == pytest.approx(
        math.log1p(2 * math.log(2)))  # "lie", "mill": the question's words are not its own
    assert feats[1]["own_telling"] == feats[2]["own_telling"] == 0.0


def test_a_turn_that_says_something_outranks_a_pleasantry() -> None:
    rows = _rows(("Nate", "Thanks, Joanna! Appreciate it, see you!", 0.4),
                 ("Nate", "I took that pic on a hike near Fort Wayne last summer.", 0.4),
                 ("Joanna", "Thanks, Nate! Appreciate it!", 0.4))
    info = tr.information(rows, "Where has Nate been hiking?")
    # the speakers' names and the question's words are not what a turn says
    assert 0.0 < info[3] < info[1] < info[2]
    links = {i: (None, None) for i in rows}
    scores = tr.turn_scores(rows, dict.fromkeys(rows, 0), links, "Where has Nate been hiking?")
    assert scores[2] > scores[1]


def test_a_named_person_speaking_of_themself_is_own_telling() -> None:
    rows = _rows(("Mira", "I adopted two turtles last spring.", 0.5),
                 ("Mira", "Turtles were adopted by the village.", 0.5),
                 ("Bo", "I adopted two turtles last spring.", 0.5))
    feats = tr.turn_features(rows, dict.fromkeys(rows, 0), {i: (None, None) for i in rows},
                             "What pets does Mira have?")
    assert [feats[i]["own_telling"] for i in (1, 2, 3)] == [1.0, 0.0, 0.0]
    assert tr.first_person("My lute") and not tr.first_person("Imagine them at sea")


def test_a_named_persons_turn_that_names_things_outranks_a_generic_one() -> None:
    rows = _rows(("John", "Books really can open up new worlds, Tim!", 0.5),
                 ("John", "I'm reading \"Dune\" by Frank Herbert, in 3 days.", 0.5),
                 ("Tim", "I'm reading \"Dune\" by Frank Herbert, in 3 days.", 0.5))
    feats = tr.turn_features(rows, dict.fromkeys(rows, 0), {i: (None, None) for i in rows},
                             "What books has John read?")
    # a vocative speaker's name and the speaker's "I'm" name nothing
    assert feats[1]["named_specifics"] == 0.0
    # "Dune", "Frank", "Herbert", the quoted title and the number
    assert feats[2]["named_specifics"] == pytest.approx(math.log1p(5))
    assert feats[3]["named_specifics"] == 0.0  # not spoken by the person asked about
    assert tr.specifics("Then Dune. Next Arrakis") == (("dune", "arrakis"), 0)
    assert tr.specifics("Okay, OK then") == ((), 0)
    scores = tr.turn_scores(rows, dict.fromkeys(rows, 0), {i: (None, None) for i in rows},
                            "What books has John read?")
    assert scores[2] > scores[3] and scores[2] > scores[1]


def test_a_speakers_two_word_name_said_to_them_names_nothing() -> None:
    rows = _rows(("John", "Thanks, Mary Jane, see you soon!", 0.5),
                 ("Mary Jane", "Thanks, John! I loved Paris.", 0.5))
    feats = tr.turn_features(rows, dict.fromkeys(rows, 0), {i: (None, None) for i in rows},
                             "Where has John been?")
    # "Mary" and "Jane" are a speaker's name word by word: no specific; "Paris" is one
    assert feats[1]["named_specifics"] == 0.0
    assert feats[2]["named_specifics"] == 0.0  # not spoken by the person asked about
    rows[2]["speaker_name"] = "John"
    feats = tr.turn_features(rows, dict.fromkeys(rows, 0), {i: (None, None) for i in rows},
                             "Where has John been?")
    assert feats[2]["named_specifics"] == pytest.approx(math.log1p(1))
