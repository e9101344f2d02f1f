"""The memory tools as LLM function calls, executed through the service's one tool dispatch
(the same validation, visibility scope and latency tracking as HTTP and MCP).

OpenAI function names allow only letters, digits, `_` and `-`, so `memory.search_sessions`
is offered as `memory__search_sessions` and mapped back. The scope (campaign, session, NPC)
is the loop's, never the model's: a call cannot ask as somebody else. A bad call (unknown
name, arguments that are not JSON or do not fit the schema) is answered to the model as an
error it can read, not raised: the NPC keeps talking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from realtime.tools import ToolInputError, ToolScope, ToolSpec, UnknownToolError
from realtime.voice.interfaces import ToolCall

RESULT_CHARS = 6_000  # a tool answer longer than this would crowd the model's context


class ToolRunner(Protocol):
    async def call_tool(self, name: str, arguments: dict[str, Any] | None, scope: ToolScope
                        ) -> dict[str, Any]: ...


def function_name(tool: str) -> str:
    return tool.replace(".", "__")


def tool_name(function: str) -> str:
    return function.replace("__", ".")


def function_definitions(specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tier's tools in the chat completions `tools` format."""
    return [
        {
            "type": "function",
            "function": {
                "name": function_name(s.name),
                "description": s.description,
                "parameters": s.input_schema(),
            },
        }
        for s in specs
    ]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    tool: str
    arguments: dict[str, Any] | None
    result: dict[str, Any]
    ok: bool

    def message(self) -> dict[str, Any]:
        """The `tool` message the model reads next."""
        text = json.dumps(self.result, default=str, ensure_ascii=False)
        if len(text) > RESULT_CHARS:
            text = text[:RESULT_CHARS] + " …(cut)"
        return {"role": "tool", "tool_call_id": self.call.id, "content": text}


async def run_call(
    runner: ToolRunner, call: ToolCall, scope: ToolScope, offered: Sequence[str]
) -> ToolOutcome:
    """Run one call the model made; only tools offered this turn may run."""
    name = tool_name(call.name)
    if name not in offered:
        return ToolOutcome(call, name, None, {"error": f"tool {call.name!r} is not available"},
                           False)
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolOutcome(call, name, None, {"error": f"arguments are not JSON: {exc}"}, False)
    if not isinstance(arguments, dict):
        return ToolOutcome(call, name, None, {"error": "arguments must be a JSON object"}, False)
    try:
        result = await runner.call_tool(name, arguments, scope)
    except (ToolInputError, UnknownToolError) as exc:
        return ToolOutcome(call, name, arguments, {"error": str(exc)}, False)
    return ToolOutcome(call, name, arguments, result, True)


def assistant_message(calls: Sequence[ToolCall], text: str = "") -> dict[str, Any]:
    """The model's own turn that asked for `calls`, as the next request must repeat it."""
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments or "{}"}}
            for c in calls
        ],
    }
