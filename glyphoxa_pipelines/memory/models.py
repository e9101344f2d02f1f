"""Plain data types of the three memory layers.

Frozen dataclasses, not ORM objects: pure transforms (chunking, extraction, correction) take and
return these, and the stores map them to and from rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from glyphoxa_pipelines.memory.fact_text import fact_sentence

SpeakerRole = Literal["dm", "player", "npc", "system"]
Provenance = Literal["dm", "import", "extracted"]
Assertion = Literal["stated", "inferred"]
FactStatus = Literal["canon", "pending", "rejected"]
Visibility = Literal["public", "secret", "hidden"]

ENTITY_TYPES = (
    "npc",
    "player",
    "location",
    "item",
    "faction",
    "event",
    "quest",
    "concept",
    "creature",
    "episode",
)


@dataclass(frozen=True, slots=True)
class Campaign:
    id: str
    name: str
    description: str = ""
    system: str = ""
    review_threshold: float = 0.7
    active_embedding_model: str = "all-MiniLM-L6-v2"


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    campaign_id: str
    title: str = ""
    status: Literal["live", "ended"] = "live"
    started_at: datetime | None = None
    ended_at: datetime | None = None
    scene: dict[str, Any] = field(default_factory=dict)
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NewEntry:
    """An utterance to write to L1; `idempotency_key` makes a retried write land once."""

    idempotency_key: str
    text: str
    speaker_id: str = ""
    speaker_name: str = ""
    speaker_role: SpeakerRole = "player"
    raw_text: str | None = None  # defaults to text (no correction applied yet)
    npc_id: str | None = None
    spoken_at: datetime | None = None
    duration_s: float = 0.0
    word_confidences: list[float] | None = None
    corrections: list[dict[str, Any]] = field(default_factory=list)
    corrector_version: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """An L1 row as stored."""

    id: int
    campaign_id: str
    session_id: str
    idempotency_key: str
    speaker_id: str
    speaker_name: str
    speaker_role: SpeakerRole
    raw_text: str
    text: str
    npc_id: str | None
    spoken_at: datetime
    duration_s: float
    word_confidences: list[float] | None = None
    corrections: list[dict[str, Any]] = field(default_factory=list)
    corrector_version: str | None = None
    rank: float | None = None  # set by full-text search


@dataclass(frozen=True, slots=True)
class Chunk:
    """An L2 chunk: consecutive turns of one session, with what the turns mention."""

    id: str
    campaign_id: str
    session_id: str
    seq: int
    text: str
    speakers: list[str] = field(default_factory=list)
    entity_ids: list[str] = field(default_factory=list)
    topic: str = ""
    first_entry_id: int | None = None
    last_entry_id: int | None = None
    start_at: datetime | None = None
    end_at: datetime | None = None
    token_count: int = 0
    chunker_version: str = ""


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """A search result over chunks, with where it came from."""

    chunk: Chunk
    score: float  # cosine distance for vector search, ts_rank for full-text
    method: Literal["vector", "fulltext"] = "vector"


@dataclass(frozen=True, slots=True)
class TurnText:
    """A session entry to embed on its own (speaker name falls back to the speaker id)."""

    entry_id: int
    text: str
    speaker_name: str

    def embedding_text(self) -> str:
        """What is embedded: '<speaker>: <text>', the form session search was tuned on."""
        return f"{self.speaker_name}: {self.text}"


@dataclass(frozen=True, slots=True)
class Entity:
    campaign_id: str
    id: str
    type: str
    name: str
    aliases: list[str] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)
    provenance: Provenance = "dm"
    session_id: str | None = None
    extractor_version: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Relationship:
    """A typed directed fact `source --rel_type--> target` with provenance and visibility."""

    campaign_id: str
    source_id: str
    target_id: str
    rel_type: str
    attributes: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0
    assertion: Assertion = "stated"
    provenance: Provenance = "dm"
    dm_confirmed: bool = False
    status: FactStatus = "canon"
    visibility: Visibility = "public"
    known_by: list[str] = field(default_factory=list)
    session_id: str | None = None
    observed_at: datetime | None = None
    evidence: str = ""
    valid_from: datetime | None = None
    invalidated_at: datetime | None = None
    invalidated_by: int | None = None
    extractor_version: str | None = None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class NpcProfile:
    campaign_id: str
    entity_id: str
    personality: str = ""
    speaking_style: str = ""
    emotional_state: str = ""
    behavior_rules: list[str] = field(default_factory=list)
    secret_knowledge: list[str] = field(default_factory=list)
    voice: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KnownFact:
    """A relationship as one NPC sees it: `secret` tells the LLM to guard it."""

    relationship: Relationship
    source_name: str
    target_name: str
    secret: bool

    def sentence(self) -> str:
        return fact_sentence(
            self.source_name, self.relationship.rel_type, self.target_name, secret=self.secret
        )


@dataclass(frozen=True, slots=True)
class Subgraph:
    entities: list[Entity]
    facts: list[KnownFact]


@dataclass(frozen=True, slots=True)
class IdentitySnapshot:
    """Who an NPC is and what it knows: the stable part of its hot context."""

    entity: Entity
    profile: NpcProfile | None
    facts: list[KnownFact]  # facts involving the NPC or known to it, visible to it


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    campaign_id: str
    summary: str
    key_points: list[str] = field(default_factory=list)
    method: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Recap:
    session_id: str
    campaign_id: str
    text: str
    audio_path: str | None = None
    method: str = ""
    created_at: datetime | None = None
