"""The pure paging functions: Discord's limits hold for any list of lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from realtime.discord.paging import MESSAGE_LIMIT, clip, page_footer, paginate


def test_clip() -> None:
    assert clip("short") == "short"
    assert clip("x" * 2001) == "x" * 1999 + "…" and len(clip("x" * 5000)) == MESSAGE_LIMIT
    assert clip("abcdef", 4) == "abc…"
    with pytest.raises(ValueError):
        clip("a", 0)


def test_paginate_examples() -> None:
    assert paginate([]) == [""]
    assert paginate(["a", "b", "c"], max_lines=2) == ["a\nb", "c"]
    assert paginate(["aaaa", "bbbb", "cc"], limit=9) == ["aaaa\nbbbb", "cc"]
    assert paginate(["x" * 30], limit=10) == ["x" * 9 + "…"]
    assert page_footer(0, 1) == "" and page_footer(1, 3) == "page 2/3"


@given(st.lists(st.text(min_size=0, max_size=300), max_size=200),
       st.integers(min_value=1, max_value=600), st.integers(min_value=1, max_value=30))
def test_paginate_keeps_every_line_in_order_within_limits(
    lines: list[str], limit: int, max_lines: int
) -> None:
    # Lines holding newlines would be split by the join; callers pass single lines.
    lines = [line.replace("\n", " ") for line in lines]
    pages = paginate(lines, limit=limit, max_lines=max_lines)
    assert pages and all(len(p) <= limit for p in pages)
    if lines:
        assert all(len(p.split("\n")) <= max_lines for p in pages)
        rejoined = [line for p in pages for line in p.split("\n")]
        assert rejoined == [clip(line, limit) for line in lines]
