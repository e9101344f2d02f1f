"""Which current facts a session's new facts contradict.

Functional relations have one current value (a person lives in one place, a city has one
ruler, an item one owner), and some relations exclude each other (allies are not enemies).
The newer statement wins; DM-made and DM-confirmed facts are never overruled automatically,
they are reported as protected so the caller routes them to review.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from glyphoxa_pipelines.memory.models import Relationship


@dataclass(frozen=True, slots=True)
class Contradiction:
    """`new` invalidates `old` (a functional relation changed, or an ally became an enemy)."""

    old: Relationship
    new: Relationship
    reason: str
    protected: bool  # old is DM-made or DM-confirmed: flag for review, never auto-invalidate


# functional relations: a source has one current target (lives_in, located_in, ...), or a
# target has one current source (leader_of: a city has one ruler; owns: an item one owner)
FUNCTIONAL_BY_SOURCE = frozenset({"lives_in", "located_in", "member_of_exclusive", "comes_from"})
FUNCTIONAL_BY_TARGET = frozenset({"leader_of", "owns"})
EXCLUSIVE_PAIRS = {("allied_with", "enemy_of"), ("friend_of", "enemy_of")}


def contradictions(
    existing: Iterable[Relationship], new: Iterable[Relationship]
) -> list[Contradiction]:
    """Which current `existing` facts a `new` fact invalidates.

    A newer fact wins (by `observed_at`, then `valid_from`); already-invalidated facts are
    ignored. DM-made or DM-confirmed facts are reported with `protected=True`: the caller must
    route those to review instead of invalidating them.
    """
    current = [r for r in existing if r.invalidated_at is None and r.status != "rejected"]
    by_source: dict[tuple[str, str], list[Relationship]] = defaultdict(list)
    by_target: dict[tuple[str, str], list[Relationship]] = defaultdict(list)
    by_pair: dict[frozenset[str], list[Relationship]] = defaultdict(list)
    for r in current:
        by_source[(r.source_id, r.rel_type)].append(r)
        by_target[(r.target_id, r.rel_type)].append(r)
        by_pair[frozenset((r.source_id, r.target_id))].append(r)

    def when(r: Relationship) -> datetime | None:
        return r.observed_at or r.valid_from

    def newer(n: Relationship, o: Relationship) -> bool:
        tn, to = when(n), when(o)
        return tn is None or to is None or tn >= to

    out: list[Contradiction] = []
    seen: set[tuple[int, int]] = set()

    def report(old: Relationship, n: Relationship, reason: str) -> None:
        key = (id(old), id(n))
        if key in seen or not newer(n, old):
            return
        seen.add(key)
        protected = old.dm_confirmed or old.provenance == "dm"
        out.append(Contradiction(old, n, reason, protected))

    for n in new:
        if n.rel_type in FUNCTIONAL_BY_SOURCE:
            for old in by_source[(n.source_id, n.rel_type)]:
                if old.target_id != n.target_id:
                    report(old, n, f"{n.source_id} {n.rel_type} has one value at a time")
        if n.rel_type in FUNCTIONAL_BY_TARGET:
            for old in by_target[(n.target_id, n.rel_type)]:
                if old.source_id != n.source_id:
                    report(old, n, f"{n.target_id} has one {n.rel_type.replace('_', ' ')} source")
        for a, b in EXCLUSIVE_PAIRS:
            if n.rel_type in (a, b):
                other = b if n.rel_type == a else a
                for old in by_pair[frozenset((n.source_id, n.target_id))]:
                    if old.rel_type == other:
                        report(old, n, f"{n.rel_type} replaces {other}")
    return out
