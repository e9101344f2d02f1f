"""The rule that lets a campaign file be reloaded without undoing the DM: a three-way merge.

Every row a campaign file loads remembers what the file said (`file_values`, migration 018).
On reload each field has three values: what the file said last time (base), what the store
holds now (stored) and what the file says now (file). When stored still equals base, nobody
but the file has touched the field, so the file's new value is applied; when they differ, the
DM (or the service on the DM's behalf) changed it after the load, and the DM's value stays.
Attributes merge key by key, because a DM PATCH merges key by key. A row with no record of what
the file said belongs to the DM: nothing is overwritten, and the file's values become the base
for the next reload.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MISSING = object()


def normalize(value: Any) -> Any:
    """The form a value takes after a round trip through jsonb, so stored and remembered
    values compare equal when they are the same (tuples become lists, dict order ignored)."""
    return json.loads(json.dumps(value, sort_keys=True))


def as_real(value: float) -> float:
    """A float as it reads back from a PostgreSQL `real` column (confidence): the shortest
    decimal that names the same single-precision value, as the server prints it."""
    single = struct.unpack("f", struct.pack("f", float(value)))[0]
    for digits in range(1, 10):
        short = float(f"{single:.{digits}g}")
        if struct.unpack("f", struct.pack("f", short))[0] == single:
            return short
    return float(single)


@dataclass(frozen=True, slots=True)
class Merge:
    """The values to write and how many fields kept the DM's value over the file's."""

    values: dict[str, Any]
    dm_kept: int

    def differs_from(self, stored: Mapping[str, Any]) -> bool:
        return any(normalize(stored.get(k)) != normalize(v) for k, v in self.values.items())


def _merge_attributes(
    stored: Mapping[str, Any], base: Mapping[str, Any], file: Mapping[str, Any]
) -> tuple[dict[str, Any], int]:
    out = dict(stored)
    kept = 0
    for key in {*base, *file}:
        s = normalize(stored[key]) if key in stored else _MISSING
        b = normalize(base[key]) if key in base else _MISSING
        f = normalize(file[key]) if key in file else _MISSING
        if s == b:
            if f is _MISSING:
                out.pop(key, None)
            else:
                out[key] = f
        elif s != f:
            kept += 1
    return out, kept


def merge(
    stored: Mapping[str, Any], base: Mapping[str, Any] | None, file: Mapping[str, Any]
) -> Merge:
    """Three-way merge of the fields in `file` (see the module docstring); `attributes` is
    merged per key. With no base, the stored row wins whole."""
    if base is None:
        kept = sum(normalize(stored.get(k)) != normalize(v) for k, v in file.items())
        return Merge({k: stored.get(k) for k in file}, kept)
    values: dict[str, Any] = {}
    kept = 0
    for field, new in file.items():
        old = stored.get(field)
        if field == "attributes":
            values[field], n = _merge_attributes(old or {}, base.get(field) or {}, new)
            kept += n
        elif normalize(old) == normalize(base.get(field)):
            values[field] = new
        else:
            values[field] = old
            kept += normalize(old) != normalize(new)
    return Merge(values, kept)


def untouched(stored: Mapping[str, Any], base: Mapping[str, Any] | None) -> bool:
    """True when every field the file set still holds what the file said: nobody edited it."""
    return base is not None and all(
        normalize(stored.get(k)) == normalize(v) for k, v in base.items()
    )
