"""A one-argument function's results kept in a plain dict, emptied when it holds `limit`.

Why not `functools.lru_cache`: a bounded lru_cache moves the entry it hits to the front of
its list, which touches the entry and both its neighbours. In a memo of many thousand
strings on the hot path of the correction walks (a window's codes, a piece's tokens), those
are three more places in memory per look-up, and on a loaded machine each is a cache miss.
A plain dict is one look-up; when it fills up it is emptied and refilled from the words of
the next utterances (the bound is what it was, the order of eviction is all that changes).
Results must not be None (None says "not kept yet"). A hot loop may read the memo itself
(`kept`, given by the caller) and call the function only for what it lacks: a dict's `get` in
the loop costs no Python call.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def dict_memo(
    limit: int, kept: dict[K, V] | None = None
) -> Callable[[Callable[[K], V]], Callable[[K], V]]:
    """Decorate a one-argument function with a memo of at most `limit` results, in `kept`
    when given (a new dict otherwise)."""

    def decorate(function: Callable[[K], V]) -> Callable[[K], V]:
        nonlocal kept
        if kept is None:
            kept = {}

        memo = kept

        def remembered(arg: K) -> V:
            found = memo.get(arg)
            if found is None:
                found = function(arg)
                if len(memo) >= limit:
                    memo.clear()
                memo[arg] = found
            return found

        update_wrapper(remembered, function)
        remembered.kept = memo  # type: ignore[attr-defined]
        return remembered

    return decorate
