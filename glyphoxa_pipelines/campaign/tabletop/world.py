"""What a tabletop file says, in one shape for every format, checked against the store's limits.

Readers add entities and facts through `WorldBuilder`, naming where each came from
(`file:line` for CSV, `file: actors[3]` for JSON); every problem is collected and the read
fails as a whole (`TabletopFileError`), so a bad file loads nothing. Entity ids are the
store's `slugify`; the same name read twice with the same type is one entity (a world lists
"Goblin" once per token), a different type gets the type appended to its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from glyphoxa_pipelines.memory.ids import slugify
from glyphoxa_pipelines.memory.limits import (
    MAX_SHORT_TEXT_CHARS,
    LimitError,
    check_json,
    check_name,
    check_text,
)
from glyphoxa_pipelines.memory.relation_types import (
    normalize_entity_type,
    normalize_type_name,
)

# A world bigger than this is not a campaign but a compendium dump; refused by count so a
# hostile file cannot fill the review table.
MAX_IMPORT_ENTITIES = 5_000
MAX_IMPORT_FACTS = 20_000


class TabletopFileError(ValueError):
    """The file cannot be imported; the message names file, line or JSON path, and problem."""


@dataclass(frozen=True, slots=True)
class ImportedEntity:
    id: str
    name: str
    type: str
    aliases: list[str]
    attributes: dict[str, Any]
    dm_notes: str  # DM-only (Roll20 gmnotes, a CSV's gm_notes): shown in review, never in the graph
    origin: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type,
                "aliases": self.aliases, "attributes": self.attributes,
                "dm_notes": self.dm_notes, "origin": self.origin}


@dataclass(frozen=True, slots=True)
class ImportedFact:
    source_id: str
    rel_type: str
    target_id: str
    origin: str

    def as_json(self) -> dict[str, Any]:
        return {"source_id": self.source_id, "rel_type": self.rel_type,
                "target_id": self.target_id, "origin": self.origin}


@dataclass(slots=True)
class ImportedWorld:
    format: str
    source: str
    entities: list[ImportedEntity] = field(default_factory=list)
    facts: list[ImportedFact] = field(default_factory=list)


def _clip(text: str) -> str:
    """Bios and journal pages can be long; the store's short-text limit is the prompt's too."""
    text = text.strip()
    return text if len(text) <= MAX_SHORT_TEXT_CHARS else text[: MAX_SHORT_TEXT_CHARS - 1] + "…"


class WorldBuilder:
    def __init__(self, fmt: str, source: str) -> None:
        self.world = ImportedWorld(fmt, source)
        self.problems: list[str] = []
        self._by_id: dict[str, ImportedEntity] = {}
        self._by_name: dict[str, str] = {}
        self._facts: set[tuple[str, str, str]] = set()

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{self.world.source}{where}: {message}")

    def entity(
        self,
        where: str,
        name: Any,
        type_: Any,
        *,
        aliases: list[str] | None = None,
        description: str = "",
        attributes: dict[str, Any] | None = None,
        dm_notes: str = "",
    ) -> str | None:
        """Add an entity; its id, or None when it was refused (the problem is recorded)."""
        if not isinstance(name, str) or not name.strip():
            self.problem(where, "an entry without a name")
            return None
        name = " ".join(name.split())
        try:
            check_name(name, "name")
            etype = normalize_entity_type(str(type_ or ""))
            alias_list = [check_name(" ".join(a.split()), "alias") for a in aliases or []
                          if a and a.strip() and a.strip() != name]
            attrs = {k: v for k, v in (attributes or {}).items() if v not in ("", None, [], {})}
            if description.strip():
                attrs["description"] = _clip(description)
            attrs = check_json(attrs, "attributes")
            notes = check_text(_clip(dm_notes), "DM notes")
        except (LimitError, ValueError) as exc:
            self.problem(where, str(exc))
            return None
        known = self._by_name.get(f"{etype}:{name.lower()}")
        if known is not None:
            return known  # the same thing listed again (a token, a duplicate row)
        eid = slugify(name)
        if eid in self._by_id:
            eid = f"{eid}-{etype.replace('_', '-')}"
            if eid in self._by_id:
                self.problem(where, f"{name!r} ({etype}) is listed twice under different spellings")
                return None
        if len(self._by_id) >= MAX_IMPORT_ENTITIES:
            self.problem(where, f"more than {MAX_IMPORT_ENTITIES:,} entities; split the import")
            return None
        ent = ImportedEntity(eid, name, etype, alias_list, attrs, notes,
                             f"{self.world.source}{where}")
        self._by_id[eid] = ent
        self._by_name[f"{etype}:{name.lower()}"] = eid
        self.world.entities.append(ent)
        return eid

    def fact(self, where: str, source_id: str, rel_type: str, target_id: str) -> None:
        key = (source_id, normalize_type_name(rel_type), target_id)
        if source_id == target_id or key in self._facts:
            return
        if len(self._facts) >= MAX_IMPORT_FACTS:
            self.problem(where, f"more than {MAX_IMPORT_FACTS:,} facts; split the import")
            return
        self._facts.add(key)
        self.world.facts.append(ImportedFact(*key, origin=f"{self.world.source}{where}"))

    def finish(self) -> ImportedWorld:
        if self.problems:
            shown = self.problems[:50]
            more = len(self.problems) - len(shown)
            raise TabletopFileError(
                "\n".join(shown) + (f"\n… and {more} more problems" if more else "")
            )
        if not self.world.entities:
            raise TabletopFileError(f"{self.world.source}: no entities found; nothing imported")
        return self.world
