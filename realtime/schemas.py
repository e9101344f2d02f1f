"""Request bodies of the HTTP API (pydantic: validated, documented in the OpenAPI schema)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CampaignIn(_Body):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    system: str = ""


class SessionIn(_Body):
    session_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=200
    )
    title: str = ""
    started_at: datetime | None = None
    scene: dict[str, Any] | None = None


class SceneIn(_Body):
    location: str | None = None
    present: list[str] = Field(default_factory=list)
    quests: list[Any] = Field(default_factory=list)


class EntryIn(_Body):
    """One utterance. `idempotency_key` makes a retried (or spooled and replayed) write land
    exactly once."""

    idempotency_key: str = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=200_000)
    speaker_id: str = ""
    speaker_name: str = ""
    role: Literal["dm", "player", "npc", "system"] = "player"
    npc_id: str | None = None
    spoken_at: datetime | None = None
    duration_s: float = Field(0.0, ge=0)
    word_confidences: list[float] | None = None

    @model_validator(mode="after")
    def _confidences(self) -> EntryIn:
        if self.word_confidences is not None and any(
            not 0.0 <= c <= 1.0 for c in self.word_confidences
        ):
            raise ValueError("word_confidences must lie in [0, 1]")
        return self


class EntryBatchIn(_Body):
    entries: list[EntryIn] = Field(min_length=1, max_length=1000)


class PartialIn(_Body):
    text: str = Field(min_length=1, max_length=10_000)
    npc_id: str | None = Field(None, description="The NPC being addressed, when known.")
    speaker: str | None = None


class ToolCallIn(_Body):
    """A memory tool call: `arguments` are the LLM's; `context` is bound by the caller."""

    campaign_id: str | None = None
    session_id: str | None = None
    npc_id: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class EntityIn(_Body):
    id: str | None = Field(None, max_length=200)
    type: str = Field(pattern=r"^[a-z][a-z_]*$")
    name: str = Field(min_length=1, max_length=300)
    aliases: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)


class EntityPatch(_Body):
    name: str | None = Field(None, min_length=1, max_length=300)
    type: str | None = Field(None, pattern=r"^[a-z][a-z_]*$")
    aliases: list[str] | None = None
    attributes: dict[str, Any] | None = None
    remove_attributes: list[str] = Field(default_factory=list)


class NpcProfileIn(_Body):
    personality: str = ""
    speaking_style: str = ""
    emotional_state: str = ""
    behavior_rules: list[str] = Field(default_factory=list)
    secret_knowledge: list[str] = Field(default_factory=list)
    voice: dict[str, Any] = Field(default_factory=dict)


class FactIn(_Body):
    source: str = Field(min_length=1, description="Entity id or name.")
    relation: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    target: str = Field(min_length=1, description="Entity id or name.")
    visibility: Literal["public", "secret"] = "public"
    known_by: list[str] = Field(default_factory=list)
    session_id: str | None = None
    evidence: str = ""
    confidence: float = Field(1.0, ge=0, le=1)


class RetconIn(_Body):
    """Retcon: the fact stops being true; optionally another replaces it."""

    replacement: FactIn | None = None


class VisibilityIn(_Body):
    visibility: Literal["public", "secret"]
    known_by: list[str] = Field(default_factory=list)
