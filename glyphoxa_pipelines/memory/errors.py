"""Errors the memory store raises; each names what was wrong."""

from __future__ import annotations


class MemoryError_(Exception):  # noqa: N801 - avoid shadowing the builtin MemoryError
    """Base of the memory store's errors."""


class NotFoundError(MemoryError_, LookupError):
    """An id that must exist does not (unknown campaign, session, entity)."""


class EmbeddingDimensionError(MemoryError_, ValueError):
    """An embedding's length does not match its model's dimension."""

    def __init__(self, model: str, expected: int, given: int) -> None:
        super().__init__(
            f"embedding for model {model!r} must have {expected} dimensions, got {given}"
        )
        self.model, self.expected, self.given = model, expected, given


class InvalidInputError(MemoryError_, ValueError):
    """Input the store refuses (empty text, bad id, out-of-range value)."""
