"""The memory tools' registry: names, JSON-schema inputs (validated), budget tiers and the
per-turn tier selector.

Inputs are pydantic models: one definition gives the JSON schema the LLM and MCP see and the
validation with readable errors. The asking NPC, campaign and session are *not* tool arguments:
the caller binds them (HTTP body `context`, MCP headers or CLI flags), so the LLM cannot ask as
somebody else.
"""

from __future__ import annotations

import copy
import functools
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ToolInputError(ValueError):
    """Arguments that do not match the tool's schema; the message names each problem."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        super().__init__(f"invalid arguments for {tool}: " + "; ".join(problems))
        self.tool = tool
        self.problems = problems


class UnknownToolError(LookupError):
    pass


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SearchSessionsArgs(_Args):
    """Semantic + full-text search over past sessions' transcripts."""

    query: str = Field(min_length=1, max_length=500, description="What to look for.")
    top_k: int = Field(
        8, ge=1, le=30, description="At most this many results (one per session, best first)."
    )
    max_tokens: int = Field(
        1500, ge=100, le=8000, description="Stop adding turns past this many tokens."
    )
    session_id: str | None = Field(None, description="Only this session.")
    speaker: str | None = Field(None, description="Only passages where this speaker talks.")
    after: datetime | None = Field(None, description="Only passages after this time (ISO 8601).")
    before: datetime | None = Field(None, description="Only passages before this time.")


class QueryEntitiesArgs(_Args):
    """Structured knowledge-graph query."""

    name: str | None = Field(
        None, max_length=200, description="Entity name, alias or part of one."
    )
    type: str | None = Field(
        None, pattern=r"^[a-z][a-z_]*$", description="npc, location, item, faction, quest, ..."
    )
    attributes: dict[str, Any] | None = Field(
        None, description="Attributes the entity must have, e.g. {\"race\": \"elf\"}."
    )
    related_to: str | None = Field(
        None, max_length=200, description="Also show how the entity connects to this one."
    )
    depth: int = Field(1, ge=1, le=3, description="Hops of relationships to include.")
    limit: int = Field(5, ge=1, le=25, description="At most this many entities.")


class GetSessionSummaryArgs(_Args):
    """A session's summary."""

    session: str = Field(
        "last",
        min_length=1,
        max_length=200,
        description='"last" (the previous session), "current", or a session id.',
    )


class SearchFactsArgs(_Args):
    """Facts and events, optionally within a time window."""

    query: str | None = Field(None, max_length=500, description="Words to match.")
    entity: str | None = Field(None, max_length=200, description="Only facts about this entity.")
    relation: str | None = Field(
        None, pattern=r"^[a-z][a-z0-9_]*$", description="Only this relation type."
    )
    after: datetime | None = Field(None, description="Observed at or after (ISO 8601).")
    before: datetime | None = Field(None, description="Observed before (ISO 8601).")
    at: datetime | None = Field(None, description="What was true at this time.")
    include_history: bool = Field(False, description="Also facts no longer true.")
    limit: int = Field(10, ge=1, le=50)


class SearchGraphArgs(_Args):
    """GraphRAG: passages that mention an entity or its neighbourhood."""

    query: str = Field(min_length=1, max_length=500, description="What to look for.")
    entity: str = Field(min_length=1, max_length=200, description="Entity name or id to scope by.")
    depth: int = Field(1, ge=0, le=2, description="Include entities this many hops away.")
    mode: Literal["semantic", "fulltext"] = "semantic"
    top_k: int = Field(5, ge=1, le=20)


class Tier(StrEnum):
    FAST = "FAST"
    STANDARD = "STANDARD"
    DEEP = "DEEP"


# A tool is declared in a tier when its measured p50 fits the tier's budget.
TIER_BUDGET_MS = {Tier.FAST: 10.0, Tier.STANDARD: 60.0, Tier.DEEP: 2000.0}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[_Args]
    prior_p50_ms: float  # before anything is measured

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema(self.args))


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "memory.search_sessions",
            "Search what was said in past game sessions (semantic and keyword search, "
            "rank-fused). Filters: session, speaker, time. Each result is one session's most "
            "relevant lines in spoken order ('…' where lines are skipped) and names its "
            "session, time and speakers.",
            SearchSessionsArgs,
            15.0,
        ),
        ToolSpec(
            "memory.query_entities",
            "Look up people, places, items, factions and quests you know of: by name, type "
            "or attribute, with their relationships (several hops) and how one connects to "
            "another.",
            QueryEntitiesArgs,
            2.0,
        ),
        ToolSpec(
            "memory.get_session_summary",
            'The summary of a game session: "last" for the previous one, or a session id.',
            GetSessionSummaryArgs,
            1.5,
        ),
        ToolSpec(
            "memory.search_facts",
            "Search facts and events you know, optionally within a time window or as they "
            "stood at a given time.",
            SearchFactsArgs,
            3.0,
        ),
        ToolSpec(
            "memory.search_graph",
            "Search past sessions for passages about an entity and its neighbourhood in the "
            "knowledge graph (GraphRAG).",
            SearchGraphArgs,
            20.0,
        ),
    )
}


@functools.cache
def _schema(model: type[_Args]) -> dict[str, Any]:
    """JSON schema generation costs about a millisecond: once per model."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("type", "object")
    return schema


def get_spec(name: str) -> ToolSpec:
    spec = TOOLS.get(name)
    if spec is None:
        raise UnknownToolError(f"unknown tool {name!r}; known tools: {', '.join(sorted(TOOLS))}")
    return spec


def validate(name: str, arguments: dict[str, Any] | None) -> _Args:
    """Arguments as the tool's model, or ToolInputError listing every problem."""
    spec = get_spec(name)
    if arguments is not None and not isinstance(arguments, dict):
        raise ToolInputError(name, ["arguments must be a JSON object"])
    try:
        return spec.args.model_validate(arguments or {})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
            problems.append(f"{loc}: {err['msg']}")
        raise ToolInputError(name, problems) from None


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
