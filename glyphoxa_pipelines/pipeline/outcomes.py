"""Results of a pipeline step: metadata for the Dagster UI and the outcomes of its checks.

Plain dataclasses, so the in-process runner and the Dagster assets report the same thing and
this module never imports Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warn"]


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """One asset check: `name` is the Dagster check name, `passed` its verdict."""

    name: str
    passed: bool
    description: str
    severity: Severity = "error"
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class StepOutcome:
    """What a step did (rows, models, timings) and how its checks came out."""

    asset: str
    metadata: dict[str, Any] = field(default_factory=dict)
    checks: list[CheckOutcome] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed_checks(self) -> list[CheckOutcome]:
        return [c for c in self.checks if not c.passed]

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.metadata,
            "seconds": round(self.seconds, 3),
            "checks": {c.name: c.passed for c in self.checks},
        }
