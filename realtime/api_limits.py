"""What the HTTP boundary accepts: text PostgreSQL can store, timestamps it can hold, bounded sizes.

Everything a request carries is checked here, once, before it reaches the service: a value the
database would refuse must be a 422 now, not a 500 later or (worse) a spooled record that can
never be replayed. The rules:

- text: no NUL (PostgreSQL `text` cannot hold it) and no lone surrogate (not encodable as
  UTF-8), each field with a length limit;
- timestamps: between `MIN_TIMESTAMP` and now plus `CLOCK_SKEW` (a far-future `spoken_at` would
  sort after every live line and hide the live transcript from the NPC); naive ones are UTC;
- numbers: finite, durations bounded (`1e30` seconds breaks the session's end aggregate);
- free-form JSON (attributes, scene, voice, tool arguments): the same text rule for keys and
  values, finite numbers and 64-bit integers, bounded depth and serialized size.

The CLI side has its own module for the same rules (branch wt-e); the two are to be unified.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, Field

# Nothing said at a game table predates this, and every PostgreSQL and Python can hold it in any
# time zone (0001-01-01 at +14:00 is year 0 in UTC: beyond Python's datetime).
MIN_TIMESTAMP = datetime(1900, 1, 1, tzinfo=UTC)
# Clients' clocks drift; a day is generous for that and still keeps "the future" out.
CLOCK_SKEW = timedelta(days=1)
# An utterance (or an imported line) never lasts a day.
MAX_DURATION_S = 86_400.0
# Request bodies: a batch of long utterances fits; a runaway client does not.
MAX_BODY_BYTES = 8 * 1024 * 1024
# Free-form JSON values.
MAX_JSON_BYTES = 64 * 1024
MAX_JSON_DEPTH = 8

ID_CHARS = 200
NAME_CHARS = 300
PROSE_CHARS = 4_000
EVIDENCE_CHARS = 10_000
ENTRY_TEXT_CHARS = 200_000


class UnsafeTextError(ValueError):
    """Text PostgreSQL cannot store."""


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as PostgreSQL text, or None when it can."""
    if "\x00" in value:
        return "contains a NUL character"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def check_text(value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise UnsafeTextError(problem)
    return value


def check_timestamp(value: datetime) -> datetime:
    """In range, aware (naive means UTC), and not in the future beyond clock skew."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        utc = value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("timestamp is out of range") from exc
    if utc < MIN_TIMESTAMP:
        raise ValueError(f"timestamp is before {MIN_TIMESTAMP.date().isoformat()}")
    if utc > datetime.now(UTC) + CLOCK_SKEW:
        raise ValueError("timestamp is in the future (more than a day ahead of this server)")
    return value


def check_json(value: Any) -> Any:
    """Free-form JSON: safe text in keys and values, finite numbers, bounded depth and size."""
    _walk(value, 0)
    if len(orjson.dumps(value)) > MAX_JSON_BYTES:
        raise ValueError(f"is larger than {MAX_JSON_BYTES} bytes as JSON")
    return value


def _walk(value: Any, depth: int) -> None:
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"is nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ValueError("contains an integer beyond 64 bits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("contains a non-finite number")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(str(key))
            _walk(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _walk(item, depth + 1)


_SAFE = AfterValidator(check_text)
IdText = Annotated[str, Field(max_length=ID_CHARS), _SAFE]
RequiredId = Annotated[str, Field(min_length=1, max_length=ID_CHARS), _SAFE]
NameText = Annotated[str, Field(max_length=NAME_CHARS), _SAFE]
RequiredName = Annotated[str, Field(min_length=1, max_length=NAME_CHARS), _SAFE]
ProseText = Annotated[str, Field(max_length=PROSE_CHARS), _SAFE]
EvidenceText = Annotated[str, Field(max_length=EVIDENCE_CHARS), _SAFE]
EntryText = Annotated[str, Field(min_length=1, max_length=ENTRY_TEXT_CHARS), _SAFE]
PartialText = Annotated[str, Field(min_length=1, max_length=10_000), _SAFE]
Timestamp = Annotated[datetime, AfterValidator(check_timestamp)]
Duration = Annotated[float, Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False)]
JsonValue = Annotated[Any, AfterValidator(check_json)]
JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]
