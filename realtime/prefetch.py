"""Speculative pre-fetch: read the partial transcript before the utterance ends, guess what
cold memory the NPC will need, fetch it in the background, and hand it to the next hot context.

Two triggers: a known entity name or alias (whole-word, case-insensitive, matched after
phonetic correction) pre-fetches that entity and its facts; a temporal cue ("last time",
"do you remember", ...) pre-fetches a semantic search on the rest of the sentence. Detection is
in-memory and sub-millisecond; fetching runs as a task and never delays the caller.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.processing.mentions import MentionFinder

TEMPORAL_CUES = re.compile(
    r"\b(?:last time|the other (?:day|time|night)|previously|before that|earlier|"
    r"do you remember|don'?t you remember|you remember|remember (?:when|how|what|that|the)|"
    r"when did (?:we|you|i|they|he|she)|what happened|back (?:when|then|in)|"
    r"(?:last|previous) (?:session|week|night|time we met)|have we (?:met|seen|been)|"
    r"did (?:we|you) ever|you (?:told|said|promised|mentioned)|ago|"
    # past-tense questions ask about what happened: "when did Mira leave", "what was the..."
    r"(?:when|what|where|who|how|why|which) (?:did|was|were|had|has|have)|"
    r"(?:did|have|has|had) (?:you|we|i|he|she|they) (?:ever|already|)\s?\w+ed)\b",
    re.IGNORECASE,
)
_FILLER = re.compile(
    r"\b(?:um+|uh+|hmm+|so|well|hey|oh|like|okay|ok|please|tell me|can you|could you)\b",
    re.IGNORECASE,
)
MIN_TOPIC_WORDS = 2


@dataclass(frozen=True, slots=True)
class Trigger:
    kind: str  # "entity" | "memory"
    key: str  # entity id, or the topic text of a semantic search
    surface: str  # what in the partial fired it


def topic_of(text: str) -> str:
    """The likely topic of a temporal question: the sentence without its cues and filler."""
    rest = TEMPORAL_CUES.sub(" ", text)
    rest = _FILLER.sub(" ", rest)
    rest = re.sub(r"[^\w'’ -]+", " ", rest)
    return " ".join(rest.split())


def detect(text: str, finder: MentionFinder | None) -> list[Trigger]:
    """Triggers in a partial transcript, in text order, deduplicated."""
    out: list[Trigger] = []
    seen: set[tuple[str, str]] = set()
    if finder is not None:
        for m in finder.find(text):
            if ("entity", m.entity_id) not in seen:
                seen.add(("entity", m.entity_id))
                out.append(Trigger("entity", m.entity_id, m.surface))
    cue = TEMPORAL_CUES.search(text)
    if cue is not None:
        topic = topic_of(text)
        if len(topic.split()) >= MIN_TOPIC_WORDS:
            out.append(Trigger("memory", topic, cue.group(0)))
    return out


@dataclass(slots=True)
class Prefetched:
    """A pre-fetched result for one session, fetched as `viewer` would see it."""

    trigger: Trigger
    viewer: str
    memories: list[Any]  # hot_context.Memory
    fetched_at: float
    turn: int = 0
    elapsed_ms: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


class PrefetchCache:
    """Per-session pre-fetched results, kept for `ttl_s` (about one turn plus the NPC's reply)
    and capped per session. In-process: with several replicas, route a session to one."""

    def __init__(self, ttl_s: float = 120.0, per_session: int = 16, sessions: int = 1024) -> None:
        self.ttl_s = ttl_s
        self.per_session = per_session
        self.max_sessions = sessions
        self._items: OrderedDict[str, OrderedDict[tuple[str, str, str], Prefetched]] = (
            OrderedDict()
        )
        self.stats = {"triggers": 0, "fetched": 0, "deduplicated": 0, "served": 0}

    def _bucket(self, session_id: str) -> OrderedDict[tuple[str, str, str], Prefetched]:
        bucket = self._items.get(session_id)
        if bucket is None:
            bucket = self._items[session_id] = OrderedDict()
            while len(self._items) > self.max_sessions:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(session_id)
        return bucket

    def _prune(self, bucket: OrderedDict[tuple[str, str, str], Prefetched], now: float) -> None:
        for key in [k for k, v in bucket.items() if now - v.fetched_at > self.ttl_s]:
            del bucket[key]

    def fresh(self, session_id: str, trigger: Trigger, viewer: str) -> bool:
        """Already fetched (or being fetched) recently: skip a duplicate fetch."""
        bucket = self._items.get(session_id)
        if not bucket:
            return False
        item = bucket.get((trigger.kind, trigger.key, viewer))
        return item is not None and time.monotonic() - item.fetched_at <= self.ttl_s

    def put(self, session_id: str, item: Prefetched) -> None:
        bucket = self._bucket(session_id)
        self._prune(bucket, time.monotonic())
        key = (item.trigger.kind, item.trigger.key, item.viewer)
        bucket.pop(key, None)
        bucket[key] = item
        while len(bucket) > self.per_session:
            bucket.popitem(last=False)
        self.stats["fetched"] += 1

    def get(self, session_id: str, viewer: str) -> list[Prefetched]:
        """Items visible to `viewer`: fetched for it, or public-only ones. Newest first."""
        bucket = self._items.get(session_id)
        if not bucket:
            return []
        self._prune(bucket, time.monotonic())
        items = [v for v in bucket.values() if v.viewer in ("", viewer)]
        if items:
            self.stats["served"] += 1
        return list(reversed(items))

    def clear(self, session_id: str) -> None:
        self._items.pop(session_id, None)
