"""The memory tools' inputs as pydantic models: one definition gives the JSON schema the LLM
and MCP see and the validation with readable errors.

The asking NPC, campaign and session are *not* arguments: the caller binds them (`ToolScope`),
so the LLM cannot ask as somebody else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from glyphoxa_pipelines.memory.relation_types import relation_type


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SearchSessionsArgs(ToolArgs):
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


class QueryEntitiesArgs(ToolArgs):
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


class _OneSessionArgs(ToolArgs):
    session: str = Field(
        "last",
        min_length=1,
        max_length=200,
        description='"last" (the previous session), "current", or a session id.',
    )


class GetRecapArgs(_OneSessionArgs):
    """A session's "previously on…" recap."""


class GetSessionSummaryArgs(_OneSessionArgs):
    """A session's summary."""


class SearchFactsArgs(ToolArgs):
    """Facts and events, optionally within a time window."""

    query: str | None = Field(None, max_length=500, description="Words to match.")
    entity: str | None = Field(None, max_length=200, description="Only facts about this entity.")
    relation: Annotated[str, BeforeValidator(relation_type)] | None = Field(
        None, max_length=100,
        description="Only this relation type (any spelling: LOCATED_AT, located at).",
    )
    after: datetime | None = Field(None, description="Observed at or after (ISO 8601).")
    before: datetime | None = Field(None, description="Observed before (ISO 8601).")
    at: datetime | None = Field(None, description="What was true at this time.")
    include_history: bool = Field(False, description="Also facts no longer true.")
    limit: int = Field(10, ge=1, le=50)


class SearchGraphArgs(ToolArgs):
    """GraphRAG: passages that mention an entity or its neighbourhood."""

    query: str = Field(min_length=1, max_length=500, description="What to look for.")
    entity: str = Field(min_length=1, max_length=200, description="Entity name or id to scope by.")
    depth: int = Field(1, ge=0, le=2, description="Include entities this many hops away.")
    mode: Literal["semantic", "fulltext"] = "semantic"
    top_k: int = Field(5, ge=1, le=20)
