"""Parse and validate a campaign YAML file, reporting problems as file:line.

YAML is composed with a loader that remembers the line of every mapping key and list item;
pydantic (extra="forbid") validates the shape, and its error locations are mapped back to
lines, so "unknown key", "wrong type" and "unknown reference" all point at the line to fix.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from glyphoxa_pipelines.campaign.input_file import InputFileError, read_input_text
from glyphoxa_pipelines.memory.ids import slugify
from glyphoxa_pipelines.memory.limits import (
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    JsonObject,
    LimitError,
    Name,
    NameList,
    Real,
    SafeText,
    TextList,
)
from glyphoxa_pipelines.memory.relation_types import (
    normalize_entity_type,
    normalize_type_name,
)


class CampaignFileError(ValueError):
    """The campaign file is malformed; the message names file, line and problem."""


class _LineDict(dict):  # type: ignore[type-arg]
    line: int = 0
    key_lines: dict[Any, int]


class _LineList(list):  # type: ignore[type-arg]
    line: int = 0
    item_lines: list[int]


class _LineLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:  # type: ignore[override]
        keys: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in keys:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            keys[key] = key_node.start_mark.line + 1
        mapping = _LineDict(super().construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = keys
        return mapping

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> Any:  # type: ignore[override]
        seq = _LineList(super().construct_sequence(node, deep=True))
        seq.line = node.start_mark.line + 1
        seq.item_lines = [child.start_mark.line + 1 for child in node.value]
        return seq


_LineLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _LineLoader.construct_mapping
)
_LineLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _LineLoader.construct_sequence
)

_Strict = ConfigDict(extra="forbid", str_strip_whitespace=True)


# Every field is bounded by the shared limits (memory/limits.py): what the file may say is
# what the store can hold, so a load never fails inside the database.
_Slug = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=MAX_ID_CHARS)
# Types are free text as the DM writes them ("NPC", "LOCATED_AT", "sworn enemy of"),
# normalized to the stored lower snake form (`relation_types`).
_Type = Field(min_length=1, max_length=MAX_NAME_CHARS)


def _relation_type(value: str) -> str:
    return normalize_type_name(value)


def _entity_type(value: str) -> str:
    return normalize_entity_type(value)


CAMPAIGN_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def check_campaign_id(value: str, what: str = "--campaign") -> str:
    """A campaign id chosen at load time, held to the store's rule before the store sees it."""
    if len(value) > MAX_ID_CHARS or not CAMPAIGN_ID.match(value):
        raise LimitError(
            f"{what}: {value!r} is not a campaign id (lower-case letters, digits, - and _)"
        )
    return value


class CampaignInfo(BaseModel):
    model_config = _Strict
    id: str = _Slug
    name: Name = Field(min_length=1)
    description: SafeText = ""
    system: Name = ""
    review_threshold: Real = Field(0.7, ge=0, le=1)


class EntitySpec(BaseModel):
    model_config = _Strict
    name: Name = Field(min_length=1)
    type: str = _Type
    id: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_.-]*$", max_length=MAX_ID_CHARS)
    aliases: NameList = []
    attributes: JsonObject = {}

    normalize_type = field_validator("type")(_entity_type)

    @property
    def entity_id(self) -> str:
        return self.id or slugify(self.name)


class RelationshipSpec(BaseModel):
    model_config = _Strict
    source: Name = Field(min_length=1)
    target: Name = Field(min_length=1)
    type: str = _Type
    attributes: JsonObject = {}
    confidence: Real = Field(1.0, ge=0, le=1)
    # public; secret (its parties and known_by see it); hidden (no NPC, not even its parties,
    # until the DM reveals it); or the names of the NPCs who know it (secret to the rest).
    visibility: Literal["public", "secret", "hidden"] | NameList = "public"
    evidence: SafeText = ""

    normalize_type = field_validator("type")(_relation_type)


class NpcSpec(BaseModel):
    model_config = _Strict
    name: Name = Field(min_length=1)
    personality: SafeText = ""
    speaking_style: SafeText = ""
    emotional_state: SafeText = ""
    behavior_rules: TextList = []
    secret_knowledge: TextList = []
    voice: JsonObject | Name = {}

    @field_validator("voice")
    @classmethod
    def _voice_dict(cls, v: dict[str, Any] | str) -> dict[str, Any]:
        return {"name": v} if isinstance(v, str) else v


class CampaignFile(BaseModel):
    """A campaign's world. The `campaign:` block is optional: the design's files have none
    and are loaded into a campaign chosen at load time (`--campaign`)."""

    model_config = _Strict
    campaign: CampaignInfo | None = None
    entities: list[EntitySpec] = []
    relationships: list[RelationshipSpec] = []
    npcs: list[NpcSpec] = []


def _line_of(raw: Any, loc: tuple[Any, ...]) -> int:
    """The line of the deepest YAML node on pydantic's error path."""
    line = getattr(raw, "line", 1)
    node = raw
    for part in loc:
        if isinstance(node, _LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, _LineList) and isinstance(part, int) and part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
        line = getattr(node, "line", line) if isinstance(node, (_LineDict, _LineList)) else line
    return line


def _load_yaml(text: str) -> Any:
    loader = _LineLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def parse_campaign_text(text: str, source: str = "<campaign>") -> CampaignFile:
    try:
        raw = _load_yaml(text)
    except RecursionError:
        raise CampaignFileError(f"{source}: invalid YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise CampaignFileError(f"{where}: invalid YAML: {problem}") from exc
    if not isinstance(raw, dict):
        raise CampaignFileError(
            f"{source}:1: expected a mapping of entities, relationships and npcs"
        )
    try:
        parsed = CampaignFile.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            path = ".".join(str(p) for p in loc)
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            msg = msg.removeprefix("Value error, ")
            problems.append(f"{source}:{_line_of(raw, loc)}: {path}: {msg}")
        raise CampaignFileError("\n".join(problems)) from exc
    _check_references(parsed, raw, source)
    return parsed


def parse_campaign_file(path: str | Path) -> CampaignFile:
    try:
        text = read_input_text(path)
    except InputFileError as exc:
        raise CampaignFileError(str(exc)) from None
    return parse_campaign_text(text, str(path))


def reference_table(parsed: CampaignFile) -> dict[str, str]:
    """Lower-cased id / name / alias -> entity id, for `source`/`target`/NPC references."""
    table: dict[str, str] = {}
    for ent in parsed.entities:
        for key in (ent.entity_id, ent.name, *ent.aliases):
            table.setdefault(key.lower(), ent.entity_id)
    return table


def _check_references(parsed: CampaignFile, raw: Any, source: str) -> None:
    problems: list[str] = []
    ids: dict[str, int] = {}
    for i, ent in enumerate(parsed.entities):
        if ent.entity_id in ids:
            line = _line_of(raw, ("entities", i))
            problems.append(
                f"{source}:{line}: entities.{i}: entity id {ent.entity_id!r} is defined twice"
            )
        ids[ent.entity_id] = i
    refs = reference_table(parsed)
    for i, rel in enumerate(parsed.relationships):
        names = [("source", rel.source), ("target", rel.target)]
        if isinstance(rel.visibility, list):
            names += [("visibility", n) for n in rel.visibility]
        for field_name, ref in names:
            if ref.lower() not in refs:
                line = _line_of(raw, ("relationships", i, field_name))
                problems.append(
                    f"{source}:{line}: relationships.{i}.{field_name}: unknown entity {ref!r}"
                )
    for i, npc in enumerate(parsed.npcs):
        eid = refs.get(npc.name.lower())
        if eid is None:
            line = _line_of(raw, ("npcs", i, "name"))
            problems.append(f"{source}:{line}: npcs.{i}.name: unknown entity {npc.name!r}")
        elif parsed.entities[ids[eid]].type != "npc":
            line = _line_of(raw, ("npcs", i, "name"))
            problems.append(
                f"{source}:{line}: npcs.{i}.name: {npc.name!r} is a "
                f"{parsed.entities[ids[eid]].type}, not an npc"
            )
    if problems:
        raise CampaignFileError("\n".join(problems))
