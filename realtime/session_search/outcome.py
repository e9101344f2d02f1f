"""What a session search hands back besides its results: what it measured, for the caller to
count (search never touches its caller's state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from glyphoxa_pipelines.memory.models import ChunkHit

Fused = tuple[ChunkHit, float, list[str]]
# How the full-text leg ended: answered, or cut short by its outage guard (then the vector leg
# answered alone, and the results say so).
TextLeg = Literal["ok", "timeout", "off"]


@dataclass(slots=True)
class Candidates:
    """Fused chunk windows and their turns, each turn with its cosine to the query
    (`similarity`; None for a turn the pipeline has not embedded yet)."""

    hits: list[Fused]
    turns: dict[str, list[dict[str, Any]]]
    text_leg: TextLeg = "off"


@dataclass(slots=True)
class SearchOutcome:
    results: list[dict[str, Any]]
    text_leg: TextLeg = "off"


@dataclass(slots=True)
class SearchCounters:
    """Per-process counts the health report shows; the caller feeds it each outcome."""

    fulltext_timeouts: int = 0
    # Searches now always wait for the full-text leg, so none is late; kept at 0 for the
    # health report's shape.
    fulltext_late: int = 0

    def count(self, text_leg: TextLeg) -> None:
        if text_leg == "timeout":
            self.fulltext_timeouts += 1
