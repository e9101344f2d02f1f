"""Extraction by an LLM: the same structure as the offline extractor, asked for as JSON.

The transcript is sent in windows of a few thousand words, in parallel up to the endpoint's
concurrency; every name in the answers goes through the same resolver as the offline path,
so the LLM never creates a duplicate of an entity the graph knows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from glyphoxa_pipelines.memory.ids import slugify
from glyphoxa_pipelines.memory.models import ENTITY_TYPES, Entity, Entry
from glyphoxa_pipelines.processing.extraction.relations import Fact, merge_facts
from glyphoxa_pipelines.processing.extraction.resolution import (
    EntityResolver,
    Resolution,
    name_key,
    split_descriptor,
)
from glyphoxa_pipelines.processing.extraction.results import (
    LLM_EXTRACTOR_VERSION,
    ExtractionResult,
)
from glyphoxa_pipelines.processing.extraction.story import story_sentences

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder
    from glyphoxa_pipelines.providers.llm import ChatLLM

LLM_SYSTEM = (
    "You extract a knowledge graph from a tabletop role-playing game transcript. Only extract "
    "in-world facts (characters, places, factions, items, creatures, events, quests), never "
    "facts about the real people at the table or game mechanics. Answer with one JSON object: "
    '{"entities": [{"name": str, "type": one of ' + json.dumps(list(ENTITY_TYPES[:-1])) + ", "
    '"aliases": [str], "description": str}], "relationships": [{"source": entity name, '
    '"type": snake_case relation such as lives_in, located_in, leader_of, member_of, owns, '
    "serves, killed, betrayed, hunting, allied_with, enemy_of, parent_of, sibling_of, "
    'spouse_of, comes_from, seeking, "target": entity name, "evidence": the exact sentence, '
    '"confidence": 0..1, "assertion": "stated" or "inferred"}]}. Prefer precision: omit '
    "anything uncertain."
)


_ENTITY_TYPES = [t for t in ENTITY_TYPES if t != "episode"]
# Structured outputs: endpoints that support them return exactly this shape (strict mode
# needs every property required and no others); the others get the same shape from the prompt.
EXTRACTION_SCHEMA: dict[str, Any] = {
    "name": "knowledge_graph",
    "strict": True,
    "schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["entities", "relationships"],
        "properties": {
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name", "type", "aliases", "description"],
                    "properties": {
                        "name": {"type": "string"},
                        "type": {"type": "string", "enum": _ENTITY_TYPES},
                        "aliases": {"type": "array", "items": {"type": "string"}},
                        "description": {"type": "string"},
                    },
                },
            },
            "relationships": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "source", "type", "target", "evidence", "confidence", "assertion"
                    ],
                    "properties": {
                        "source": {"type": "string"},
                        "type": {"type": "string"},
                        "target": {"type": "string"},
                        "evidence": {"type": "string"},
                        "confidence": {"type": "number"},
                        "assertion": {"type": "string", "enum": ["stated", "inferred"]},
                    },
                },
            },
        },
    },
}


def _in_game_entries(entries: Sequence[Entry]) -> list[Entry]:
    """The entries cut to their in-game sentences (table talk never reaches the model)."""
    kept: dict[int, list[str]] = {}
    for s in story_sentences(entries):
        kept.setdefault(id(s.entry), []).append(s.text)
    return [replace(e, text=" ".join(kept[id(e)])) for e in entries if id(e) in kept]


def _llm_windows(entries: Sequence[Entry], max_words: int) -> list[list[Entry]]:
    windows: list[list[Entry]] = []
    current: list[Entry] = []
    words = 0
    for e in entries:
        n = len(e.text.split())
        if current and words + n > max_words:
            windows.append(current)
            current, words = [], 0
        current.append(e)
        words += n
    if current:
        windows.append(current)
    return windows


def extract_knowledge_llm(
    entries: Sequence[Entry],
    existing: Iterable[Entity],
    llm: ChatLLM,
    *,
    campaign_id: str | None = None,
    session_id: str | None = None,
    review_threshold: float = 0.7,
    embedder: Embedder | None = None,
    window_words: int = 2500,
) -> ExtractionResult:
    """Structured-output extraction by an LLM, window by window, through the same resolver.

    A window whose answer is unparseable contributes nothing; the offline extractor remains
    the fallback for the caller.
    """
    entries = list(entries)
    existing = list(existing)
    if not entries:
        return ExtractionResult([], [], [], extractor_version=LLM_EXTRACTOR_VERSION, method="llm")
    graph = _AnswerGraph(
        existing,
        campaign_id or entries[0].campaign_id,
        session_id or entries[0].session_id,
        EntityResolver(existing, embedder=embedder),
    )
    known = ", ".join(sorted(e.name for e in existing)[:300])

    def ask(window: list[Entry]) -> tuple[list[Entry], dict[str, Any] | None]:
        transcript = "\n".join(f"{e.speaker_name} ({e.speaker_role}): {e.text}" for e in window)
        user = f"Known entities: {known or '(none)'}\n\nTranscript:\n{transcript}"
        return window, llm.complete_json(LLM_SYSTEM, user, schema=EXTRACTION_SCHEMA)

    with ThreadPoolExecutor(max_workers=max(1, llm.concurrency)) as pool:
        answers = list(pool.map(ask, _llm_windows(_in_game_entries(entries), window_words)))

    facts: list[Fact] = []
    for window, answer in answers:
        if answer:
            facts += graph.read(window, answer)
    relationships = merge_facts(facts, graph.campaign_id, graph.session_id, review_threshold)
    relationships = [replace(r, extractor_version=LLM_EXTRACTOR_VERSION) for r in relationships]
    return ExtractionResult(
        entities=list(graph.new_entities.values()),
        relationships=relationships,
        resolutions=graph.resolutions,
        extractor_version=LLM_EXTRACTOR_VERSION,
        method="llm",
    )


class _AnswerGraph:
    """The entities the answers name (resolved or created, in answer order) and their facts."""

    def __init__(
        self, existing: list[Entity], campaign_id: str, session_id: str, resolver: EntityResolver
    ) -> None:
        self.campaign_id = campaign_id
        self.session_id = session_id
        self.resolver = resolver
        self.new_entities: dict[str, Entity] = {}
        self.resolutions: list[Resolution] = []
        self.taken = {e.id for e in existing}

    def entity_for(self, name: Any, kind: str | None, desc: str = "") -> str | None:
        """The id `name` resolves to, or a new entity's; None for a missing name."""
        if not isinstance(name, str) or not name.strip():
            return None
        hit = self.resolver.resolve(name, kind)
        if hit:
            self.resolutions.append(hit)
            return hit.entity_id
        _, _, core = split_descriptor(name)
        core = core or name.strip()
        base = slugify(core)
        entity_id, n = base, 2
        while entity_id in self.taken:
            entity_id, n = f"{base}-{n}", n + 1
        self.taken.add(entity_id)
        entity = Entity(
            campaign_id=self.campaign_id,
            id=entity_id,
            type=kind if kind in ENTITY_TYPES else "concept",
            name=core,
            aliases=[name.strip()] if name.strip() != core else [],
            attributes={"description": desc} if desc else {},
            provenance="extracted",
            session_id=self.session_id,
            extractor_version=LLM_EXTRACTOR_VERSION,
        )
        self.new_entities[entity_id] = entity
        self.resolver.add(entity)
        self.resolutions.append(Resolution(name, entity_id, "new", 1.0, False))
        return entity_id

    def read(self, window: list[Entry], answer: dict[str, Any]) -> list[Fact]:
        """Register one window's entities; return its relationships as facts."""
        types: dict[str, str] = {}
        for item in answer.get("entities") or []:
            if not isinstance(item, dict):
                continue
            kind = str(item.get("type") or "").lower() or None
            name = item.get("name")
            if isinstance(name, str) and kind:
                types[name_key(name)] = kind
            eid = self.entity_for(name, kind, str(item.get("description") or ""))
            for alias in item.get("aliases") or []:
                if eid and isinstance(alias, str) and alias.strip():
                    self.resolver.add_alias(eid, alias)
        facts: list[Fact] = []
        for item in answer.get("relationships") or []:
            if isinstance(item, dict) and (fact := self._fact(window, item, types)):
                facts.append(fact)
        return facts

    def _fact(
        self, window: list[Entry], item: dict[str, Any], types: dict[str, str]
    ) -> Fact | None:
        src_name, dst_name = item.get("source"), item.get("target")
        rel_type = re.sub(r"[^a-z0-9_]+", "_", str(item.get("type") or "").lower()).strip("_")
        if not rel_type or not rel_type[0].isalpha():
            return None
        src = self.entity_for(src_name, types.get(name_key(str(src_name))))
        dst = self.entity_for(dst_name, types.get(name_key(str(dst_name))))
        if not src or not dst or src == dst:
            return None
        try:
            confidence = float(item.get("confidence", 0.75))
        except (TypeError, ValueError):
            confidence = 0.75
        evidence = str(item.get("evidence") or "")
        anchor = _evidence_entry(window, evidence)
        assertion = "inferred" if item.get("assertion") == "inferred" else "stated"
        return Fact(src, dst, rel_type, max(0.0, min(1.0, confidence)), assertion, evidence,
                    anchor)


def _evidence_entry(window: list[Entry], evidence: str) -> Entry:
    """The entry an LLM's evidence quote came from (for observed_at), else the window start."""
    probe = evidence.strip()[:60].lower()
    if probe:
        for e in window:
            if probe in e.text.lower():
                return e
    return window[0]
