"""MCP tool failures come back as tool results the LLM can read (is_error), never as JSON-RPC
errors with code 0 and raw database text."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcp import Client

from realtime.mcp.server import build_server
from realtime.service import ToolScope


@pytest.fixture
async def campaign(rt_client: Any) -> str:
    cid = "rt-mcp-err-" + uuid.uuid4().hex[:6]
    assert (await rt_client.put(f"/v1/campaigns/{cid}",
                                json={"id": cid, "name": "E"})).status_code == 200
    return cid


@pytest.mark.parametrize("query", ["?", "(((", "<->", "🐉", "\ufeff"])
async def test_wordless_search_over_mcp(rt_service: Any, campaign: str, query: str) -> None:
    server = build_server(rt_service, bound=ToolScope(campaign, None, None))
    async with Client(server) as client:
        result = await client.call_tool("memory.search_facts", {"query": query})
        assert not result.is_error, result.content
        # an unknown entity is the tool's own answer; a tsquery error must not be
        result = await client.call_tool("memory.search_graph",
                                        {"entity": "nobody", "query": query})
        assert "tsquery" not in result.content[0].text  # type: ignore[union-attr]


async def test_unexpected_failure_is_a_tool_error_without_raw_text(
    rt_service: Any, campaign: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError('syntax error in tsquery: "secret transcript words"')

    monkeypatch.setattr(rt_service, "call_tool", boom)
    server = build_server(rt_service, bound=ToolScope(campaign, None, None))
    async with Client(server) as client:
        result = await client.call_tool("memory.search_facts", {"query": "x"})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "internal error" in text and "secret" not in text and "tsquery" not in text


async def test_unsafe_arguments_are_a_tool_error(rt_service: Any, campaign: str) -> None:
    server = build_server(rt_service, bound=ToolScope(campaign, None, None))
    async with Client(server) as client:
        result = await client.call_tool("memory.search_facts", {"query": "a\x00b"})
    assert result.is_error and "NUL" in result.content[0].text  # type: ignore[union-attr]
