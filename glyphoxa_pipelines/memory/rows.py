"""Mapping between database rows (dicts) and the memory models."""

from __future__ import annotations

import hashlib
import re
import unicodedata
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


def slugify(name: str) -> str:
    """Entity / campaign id from a display name: "Vex'ahlia" -> "vexahlia", "Tower of X" ->
    "tower-of-x". Stable, ASCII, lowercase."""
    norm = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    norm = re.sub(r"['’`]", "", norm.lower())
    slug = re.sub(r"[^a-z0-9]+", "-", norm).strip("-")
    return slug or "x" + hashlib.sha1(name.encode()).hexdigest()[:8]


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
    "slugify",
]
