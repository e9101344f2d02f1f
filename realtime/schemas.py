"""Request bodies of the HTTP API (pydantic: validated, documented in the OpenAPI schema).

Every text, timestamp, number and free-form JSON field uses a type from `realtime.api.limits`, so a
body the database would refuse is a 422 here and never reaches the spool."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from glyphoxa_pipelines.memory.relation_types import relation_type
from realtime.api.limits import (
    Duration,
    EntityRef,
    EntryText,
    EvidenceText,
    IdText,
    JsonObject,
    JsonValue,
    NameText,
    PartialText,
    ProseText,
    Real,
    RequiredId,
    RequiredName,
    Timestamp,
)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CampaignIn(_Body):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=100)
    name: RequiredName
    description: ProseText = ""
    system: NameText = ""


class SessionIn(_Body):
    session_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=200
    )
    title: NameText = ""
    started_at: Timestamp | None = None
    scene: JsonObject | None = None


class SceneIn(_Body):
    location: NameText | None = None
    present: list[EntityRef] = Field(default_factory=list, max_length=100)
    quests: list[JsonValue] = Field(default_factory=list, max_length=50)


class EntryIn(_Body):
    """One utterance. `idempotency_key` makes a retried (or spooled and replayed) write land
    exactly once."""

    idempotency_key: RequiredId
    text: EntryText
    speaker_id: IdText = ""
    speaker_name: NameText = ""
    role: Literal["dm", "player", "npc", "system"] = "player"
    npc_id: IdText | None = None
    spoken_at: Timestamp | None = Field(
        None, description="When it was said; at most a day ahead of the server's clock."
    )
    duration_s: Duration = 0.0
    word_confidences: list[Real] | None = Field(None, max_length=50_000)

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
    text: PartialText
    npc_id: IdText | None = Field(None, description="The NPC being addressed, when known.")
    speaker: NameText | None = None


class ToolCallIn(_Body):
    """A memory tool call: `arguments` are the LLM's; `context` is bound by the caller."""

    campaign_id: IdText | None = None
    session_id: IdText | None = None
    npc_id: IdText | None = None
    tier: Literal["FAST", "STANDARD", "DEEP"] | None = Field(
        None, description="The turn's tool tier: a tool it does not offer is refused."
    )
    arguments: JsonObject = Field(default_factory=dict)


class EntityIn(_Body):
    id: IdText | None = None
    type: str = Field(pattern=r"^[a-z][a-z_]*$", max_length=50)
    name: RequiredName
    aliases: list[RequiredName] = Field(default_factory=list, max_length=50)
    attributes: JsonObject = Field(default_factory=dict)


class EntityPatch(_Body):
    name: RequiredName | None = None
    type: str | None = Field(None, pattern=r"^[a-z][a-z_]*$", max_length=50)
    aliases: list[RequiredName] | None = Field(None, max_length=50)
    attributes: JsonObject | None = None
    remove_attributes: list[NameText] = Field(default_factory=list, max_length=200)


class NpcProfileIn(_Body):
    personality: ProseText = ""
    speaking_style: ProseText = ""
    emotional_state: ProseText = ""
    behavior_rules: list[ProseText] = Field(default_factory=list, max_length=50)
    secret_knowledge: list[ProseText] = Field(default_factory=list, max_length=50)
    voice: JsonObject = Field(default_factory=dict)


class FactIn(_Body):
    source: RequiredName = Field(description="Entity id or name.")
    relation: Annotated[str, BeforeValidator(relation_type)] = Field(
        max_length=100, description="Relation type in any spelling (LOCATED_AT -> located_at)."
    )
    target: RequiredName = Field(description="Entity id or name.")
    visibility: Literal["public", "secret", "hidden"] = "public"
    known_by: list[EntityRef] = Field(default_factory=list, max_length=100)
    session_id: IdText | None = None
    evidence: EvidenceText = ""
    confidence: Real = Field(1.0, ge=0, le=1)


class RetconIn(_Body):
    """Retcon: the fact stops being true; optionally another replaces it."""

    replacement: FactIn | None = None


class SpellingIn(_Body):
    """A spelling the pipeline offered for an entity, as the DM answers it."""

    spelling: RequiredName


class RevealIn(_Body):
    """Reveal a fact: to these NPCs, or (`to` null) to all."""

    to: list[EntityRef] | None = Field(None, max_length=100)


class VisibilityIn(_Body):
    visibility: Literal["public", "secret", "hidden"]
    known_by: list[EntityRef] = Field(default_factory=list, max_length=100)
