"""Dates a question names, as periods a turn can fall in (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from realtime.question_time import Period, in_named_period, named_periods


def test_a_day_a_month_and_a_year_are_read_most_specific_first() -> None:
    assert named_periods("What did she show him on October 13, 2023?") == [
        Period("day", 2023, 10, 13)]
    assert named_periods("What did Gina find on 1 February, 2023?") == [
        Period("day", 2023, 2, 1)]
    assert named_periods("What setback did she face in October 2023?") == [
        Period("month", 2023, 10)]
    assert named_periods("When did they go camping in June?") == [Period("month", None, 6)]
    assert named_periods("How often to the beach in 2023?") == [Period("year", 2023)]


def test_words_that_only_look_like_dates_are_not_periods() -> None:
    assert named_periods("You may go to the market") == []
    assert named_periods("What happened during the last week?") == []  # relative: no "now"
    assert named_periods("Was it on February 30, 2023?") == [Period("day", 2023, 2, 30)]
    assert not in_named_period(datetime(2023, 3, 1, tzinfo=UTC),
                               named_periods("Was it on February 30, 2023?"))


def test_a_turn_in_the_period_or_told_just_after_it_falls_in_it() -> None:
    june = named_periods("camping in June")
    assert in_named_period(datetime(2022, 6, 2, tzinfo=UTC), june)  # any year
    assert in_named_period(datetime(2023, 7, 10, tzinfo=UTC), june)  # told in the next days
    assert not in_named_period(datetime(2023, 7, 20, tzinfo=UTC), june)
    december = named_periods("What did Maria donate in December 2023?")
    assert in_named_period(datetime(2024, 1, 5, tzinfo=UTC), december)  # across the new year
    assert not in_named_period(datetime(2023, 11, 30, tzinfo=UTC), december)
    assert not in_named_period(None, december)
