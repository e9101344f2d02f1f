"""The shared input limits: each refuses what the store cannot hold, and passes what it can."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import BaseModel, ValidationError

from glyphoxa_pipelines.memory.limits import (
    MAX_NAME_CHARS,
    BoundedDuration,
    JsonObject,
    LimitError,
    Name,
    PgTimestamp,
    check_json,
    check_text,
)


class _Model(BaseModel):
    name: Name = "ok"
    attributes: JsonObject = {}
    duration_s: BoundedDuration = 0.0
    at: PgTimestamp | None = None


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("name", "Mi\x00rela", "NUL"),
        ("name", "Mi\ud800rela", "lone surrogate"),
        ("name", "x" * (MAX_NAME_CHARS + 1), "the limit is"),
        ("name", "two\nlines", "line break"),
        ("duration_s", 1e30, "outside"),
        ("duration_s", 1e308, "outside"),
        ("duration_s", float("inf"), "finite"),
        ("duration_s", float("nan"), "finite"),
        ("duration_s", -1.0, "outside"),
        ("at", "0001-01-01T00:00:00+14:00", "out of range"),
        ("at", "1800-01-01T00:00:00Z", "before"),
        ("at", "9999-12-31T00:00:00Z", "future"),
        ("attributes", {"hp": float("nan")}, "finite"),
        ("attributes", {"k": "a\x00"}, "NUL"),
    ],
)
def test_bad_values_are_validation_errors_naming_the_field(
    field: str, value: object, problem: str
) -> None:
    with pytest.raises(ValidationError) as info:
        _Model(**{field: value})
    err = info.value.errors()[0]
    assert err["loc"][0] == field and problem in err["msg"]


def test_good_values_pass_and_dates_become_strings() -> None:
    soon = datetime.now(UTC) + timedelta(hours=1)
    m = _Model(name="Mirela Voss", attributes={"born": datetime(1990, 5, 1).date()},
               duration_s=3600, at=soon)
    assert m.attributes == {"born": "1990-05-01"} and m.at == soon and m.duration_s == 3600.0


def test_an_alias_bomb_is_refused_without_expanding_it() -> None:
    bomb: list[object] = ["lol"] * 10
    for _ in range(9):
        bomb = [bomb] * 10  # 10**10 leaves if expanded
    with pytest.raises(LimitError, match="nested|larger"):
        check_json({"k": bomb}, "attributes", max_depth=64)


def test_text_limit_names_the_size() -> None:
    with pytest.raises(LimitError, match="200,001 characters; the limit is 200,000"):
        check_text("x" * 200_001, "text", 200_000)
