"""The MCP server through the SDK's own client: streamable HTTP (mounted in the app, on a real
loopback server) and stdio (`glyphoxa mcp` as a subprocess). List tools, call each."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from realtime import tools as tl
from realtime.tools.tiers import SMOOTH_WINDOW

ROOT = Path(__file__).resolve().parents[2]


def _calls(seed) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    return {
        "memory.search_sessions": {"query": "tunnel map", "top_k": 2},
        "memory.query_entities": {"name": "Borga"},
        "memory.get_session_summary": {"session": "last"},
        "memory.search_facts": {"query": "Iron Circle"},
        "memory.search_graph": {"query": "map", "entity": "Iron Circle"},
    }


async def _exercise(client: Client, seed, *, expect_secret: bool) -> None:  # type: ignore[no-untyped-def]
    listed = await client.list_tools()
    names = {t.name for t in listed.tools}
    assert names == set(tl.TOOLS)
    schema = next(t for t in listed.tools if t.name == "memory.search_sessions").input_schema
    assert schema["required"] == ["query"]
    for name, args in _calls(seed).items():
        result = await client.call_tool(name, args)
        assert not result.is_error, (name, result.content)
        payload = json.loads(result.content[0].text)
        assert payload["status"] == "ok" and payload["count"] >= 1, (name, payload)
        assert result.structured_content["tool"] == name
    facts = await client.call_tool("memory.search_facts", {"query": "stole Sunblade"})
    text = facts.content[0].text
    assert ("stole Sunblade (SECRET" in text) is expect_secret
    bad = await client.call_tool("memory.search_sessions", {"top_k": 0})
    assert bad.is_error and "query" in bad.content[0].text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_mcp_streamable_http(rt_service, rt_seed) -> None:  # type: ignore[no-untyped-def]
    import uvicorn

    from realtime.api.app import create_app

    app = create_app(rt_service, open_service=False, mount_mcp=True)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(100):
            if server.started:
                break
            await asyncio.sleep(0.05)
        base = f"http://127.0.0.1:{port}/mcp?campaign={rt_seed.campaign_id}"
        async with Client(f"{base}&session={rt_seed.live_session}&npc=borga") as client:
            await _exercise(client, rt_seed, expect_secret=False)
        # Tier membership follows measured latency; on a loaded machine search_facts may have
        # left FAST during the calls above. Pin its evidence so this checks the FAST contract.
        for _ in range(SMOOTH_WINDOW):
            rt_service.latencies.record("memory.search_facts", 1.0)
        assert rt_service.latencies.offers(tl.Tier.FAST, "memory.search_facts")
        async with Client(f"{base}&npc=thaldrin&tier=FAST") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {s.name for s in tl.tools_for_tier(tl.Tier.FAST,
                                                                rt_service.latencies)}
            text = (await client.call_tool("memory.search_facts",
                                           {"query": "stole Sunblade"})).content[0].text
            assert "stole Sunblade (SECRET" in text
    finally:
        server.should_exit = True
        await task


async def test_mcp_stdio(rt_seed, rt_db_url: str, rt_home: Path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "GLYPHOXA_DATABASE_URL": rt_db_url, "GLYPHOXA_HOME": str(rt_home / "mcp"),
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from glyphoxa_pipelines.cli import main; main()", "mcp",
              "--campaign", rt_seed.campaign_id, "--session", rt_seed.live_session,
              "--npc", "thaldrin"],
        env=env,
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        await _exercise(client, rt_seed, expect_secret=True)
