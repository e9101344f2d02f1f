"""What a session search hands back besides its results: what it measured, for the caller to
count (search never touches its caller's state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from glyphoxa_pipelines.memory.models import ChunkHit

Fused = tuple[ChunkHit, float, list[str]]
# How the full-text leg ended: answered in time, hit its statement limit, or was still running
# when the grace ran out (it finishes in the background; its answer is not used).
TextLeg = Literal["ok", "timeout", "late", "off"]


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
    fulltext_late: int = 0

    def count(self, text_leg: TextLeg) -> None:
        if text_leg == "timeout":
            self.fulltext_timeouts += 1
        elif text_leg == "late":
            self.fulltext_late += 1
