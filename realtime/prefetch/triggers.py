"""What in a partial transcript fires a pre-fetch.

Two triggers: a known entity name or alias (whole-word, case-insensitive, matched after
phonetic correction) pre-fetches that entity and its facts; a temporal cue ("last time",
"do you remember", ...) pre-fetches a semantic search on the rest of the sentence. Detection
is in-memory and sub-millisecond.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
# The search tool's query limit (`SearchSessionsArgs.query`): a long DM speech with a cue in
# it must still make a valid search, of the words around the cue.
MAX_TOPIC_CHARS = 500
_SENTENCE = re.compile(r"[^.!?]*(?:[.!?]+|$)")


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
        if len(topic) > MAX_TOPIC_CHARS:
            topic = _bounded_topic(text, cue.start())
        if len(topic.split()) >= MIN_TOPIC_WORDS:
            out.append(Trigger("memory", topic, cue.group(0)))
    return out


def _bounded_topic(text: str, at: int) -> str:
    """The topic of the sentence holding the cue at `at`, cut at a word to the query limit:
    in a long speech, that sentence is what the question is about."""
    sentence = next((m.group(0) for m in _SENTENCE.finditer(text) if m.end() > at), text)
    topic = topic_of(sentence)
    if len(topic) <= MAX_TOPIC_CHARS:
        return topic
    return topic[:MAX_TOPIC_CHARS + 1].rsplit(" ", 1)[0][:MAX_TOPIC_CHARS]
