"""Form fields into the API's request bodies.

The dashboard's forms are turned into the same pydantic bodies the JSON routes take
(`realtime.schemas`), so one set of limits and spellings applies; a body that fails them is
the API's 422 "invalid input", naming the field, instead of a 500.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from glyphoxa_pipelines.memory import InvalidInputError

B = TypeVar("B", bound=BaseModel)


def body(model: type[B], **fields: Any) -> B:
    try:
        return model(**fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'form'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInputError(problems) from exc


def name_list(text: str) -> list[str]:
    """A comma-separated list (aliases, NPC ids), blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def attribute_lines(text: str) -> dict[str, str]:
    """`key: value` lines into attributes; a line without a colon is a mistake worth naming."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise InvalidInputError(
                f"attributes line {number} ({line.strip()[:40]!r}): write it as 'key: value'"
            )
        out[key.strip()] = value.strip()
    return out
