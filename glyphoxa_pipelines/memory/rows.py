"""Mapping between database rows (dicts) and the memory models."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

from glyphoxa_pipelines.memory.models import (
    Campaign,
    Chunk,
    Entity,
    Entry,
    NpcProfile,
    Recap,
    Relationship,
    Session,
    SessionSummary,
)

T = TypeVar("T")

_FIELDS: dict[type, frozenset[str]] = {}


def from_row(cls: type[T], row: dict[str, Any]) -> T:
    """Build `cls` from a row, ignoring columns the model does not have (tsv, created_at…)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in fields(cls))  # type: ignore[arg-type]
    return cls(**{k: v for k, v in row.items() if k in names})


__all__ = [
    "Campaign",
    "Chunk",
    "Entity",
    "Entry",
    "NpcProfile",
    "Recap",
    "Relationship",
    "Session",
    "SessionSummary",
    "from_row",
]
