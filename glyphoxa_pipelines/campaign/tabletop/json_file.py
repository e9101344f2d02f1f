"""A tabletop export read as JSON: bounded like every input file, errors as `file:line`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.input_file import InputFileError, read_input_text
from glyphoxa_pipelines.campaign.tabletop.world import TabletopFileError


def parse_json_text(text: str, source: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except RecursionError:
        raise TabletopFileError(f"{source}: invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise TabletopFileError(f"{source}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise TabletopFileError(f"{source}:1: expected a JSON object at the top")
    return data


def read_json_file(path: str | Path) -> tuple[dict[str, Any], str]:
    try:
        text = read_input_text(path)
    except InputFileError as exc:
        raise TabletopFileError(str(exc)) from None
    return parse_json_text(text, str(path)), text


def as_list(data: dict[str, Any], key: str, builder_problem: Any) -> list[Any]:
    """`data[key]` as a list; anything else is a problem reported at `key`."""
    value = data.get(key, [])
    if isinstance(value, dict):  # some exporters key documents by id
        value = list(value.values())
    if not isinstance(value, list):
        builder_problem(f": {key}", "expected a list")
        return []
    return value


def dig(doc: Any, *path: str) -> Any:
    """`doc[path[0]][path[1]]...`, or None where a step is missing or not a mapping."""
    for key in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc
