"""Dates a question names, as periods a session's turns can fall in.

"What did Maria donate in December 2023?", "Who did she have dinner with on May 3, 2023?",
"the session in March": the question names when, and the turns spoken then are likelier to
answer it than a later retelling. `named_periods` reads absolute expressions only (a day, a
month, a year, with or without the year); relative ones ("last week") need a "now" the
question does not carry. `in_named_period` says whether a moment falls in one of them,
allowing the days after it (an event is often told in the next session). Pure: no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# Most specific first; each match's span is blanked so "May 3, 2023" is not also "2023".
_PATTERNS = (
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I), (2, 1, 3)),
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I), (1, 2, 3)),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I), (None, 1, 2)),
    ("month", re.compile(rf"\b(?:in|during|since|of|early|late|mid)[\s-]+{_MONTH}\b", re.I),
     (None, 1, None)),
    ("year", re.compile(rf"\b(?:in|during|since|of)\s+{_YEAR}\b", re.I), (None, None, 1)),
)
# An event is often told in the days after it: a turn up to this long after the named
# period still counts as in it.
TOLD_AFTER = timedelta(days=14)


@dataclass(frozen=True, slots=True)
class Period:
    """A named day, month or year; `year` None for a month named without one (any year)."""

    kind: str
    year: int | None
    month: int | None = None
    day: int | None = None

    def span(self, year: int, tz: tzinfo | None) -> tuple[datetime, datetime]:
        """[start, end) of the period in `year` (its own year when it names one)."""
        y = self.year or year
        if self.day is not None and self.month is not None:
            start = datetime(y, self.month, self.day, tzinfo=tz)
            return start, start + timedelta(days=1)
        if self.month is not None:
            start = datetime(y, self.month, 1, tzinfo=tz)
            nxt = datetime(y + (self.month == 12), self.month % 12 + 1, 1, tzinfo=tz)
            return start, nxt
        return datetime(y, 1, 1, tzinfo=tz), datetime(y + 1, 1, 1, tzinfo=tz)

    def contains(self, when: datetime, slack: timedelta = TOLD_AFTER) -> bool:
        """`when` within the period or up to `slack` after it."""
        for year in (when.year, when.year - 1):
            try:
                start, end = self.span(year, when.tzinfo)
            except ValueError:  # "February 30": no such day
                return False
            if start <= when < end + slack:
                return True
        return False


def named_periods(question: str) -> list[Period]:
    """The absolute dates `question` names, most specific first."""
    text = question
    out: list[Period] = []
    for kind, pattern, (d, m, y) in _PATTERNS:
        for match in pattern.finditer(text):
            g = match.groups()
            year = int(g[y - 1]) if y else None
            month = MONTHS[g[m - 1].lower()] if m else None
            day = int(g[d - 1]) if d else None
            if day is not None and not 1 <= day <= 31:
                continue
            out.append(Period(kind, year, month, day))
        text = pattern.sub(lambda x: " " * len(x.group(0)), text)
    return out


def in_named_period(when: datetime | None, periods: list[Period]) -> bool:
    """Whether a turn spoken at `when` falls in (or just after) a period the question names."""
    return when is not None and any(p.contains(when) for p in periods)
