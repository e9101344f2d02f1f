"""Budget tiers: which tools the LLM is shown this turn.

A tool is declared in a tier when its p50, measured at run time (`LatencyTracker`), fits the
tier's budget; `select_tier` picks the turn's tier from what the caller knows about the turn.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from realtime.tools.registry import TOOLS, ToolSpec, get_spec


class Tier(StrEnum):
    FAST = "FAST"
    STANDARD = "STANDARD"
    DEEP = "DEEP"


# A tool is declared in a tier when its measured p50 fits the tier's budget.
TIER_BUDGET_MS = {Tier.FAST: 10.0, Tier.STANDARD: 60.0, Tier.DEEP: 2000.0}


class LatencyTracker:
    """Rolling per-tool latencies measured at run time (the tier selector's evidence)."""

    def __init__(self, window: int = 256) -> None:
        self._samples: dict[str, deque[float]] = {}
        self.window = window

    def record(self, name: str, ms: float) -> None:
        self._samples.setdefault(name, deque(maxlen=self.window)).append(ms)

    def percentile(self, name: str, q: float) -> float | None:
        samples = self._samples.get(name)
        if not samples:
            return None
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def p50(self, name: str) -> float:
        measured = self.percentile(name, 0.5)
        return measured if measured is not None else get_spec(name).prior_p50_ms

    def snapshot(self) -> dict[str, dict[str, float | int | None]]:
        return {
            name: {
                "p50_ms": self.percentile(name, 0.5),
                "p95_ms": self.percentile(name, 0.95),
                "n": len(self._samples.get(name, ())),
            }
            for name in TOOLS
        }

    def timed(self, name: str) -> Callable[[], None]:
        start = time.perf_counter()
        return lambda: self.record(name, (time.perf_counter() - start) * 1000)


def tools_for_tier(tier: Tier, latencies: LatencyTracker) -> list[ToolSpec]:
    """Tools whose p50 fits the tier budget, cheapest first (ties by name)."""
    budget = TIER_BUDGET_MS[tier]
    fitting = [s for s in TOOLS.values() if latencies.p50(s.name) <= budget]
    return sorted(fitting, key=lambda s: (latencies.p50(s.name), s.name))


DEEP_REQUEST = re.compile(
    r"\b(?:tell me (?:everything|all|more)|in detail|everything you know|all you know|"
    r"think (?:hard|carefully)|the whole story|from the (?:beginning|start)|"
    r"what (?:exactly )?happened|remember (?:when|everything)|explain)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class TierDecision:
    tier: Tier
    reason: str


def select_tier(
    *,
    utterance: str = "",
    dm_override: Tier | str | None = None,
    queue_depth: int = 0,
    first_turn: bool = False,
    busy_queue: int = 2,
) -> TierDecision:
    """Which tool tier this turn gets. Precedence: the DM's override; a backed-up voice queue
    (FAST: answer quickly, pre-fetch covers the rest); an explicit deep request (DEEP); the
    NPC's first turn in the session (STANDARD: nothing pre-fetched yet); else FAST."""
    if dm_override:
        return TierDecision(Tier(str(dm_override).upper()), "dm_override")
    if queue_depth >= busy_queue:
        return TierDecision(Tier.FAST, "queue_depth")
    if utterance and DEEP_REQUEST.search(utterance):
        return TierDecision(Tier.DEEP, "deep_request")
    if first_turn:
        return TierDecision(Tier.STANDARD, "first_turn")
    return TierDecision(Tier.FAST, "default")
