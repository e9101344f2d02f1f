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

The rules themselves (what text PostgreSQL can hold, the timestamp range, the duration bound,
free-form JSON) are the store's, `glyphoxa_pipelines.memory.limits`, which the CLI's file readers
use too; this module adds what only HTTP has: field lengths shown in the OpenAPI schema and the
request body limit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from glyphoxa_pipelines.memory import limits
from glyphoxa_pipelines.memory.limits import MAX_DURATION_S, LimitError

# Request bodies: a batch of long utterances fits; a runaway client does not.
MAX_BODY_BYTES = 8 * 1024 * 1024

ID_CHARS = limits.MAX_ID_CHARS
NAME_CHARS = limits.MAX_NAME_CHARS
PROSE_CHARS = 4_000
EVIDENCE_CHARS = limits.MAX_SHORT_TEXT_CHARS
ENTRY_TEXT_CHARS = limits.MAX_TEXT_CHARS


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as PostgreSQL text, or None when it can."""
    try:
        limits.check_text(value, max_chars=len(value))
    except LimitError as exc:
        return str(exc)
    return None


def check_text(value: str) -> str:
    """The store's text rule; lengths are the fields' own (`Field(max_length=...)`)."""
    return limits.check_text(value, max_chars=len(value))


def check_timestamp(value: datetime) -> datetime:
    return limits.check_timestamp(value)


def check_json(value: Any) -> Any:
    return limits.check_json(value)


_SAFE = AfterValidator(check_text)
IdText = Annotated[str, Field(max_length=ID_CHARS), _SAFE]
RequiredId = Annotated[str, Field(min_length=1, max_length=ID_CHARS), _SAFE]
# An id that names an entity (`known_by`, the scene's present NPCs): a blank one names nobody,
# and in `known_by` the empty string would be the public viewer (realtime/viewers.py).
EntityRef = Annotated[str, Field(min_length=1, max_length=ID_CHARS, pattern=r"\S"), _SAFE]
NameText = Annotated[str, Field(max_length=NAME_CHARS), _SAFE]
# A name the table says aloud: blank ones would pass here and fail the database's CHECK (a 500).
RequiredName = Annotated[str, Field(min_length=1, max_length=NAME_CHARS, pattern=r"\S"), _SAFE]
ProseText = Annotated[str, Field(max_length=PROSE_CHARS), _SAFE]
EvidenceText = Annotated[str, Field(max_length=EVIDENCE_CHARS), _SAFE]
EntryText = Annotated[str, Field(min_length=1, max_length=ENTRY_TEXT_CHARS), _SAFE]
PartialText = Annotated[str, Field(min_length=1, max_length=10_000), _SAFE]
Timestamp = Annotated[datetime, AfterValidator(check_timestamp)]
Duration = Annotated[float, Field(ge=0, le=MAX_DURATION_S, allow_inf_nan=False),
                     AfterValidator(limits.as_real)]
# A number stored in a `real` column (a confidence): see `limits.as_real`.
Real = Annotated[float, AfterValidator(limits.as_real)]
JsonValue = Annotated[Any, AfterValidator(check_json)]
JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]
