"""Who asks a memory tool: bound by the caller (HTTP body, MCP headers, CLI flags), never by
the LLM, so it cannot ask as somebody else."""

from __future__ import annotations

from dataclasses import dataclass

from realtime.tools.tiers import Tier


@dataclass(frozen=True, slots=True)
class ToolScope:
    campaign_id: str | None = None
    session_id: str | None = None
    npc_id: str | None = None
    # The budget tier the caller chose for this turn: a tool the tier does not offer is
    # refused. None: no tier bound (an operator's call), every tool may run.
    tier: Tier | None = None
