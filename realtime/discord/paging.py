"""Fitting text into Discord's limits: pages of whole lines, and clipping.

Pure functions, so the limits are tested without Discord. A message's content may hold 2,000
characters, an embed description 4,096; a page never splits a line unless that one line is
longer than a page on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

MESSAGE_LIMIT = 2000
EMBED_DESCRIPTION_LIMIT = 4096
ELLIPSIS = "…"


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` cut to at most `limit` characters, with '…' marking the cut."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def paginate(
    lines: Sequence[str], *, limit: int = MESSAGE_LIMIT, max_lines: int = 20
) -> list[str]:
    """Pages of consecutive lines, each at most `limit` characters and `max_lines` lines.

    Every line lands on exactly one page, in order; an over-long line is clipped rather than
    spread over pages. No lines give one empty page, so callers always have something to send.
    """
    if limit < 1 or max_lines < 1:
        raise ValueError("limit and max_lines must be at least 1")
    pages: list[str] = []
    current: list[str] = []
    size = 0
    for raw in lines:
        line = clip(raw, limit)
        added = len(line) + (1 if current else 0)
        if current and (size + added > limit or len(current) >= max_lines):
            pages.append("\n".join(current))
            current, size, added = [], 0, len(line)
        current.append(line)
        size += added
    if current or not pages:
        pages.append("\n".join(current))
    return pages


def page_footer(index: int, total: int) -> str:
    return f"page {index + 1}/{total}" if total > 1 else ""
