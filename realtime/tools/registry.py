"""The memory tools' registry: names, descriptions, input schemas and validation.

Which code answers a tool is `dispatch.py`'s business, which tier shows it `tiers.py`'s: the
registry is plain data that the HTTP API, MCP and the tier selector all read.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from realtime.tools.args import (
    GetRecapArgs,
    GetSessionSummaryArgs,
    QueryEntitiesArgs,
    SearchFactsArgs,
    SearchGraphArgs,
    SearchSessionsArgs,
    ToolArgs,
)


class ToolInputError(ValueError):
    """Arguments that do not match the tool's schema; the message names each problem."""

    def __init__(self, tool: str, problems: list[str]) -> None:
        super().__init__(f"invalid arguments for {tool}: " + "; ".join(problems))
        self.tool = tool
        self.problems = problems


class UnknownToolError(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[ToolArgs]
    prior_p50_ms: float  # before anything is measured

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(_schema(self.args))


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "memory.search_sessions",
            "Search what was said in past game sessions (semantic and keyword search, "
            "rank-fused). Filters: session, speaker, time. Each result is one session's most "
            "relevant lines in spoken order ('…' where lines are skipped) and names its "
            "session, time and speakers.",
            SearchSessionsArgs,
            15.0,
        ),
        ToolSpec(
            "memory.query_entities",
            "Look up people, places, items, factions and quests you know of: by name, type "
            "or attribute, with their relationships (several hops) and how one connects to "
            "another.",
            QueryEntitiesArgs,
            2.0,
        ),
        ToolSpec(
            "memory.get_session_summary",
            'The summary of a game session: "last" for the previous one, or a session id.',
            GetSessionSummaryArgs,
            1.5,
        ),
        ToolSpec(
            "memory.get_recap",
            'The "previously on..." recap of a game session as it was told to the table: '
            '"last" for the previous one, "current", or a session id.',
            GetRecapArgs,
            1.5,  # one primary-key read, like the summary: a FAST tool
        ),
        ToolSpec(
            "memory.search_facts",
            "Search facts and events you know, optionally within a time window or as they "
            "stood at a given time.",
            SearchFactsArgs,
            3.0,
        ),
        ToolSpec(
            "memory.search_graph",
            "Search past sessions for passages about an entity and its neighbourhood in the "
            "knowledge graph (GraphRAG).",
            SearchGraphArgs,
            20.0,
        ),
    )
}


@functools.cache
def _schema(model: type[ToolArgs]) -> dict[str, Any]:
    """JSON schema generation costs about a millisecond: once per model."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("type", "object")
    return schema


def get_spec(name: str) -> ToolSpec:
    spec = TOOLS.get(name)
    if spec is None:
        raise UnknownToolError(f"unknown tool {name!r}; known tools: {', '.join(sorted(TOOLS))}")
    return spec


def validate(name: str, arguments: dict[str, Any] | None) -> ToolArgs:
    """Arguments as the tool's model, or ToolInputError listing every problem."""
    spec = get_spec(name)
    if arguments is not None and not isinstance(arguments, dict):
        raise ToolInputError(name, ["arguments must be a JSON object"])
    try:
        return spec.args.model_validate(arguments or {})
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
            problems.append(f"{loc}: {err['msg']}")
        raise ToolInputError(name, problems) from None
