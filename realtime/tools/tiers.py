"""Budget tiers: which tools the LLM is shown this turn, and may call.

A tool is declared in a tier when its p50, measured at run time (`LatencyTracker`), fits the
tier's budget; `select_tier` picks the turn's tier from what the caller knows about the turn.

Membership must not flap: the LLM's tool list changing from one turn to the next on a single
slow sample (a GC pause, a cold cache) costs more than the sample says. So the p50 a tier reads
is smoothed (the median of the last `SMOOTH_WINDOW` samples, with the tool's prior standing in
for samples not yet taken, so one early outlier is outvoted), and membership has hysteresis: a
tool leaves a tier only when the smoothed p50 exceeds the budget by `EXIT_MARGIN`, and comes
back only when it fits under `ENTER_MARGIN` of it. `ALWAYS_OFFERED` tools are in every tier
whatever their latency (the design: FAST always offers `memory.query_entities`, the NPC's one
way to look a name up). A call to a tool its caller's tier does not offer is refused
(`dispatch`), so the tier is a contract, not a hint.
"""

from __future__ import annotations

import re
import statistics
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

SMOOTH_WINDOW = 32  # recent samples the tier's p50 is the median of
MIN_SAMPLES = 5  # until then the prior fills the window (one sample cannot move the median)
EXIT_MARGIN = 1.25  # leave a tier above budget * EXIT_MARGIN ...
ENTER_MARGIN = 0.8  # ... come back at or under budget * ENTER_MARGIN
ALWAYS_OFFERED = frozenset({"memory.query_entities"})


class LatencyTracker:
    """Rolling per-tool latencies measured at run time (the tier selector's evidence), and
    each tool's tier membership, updated with hysteresis as samples arrive."""

    def __init__(self, window: int = 256) -> None:
        self._samples: dict[str, deque[float]] = {}
        self.window = window
        self._member: dict[tuple[str, Tier], bool] = {}

    def record(self, name: str, ms: float) -> None:
        self._samples.setdefault(name, deque(maxlen=self.window)).append(ms)
        smoothed = self.p50(name)
        for tier, budget in TIER_BUDGET_MS.items():
            key = (name, tier)
            inside = self._member.get(key, get_spec(name).prior_p50_ms <= budget)
            if inside and smoothed > budget * EXIT_MARGIN:
                inside = False
            elif not inside and smoothed <= budget * ENTER_MARGIN:
                inside = True
            self._member[key] = inside

    def offers(self, tier: Tier, name: str) -> bool:
        """Whether `tier` offers the tool now (always-offered, or a member by its latency)."""
        if name in ALWAYS_OFFERED:
            return True
        member = self._member.get((name, tier))
        return member if member is not None else get_spec(name).prior_p50_ms <= TIER_BUDGET_MS[tier]

    def percentile(self, name: str, q: float) -> float | None:
        samples = self._samples.get(name)
        if not samples:
            return None
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def p50(self, name: str) -> float:
        """The smoothed p50 tiers read: the median of the recent samples, the prior standing
        in for those not yet taken."""
        prior = get_spec(name).prior_p50_ms
        recent = list(self._samples.get(name, ()))[-SMOOTH_WINDOW:]
        ordered = sorted(recent + [prior] * max(0, MIN_SAMPLES - len(recent)))
        return statistics.median(ordered)

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
    """Tools the tier offers (`LatencyTracker.offers`), cheapest first (ties by name)."""
    fitting = [s for s in TOOLS.values() if latencies.offers(tier, s.name)]
    return sorted(fitting, key=lambda s: (latencies.p50(s.name), s.name))


def refusal(name: str, tier: Tier, latencies: LatencyTracker) -> str:
    """The tool result's text when a tool outside the caller's tier is called: what happened
    and what the LLM may use instead, so it can go on without a retry loop."""
    offered = ", ".join(s.name for s in tools_for_tier(tier, latencies))
    return (
        f"{name} is not available in the {tier.value} tier this turn (it takes longer than "
        f"the {TIER_BUDGET_MS[tier]:g} ms budget); use one of: {offered}, or answer from what "
        "you already know"
    )


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
