"""What the store accepts: one home for the size, range and character limits of every input.

Every boundary (campaign files, transcript import, the HTTP API, MCP arguments, the spool)
validates with these, so nothing that PostgreSQL would refuse, or that a psycopg read could not
turn back into Python, is ever acknowledged: a NUL or a lone surrogate in text, a timestamp
outside Python's and PostgreSQL's common range, an infinite or absurd duration, a value too big
for a tsvector or a prompt. The check functions raise `LimitError` (a `ValueError`, so pydantic
reports it as a validation error at the field's location); the `Annotated` aliases wrap them for
pydantic models.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator

# Sizes, in characters (str length) unless named otherwise.
MAX_ID_CHARS = 200  # entity / speaker / session / NPC ids, idempotency keys
MAX_NAME_CHARS = 200  # entity and speaker names, aliases, titles, relation types
MAX_SHORT_TEXT_CHARS = 10_000  # descriptions, profile fields, one behaviour rule, evidence
MAX_TEXT_CHARS = 200_000  # one utterance; a tsvector holds at most 1 MB
MAX_LIST_ITEMS = 500  # aliases, behaviour rules, known_by, ...
MAX_JSON_CHARS = 64_000  # attributes, voice, scene: serialized size
MAX_JSON_DEPTH = 8  # nesting inside attributes and other free-form JSON (a sheet needs 3-4)
MAX_FILE_BYTES = 64 * 1024 * 1024  # a transcript or campaign file (a long session is ~1 MB)

# One utterance lasts at most a day; a session's timestamps lie between 1900 and a day from
# now. Python's datetime ends at year 9999 and psycopg cannot read back a PostgreSQL year 0,
# and an entry "in 9999" would sort after every live line and hide the transcript.
MAX_DURATION_S = 86_400.0
MIN_TIMESTAMP = datetime(1900, 1, 1, tzinfo=UTC)
MAX_FUTURE = timedelta(days=1)

_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


class LimitError(ValueError):
    """A value outside what the store accepts; the message names the limit."""


def _what(what: str) -> str:
    return f"{what} " if what else ""


def check_text(value: str, what: str = "", max_chars: int = MAX_SHORT_TEXT_CHARS) -> str:
    """Refuse NUL (PostgreSQL text cannot hold it), lone surrogates (not encodable as UTF-8)
    and text longer than `max_chars`."""
    if len(value) > max_chars:
        raise LimitError(
            f"{_what(what)}is {len(value):,} characters; the limit is {max_chars:,}"
        )
    bad = _BAD_CHARS.search(value)
    if bad is not None:
        kind = "a NUL character" if bad.group() == "\x00" else "a lone surrogate"
        raise LimitError(f"{_what(what)}contains {kind} at position {bad.start()}")
    return value


def check_name(value: str, what: str = "name") -> str:
    """A short single-line name: no line breaks, at most MAX_NAME_CHARS."""
    check_text(value, what, MAX_NAME_CHARS)
    if "\n" in value or "\r" in value:
        raise LimitError(f"{_what(what)}contains a line break")
    return value


def check_id(value: str, what: str = "id") -> str:
    """An identifier: a name-like string of at most MAX_ID_CHARS."""
    check_text(value, what, MAX_ID_CHARS)
    if "\n" in value or "\r" in value:
        raise LimitError(f"{_what(what)}contains a line break")
    return value


# PostgreSQL's `real` refuses a non-zero number too small for it (it would round to zero):
# to a reader, a confidence or a duration of 5e-324 is zero, so it is stored as zero rather
# than failing the write (seen as a 500 from the API fuzz test).
REAL_MIN = 1.1754943508222875e-38  # float4's smallest normal magnitude


def as_real(value: float) -> float:
    """A number bound for a `real` column: magnitudes below `REAL_MIN` become 0."""
    return 0.0 if abs(value) < REAL_MIN else float(value)


def check_duration(value: float, what: str = "duration_s") -> float:
    """Finite, not negative, at most MAX_DURATION_S seconds."""
    if isinstance(value, bool) or not math.isfinite(value):
        raise LimitError(f"{_what(what)}must be a finite number of seconds, got {value!r}")
    if not 0.0 <= value <= MAX_DURATION_S:
        raise LimitError(f"{_what(what)}{value!r} is outside 0..{MAX_DURATION_S:g} seconds")
    return as_real(value)


def check_offset(value: float, what: str = "offset") -> float:
    """A time offset into a session (seconds): finite, within the timestamp range's width."""
    if isinstance(value, bool) or not math.isfinite(value):
        raise LimitError(f"{_what(what)}must be a finite number of seconds, got {value!r}")
    if abs(value) > 366 * 86_400.0:
        raise LimitError(f"{_what(what)}{value!r} s is more than a year")
    return float(value)


def check_timestamp(value: datetime, what: str = "timestamp") -> datetime:
    """Timezone-aware (naive means UTC), from 1900 to a day from now."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        in_utc = value.astimezone(UTC)
    except OverflowError:
        raise LimitError(f"{_what(what)}{value.isoformat()} is out of range") from None
    if in_utc < MIN_TIMESTAMP:
        raise LimitError(f"{_what(what)}{value.isoformat()} is before {MIN_TIMESTAMP.year}")
    if in_utc > datetime.now(UTC) + MAX_FUTURE:
        raise LimitError(f"{_what(what)}{value.isoformat()} is in the future")
    return value


def check_json(
    value: Any,
    what: str = "value",
    *,
    max_chars: int = MAX_JSON_CHARS,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """A JSON-able value (mappings with string keys, lists, strings, finite numbers, booleans,
    null; dates become ISO strings) of bounded depth and size, with safe strings. Returns the
    normalized value. Shared sub-objects (YAML aliases) count every time they appear, so an
    alias bomb is refused by size before it is expanded."""
    budget = [max_chars]

    def walk(v: Any, depth: int, path: str) -> Any:
        if depth > max_depth:
            raise LimitError(f"{path} is nested more than {max_depth} levels deep")
        budget[0] -= 1
        if budget[0] < 0:
            raise LimitError(f"{what} is larger than {max_chars:,} characters")
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, int):
            if abs(v) >= 2**63:
                raise LimitError(f"{path}: integer {v} is too large")
            return v
        if isinstance(v, float):
            if not math.isfinite(v):
                raise LimitError(f"{path}: {v!r} is not a finite number")
            return v
        if isinstance(v, str):
            budget[0] -= len(v)
            if budget[0] < 0:
                raise LimitError(f"{what} is larger than {max_chars:,} characters")
            return check_text(v, path, max_chars)
        if isinstance(v, datetime | date):
            return v.isoformat()
        if isinstance(v, Mapping):
            out = {}
            for k, item in v.items():
                if not isinstance(k, str):
                    raise LimitError(f"{path}: key {k!r} is not a string")
                check_name(k, f"{path} key")
                out[k] = walk(item, depth + 1, f"{path}.{k}")
            return out
        if isinstance(v, list | tuple):
            return [walk(item, depth + 1, f"{path}[{i}]") for i, item in enumerate(v)]
        raise LimitError(f"{path}: {type(v).__name__} is not JSON")

    return walk(value, 0, what)


def check_list(value: list[Any], what: str = "list", max_items: int = MAX_LIST_ITEMS) -> list[Any]:
    if len(value) > max_items:
        raise LimitError(f"{_what(what)}has {len(value):,} items; the limit is {max_items:,}")
    return value


def _short_text(value: str) -> str:
    return check_text(value, "", MAX_SHORT_TEXT_CHARS)


def _long_text(value: str) -> str:
    return check_text(value, "", MAX_TEXT_CHARS)


def _name(value: str) -> str:
    return check_name(value, "")


def _id(value: str) -> str:
    return check_id(value, "")


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    return check_json(value, "object")  # type: ignore[no-any-return]


def _duration(value: float) -> float:
    return check_duration(value, "")


def _timestamp(value: datetime) -> datetime:
    return check_timestamp(value, "")


def _bounded_list(value: list[Any]) -> list[Any]:
    return check_list(value, "")


# pydantic field types: the limits above, checked where the model is validated.
SafeText = Annotated[str, AfterValidator(_short_text)]
LongText = Annotated[str, AfterValidator(_long_text)]
Name = Annotated[str, AfterValidator(_name)]
Identifier = Annotated[str, AfterValidator(_id)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
BoundedDuration = Annotated[float, AfterValidator(_duration)]
Real = Annotated[float, AfterValidator(as_real)]
PgTimestamp = Annotated[datetime, AfterValidator(_timestamp)]
NameList = Annotated[list[Name], AfterValidator(_bounded_list)]
TextList = Annotated[list[SafeText], AfterValidator(_bounded_list)]
