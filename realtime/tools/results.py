"""The shapes tool results take: what the LLM reads, every one citing its `source`.

One home per shape, so a fact reads the same from `memory.search_facts`, `query_entities` and
the DM's review queue.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from glyphoxa_pipelines.memory import Entity
from glyphoxa_pipelines.memory.models import ChunkHit
from realtime.errors import DEGRADED

# What one result costs its reader is counted in characters of the answer as sent, ~4 to a
# token (`hot_context.estimate_tokens`): the voice loop and MCP hand the model `json.dumps` of
# the tool's answer, so its keys, ids, quotes and escaped newlines are read too.
CHARS_PER_TOKEN = 4
# The `, ` that separates one result from the next in the answer's list.
RESULT_SEPARATOR_CHARS = 2


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def iso_minute(value: datetime | None) -> str | None:
    """A time to the minute in UTC (`2023-07-20T20:56Z`): what a reader of a cited line needs
    (the day and the hour), in 17 characters rather than `isoformat`'s 25; a line's own
    second is in its entry. A naive time is taken as UTC, as the store writes them."""
    if value is None:
        return None
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.isoformat(timespec="minutes")[:16] + "Z"  # faster than strftime


def reader_chars(result: Mapping[str, Any]) -> int:
    """Characters a result adds to the answer the model reads: its JSON as sent (non-ASCII
    kept, as the voice loop's `json.dumps` keeps it) and the separator before the next."""
    return len(json.dumps(result, ensure_ascii=False, default=str)) + RESULT_SEPARATOR_CHARS


def reader_tokens(result: Mapping[str, Any]) -> int:
    """`reader_chars` in tokens, rounded up."""
    return -(-reader_chars(result) // CHARS_PER_TOKEN)


def entity_result(entity: Entity, facts: list[Any]) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.type,
        "aliases": list(entity.aliases),
        "attributes": entity.attributes,
        "facts": [fact_result(f, None) for f in facts],
        "source": {"session_id": entity.session_id, "provenance": entity.provenance,
                   "when": iso(entity.created_at)},
    }


def fact_result(fact: Any, session_started: datetime | None) -> dict[str, Any]:
    rel = fact.relationship
    return {
        "id": rel.id,
        "text": fact.sentence(),
        "source_entity": fact.source_name,
        "relation": rel.rel_type,
        "target_entity": fact.target_name,
        "confidence": rel.confidence,
        "status": rel.status,
        "secret": fact.secret,
        "current": rel.invalidated_at is None,
        "source": {
            "session_id": rel.session_id,
            "when": iso(rel.observed_at or session_started or rel.valid_from),
            "evidence": rel.evidence,
            "provenance": rel.provenance,
        },
    }


def event_result(entity: Entity, started: datetime | None) -> dict[str, Any]:
    desc = str(entity.attributes.get("description") or entity.attributes.get("summary") or "")
    return {
        "id": entity.id,
        "text": entity.name + (f": {desc}" if desc else ""),
        "type": entity.type,
        "source": {"session_id": entity.session_id, "when": iso(started or entity.created_at)},
    }


def chunk_result(hit: ChunkHit, score: float, methods: list[str]) -> dict[str, Any]:
    c = hit.chunk
    return {
        "text": c.text,
        "score": round(score, 6),
        "methods": methods,
        "chunk_id": c.id,
        "source": {
            "session_id": c.session_id,
            "when": iso(c.start_at),
            "until": iso(c.end_at),
            "speakers": list(c.speakers),
            "first_entry_id": c.first_entry_id,
            "last_entry_id": c.last_entry_id,
        },
        "entity_ids": list(c.entity_ids),
        "token_count": c.token_count,
    }


def ok_answer(name: str, results: list[dict[str, Any]], elapsed_ms: float) -> dict[str, Any]:
    """A tool's answer as every caller receives it (and the voice loop and MCP hand the model,
    as `json.dumps`): its results, how many, and how long the call took."""
    return {
        "tool": name,
        "status": "ok",
        "count": len(results),
        "results": results,
        "elapsed_ms": round(elapsed_ms, 3),
    }


# The slowest call an answer can report (a tool's own time limit is seconds), for its width.
WIDEST_ELAPSED_MS = 99_999.999


@lru_cache(maxsize=64)
def envelope_chars(name: str, most_results: int) -> int:
    """Characters an answer of `name` carries beside its results (`reader_chars` counts each
    result with a separator, one more than sent): its keys, the tool's name, the count, the
    time at its widest and the list's brackets. A budget for the whole answer as the model
    reads it pays this first."""
    empty = ok_answer(name, [], WIDEST_ELAPSED_MS)
    empty["count"] = most_results
    return len(json.dumps(empty, ensure_ascii=False))


def degraded_result(name: str) -> dict[str, Any]:
    """Degraded memory as a result the LLM can read, not a crash."""
    return {
        "tool": name,
        "status": "degraded",
        "error": f"{DEGRADED}; answer from what you already know",
        "count": 0,
        "results": [],
    }


def refused_result(name: str, tier: str, message: str) -> dict[str, Any]:
    """A call outside the caller's tier: refused as a result the LLM can read and act on."""
    return {
        "tool": name,
        "status": "refused",
        "tier": str(tier),
        "error": message,
        "count": 0,
        "results": [],
    }
