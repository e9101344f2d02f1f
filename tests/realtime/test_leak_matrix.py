"""The leak matrix (issue 11): every read path x every kind of viewer, over HTTP and MCP.

Read paths: the hot context, pre-fetch, and each memory tool (entities, facts, GraphRAG,
session search, summaries). Viewers: each kind of NPC (told of a secret, party to it, neither),
no NPC, an empty and a blank id, entities that are not NPCs (an item and a faction party to a
secret, an event, a place), an unknown id, another campaign's NPC named in a secret's
`known_by`, and an id spoofed inside the tool arguments.

The rule (`realtime/viewers.py`): an NPC of the campaign sees its view; no NPC (also empty or
blank) sees public facts; anything else is refused (404 unknown NPC, 422 not an NPC). Every
answer that is not a refusal must contain its path's public control, so an empty answer cannot
pass for a safe one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal
from urllib.parse import quote

import httpx
import pytest
from mcp import Client

from realtime.mcp.server import build_server
from realtime.tools import ToolScope

PUBLIC_FACT = "Thaldrin Ashvale drinks at The Gilded Tankard"
STOLE = re.compile(r"\bstole\b")  # the seeded secret fact; the transcript says "stolen"
STOLE_FLAGGED = "Mirela Quickfingers stole Sunblade (SECRET: do not reveal)"
HOARDS = re.compile(r"hoards.gold", re.IGNORECASE)  # a secret known only to another campaign's NPC
PROFILE_SECRET = "small figure near the temple"  # Thaldrin's own secret knowledge

Kind = Literal["npc", "public", "not_npc", "unknown"]


@dataclass(frozen=True)
class Viewer:
    label: str
    npc_id: str | None  # what the caller binds
    kind: Kind
    sees_stole: bool = False
    sees_profile: bool = False


VIEWERS = [
    Viewer("told-npc", "thaldrin", "npc", sees_stole=True, sees_profile=True),
    Viewer("party-npc", "mirela-quickfingers", "npc", sees_stole=True),
    Viewer("other-npc", "borga", "npc"),
    Viewer("no-npc", None, "public"),
    Viewer("empty-id", "", "public"),
    Viewer("blank-id", "   ", "public"),
    Viewer("item-party-to-secret", "sunblade", "not_npc"),
    Viewer("faction-party-to-secret", "iron-circle", "not_npc"),
    Viewer("event", "wolf-hunt", "not_npc"),
    Viewer("location", "gilded-tankard", "not_npc"),
    Viewer("unknown-id", "nobody-at-all", "unknown"),
    Viewer("other-campaigns-npc", "spy", "unknown"),
]

# path -> (calls, the public control every answered call set must contain)
TOOL_PATHS: dict[str, tuple[list[dict[str, Any]], str]] = {
    "memory.query_entities": (
        [{"name": "Mirela"}, {"name": "Sunblade", "depth": 3}, {"name": "Thaldrin"},
         {"name": "Iron Circle", "depth": 2}, {"type": "npc", "limit": 25},
         {"name": "Thaldrin", "related_to": "Sunblade"}],
        PUBLIC_FACT,
    ),
    "memory.search_facts": (
        [{"query": "stole Sunblade"}, {"entity": "Sunblade", "include_history": True}, {},
         {"entity": "Iron Circle"}, {"query": "gold"}],
        PUBLIC_FACT,
    ),
    "memory.search_graph": (
        [{"query": "smith", "entity": "Thaldrin"},
         {"query": "sword", "entity": "Mirela", "depth": 1},
         {"query": "gold", "entity": "Iron Circle", "depth": 2, "mode": "fulltext"}],
        "smith of this town",
    ),
    "memory.search_sessions": ([{"query": "who stole the Sunblade"}], "Sunblade vanished"),
    "memory.get_session_summary": ([{"session": "last"}], "tunnel map"),
}

# Mirela is never named in a transcript: GraphRAG finds passages from her only through her
# secret edge to the Sunblade, so a viewer who may not see it gets none.
MIRELA_GRAPH = {"query": "sword", "entity": "Mirela", "depth": 1}


@dataclass
class LeakSeed:
    campaign_id: str
    session_id: str


@pytest.fixture(scope="module")
def leak_seed(rt_db_url: str, rt_embedder: Any) -> LeakSeed:
    from glyphoxa_pipelines.db import Database
    from glyphoxa_pipelines.memory import (
        Campaign,
        CampaignStore,
        Entity,
        KnowledgeGraph,
        Relationship,
    )
    from tests.support.realtime_seed import T0, seed_campaign

    cid = "rt-leak-" + uuid.uuid4().hex[:8]
    seed = seed_campaign(rt_db_url, rt_embedder, cid)
    other = cid + "-other"
    with Database(rt_db_url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(other, "Another campaign"))
        kg = KnowledgeGraph(db)
        kg.add_entity(Entity(other, "spy", "npc", "The Spy", [], {}))
        # told to an id that is an NPC elsewhere only: nobody in this campaign may see it
        kg.add_relationship(Relationship(
            cid, "iron-circle", "kraghammer", "hoards_gold_under", visibility="secret",
            known_by=["spy"], session_id=seed.past_sessions[1],
            observed_at=T0 + timedelta(days=7, minutes=5), evidence="a ledger the spy read"))
    return LeakSeed(cid, seed.live_session)


def _assert_hidden(viewer: Viewer, where: str, text: str) -> None:
    assert bool(STOLE.search(text)) is False or viewer.sees_stole, (viewer.label, where)
    assert not HOARDS.search(text), (viewer.label, where)
    assert (PROFILE_SECRET in text) is False or viewer.sees_profile, (viewer.label, where)


def _assert_refusal_text(viewer: Viewer, text: str) -> None:
    expected = "not an NPC" if viewer.kind == "not_npc" else "unknown NPC"
    assert expected in text, (viewer.label, text)


def _check_answers(viewer: Viewer, path: str, answers: list[tuple[dict[str, Any], str]],
                   graph_counts: dict[str, int]) -> None:
    """`answers`: (arguments, the answer's text) of calls that ran (status ok)."""
    calls, control = TOOL_PATHS[path]
    text = "\n".join(t for _, t in answers)
    assert control in text, (viewer.label, path, "the public control is missing")
    _assert_hidden(viewer, path, text)
    if path in ("memory.query_entities", "memory.search_facts") and viewer.sees_stole:
        # the same calls do find the secret for an NPC who knows it, flagged
        assert STOLE_FLAGGED in text, (viewer.label, path)
    if path == "memory.search_graph":
        mirela = graph_counts["mirela"]
        assert (mirela > 0) is viewer.sees_stole, (viewer.label, mirela)


# -- HTTP -------------------------------------------------------------------------------------

def _body(seed: LeakSeed, viewer: Viewer, arguments: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"campaign_id": seed.campaign_id, "session_id": seed.session_id,
                            "arguments": arguments}
    if viewer.npc_id is not None:
        body["npc_id"] = viewer.npc_id
    return body


@pytest.mark.parametrize("path", sorted(TOOL_PATHS))
@pytest.mark.parametrize("viewer", VIEWERS, ids=lambda v: v.label)
async def test_tools_over_http(rt_client: httpx.AsyncClient, leak_seed: LeakSeed,
                               viewer: Viewer, path: str) -> None:
    calls, _ = TOOL_PATHS[path]
    answers: list[tuple[dict[str, Any], str]] = []
    graph_counts: dict[str, int] = {}
    for args in calls:
        r = await rt_client.post(f"/v1/tools/{path}", json=_body(leak_seed, viewer, args))
        _assert_hidden(viewer, path, r.text)
        if viewer.kind in ("not_npc", "unknown"):
            assert r.status_code == (422 if viewer.kind == "not_npc" else 404), r.text
            assert set(r.json()) >= {"error", "detail"}
            _assert_refusal_text(viewer, r.json()["detail"])
            continue
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "ok", r.text
        answers.append((args, r.text))
        if args == MIRELA_GRAPH:
            graph_counts["mirela"] = r.json()["count"]
    if viewer.kind in ("npc", "public"):
        _check_answers(viewer, path, answers, graph_counts)


@pytest.mark.parametrize("viewer", VIEWERS, ids=lambda v: v.label)
async def test_hot_context(rt_client: httpx.AsyncClient, leak_seed: LeakSeed,
                           viewer: Viewer) -> None:
    """A hot context is an NPC's: with no NPC bound (empty, blank) it is refused too."""
    if viewer.npc_id in (None, ""):
        pytest.skip("no NPC in the path: the route itself does not match")
    url = f"/v1/sessions/{leak_seed.session_id}/npcs/{quote(viewer.npc_id)}/context"
    # a spoofed viewer in the query string changes nothing
    r = await rt_client.get(url, params={"npc_id": "thaldrin", "npc": "thaldrin"})
    _assert_hidden(viewer, "hot context", r.text)
    if viewer.kind == "npc":
        assert r.status_code == 200, r.text
        ctx = r.json()
        assert "The Gilded Tankard" in r.text  # the scene: the context really was assembled
        assert ctx["npc_id"] == viewer.npc_id
        assert bool(STOLE.search(r.text)) is viewer.sees_stole
        assert (PROFILE_SECRET in r.text) is viewer.sees_profile
        return
    expected = {"public": 422, "not_npc": 422, "unknown": 404}[viewer.kind]
    assert r.status_code == expected, r.text
    assert set(r.json()) >= {"error", "detail"}
    if viewer.kind != "public":
        _assert_refusal_text(viewer, r.json()["detail"])


@pytest.mark.parametrize("viewer", VIEWERS, ids=lambda v: v.label)
async def test_prefetch(rt_client: httpx.AsyncClient, rt_service: Any, leak_seed: LeakSeed,
                        viewer: Viewer) -> None:
    sid = leak_seed.session_id
    body: dict[str, Any] = {"text": "What do you know about the sunblade, Mirela and the "
                                    "Iron Circle?"}
    if viewer.npc_id is not None:
        body["npc_id"] = viewer.npc_id
    r = await rt_client.post(f"/v1/sessions/{sid}/partials", json=body)
    await rt_service.wait_prefetch(sid, 10.0)
    if viewer.kind in ("not_npc", "unknown"):
        assert r.status_code == (422 if viewer.kind == "not_npc" else 404), r.text
        _assert_refusal_text(viewer, r.json()["detail"])
        # nothing was fetched as that entity's view (public items are everyone's)
        assert [i for i in rt_service.prefetch.get(sid, viewer.npc_id)
                if i.viewer == viewer.npc_id] == []
        return
    assert r.status_code == 200, r.text
    assert {t["key"] for t in r.json()["triggers"]} >= {"sunblade", "mirela-quickfingers"}
    if viewer.kind == "npc":
        # what the NPC's LLM gets: the pre-fetched memories in its next hot context
        ctx = await rt_client.get(f"/v1/sessions/{sid}/npcs/{viewer.npc_id}/context")
        assert ctx.status_code == 200, ctx.text
        text = json.dumps(ctx.json()["memories"])
    else:
        text = json.dumps([m.text for m in rt_service.prefetcher.memories(sid, None)])
    assert "Sunblade (item)" in text, (viewer.label, text)  # the control
    _assert_hidden(viewer, "pre-fetch", text)
    assert bool(STOLE.search(text)) is viewer.sees_stole, (viewer.label, text)


SPOOFS = [{"npc_id": "thaldrin"}, {"npc": "thaldrin"}, {"viewer": "thaldrin"},
          {"scope": {"npc_id": "thaldrin"}}]


@pytest.mark.parametrize("path", sorted(TOOL_PATHS))
@pytest.mark.parametrize("bound", [None, "borga"])
async def test_spoofed_viewer_in_arguments_over_http(
    rt_client: httpx.AsyncClient, leak_seed: LeakSeed, path: str, bound: str | None
) -> None:
    """The LLM writes the arguments: naming a viewer there is refused, never obeyed."""
    viewer = Viewer("spoof", bound, "npc" if bound else "public")
    args = TOOL_PATHS[path][0][0]
    for spoof in SPOOFS:
        r = await rt_client.post(f"/v1/tools/{path}",
                                 json=_body(leak_seed, viewer, {**args, **spoof}))
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "invalid tool arguments"
        _assert_hidden(viewer, path, r.text)
    # the same call without the spoof runs (the refusal above is the spoof's)
    r = await rt_client.post(f"/v1/tools/{path}", json=_body(leak_seed, viewer, args))
    assert r.status_code == 200 and r.json()["status"] == "ok", r.text


# -- MCP --------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def _mcp_base(service: Any) -> AsyncIterator[str]:
    import uvicorn

    from realtime.api.app import create_app

    app = create_app(service, open_service=False, mount_mcp=True)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await task


def _mcp_url(base: str, seed: LeakSeed, npc: str | None) -> str:
    url = f"{base}?campaign={seed.campaign_id}&session={seed.session_id}"
    return url if npc is None else f"{url}&npc={quote(npc)}"


async def _mcp_calls(client: Client, viewer: Viewer) -> None:
    for path, (calls, _) in TOOL_PATHS.items():
        answers: list[tuple[dict[str, Any], str]] = []
        graph_counts: dict[str, int] = {}
        for args in calls:
            result = await client.call_tool(path, args)
            text = result.content[0].text  # type: ignore[union-attr]
            _assert_hidden(viewer, path, text)
            if viewer.kind in ("not_npc", "unknown"):
                assert result.is_error, (viewer.label, path, text)
                _assert_refusal_text(viewer, text)
                continue
            assert not result.is_error, (viewer.label, path, text)
            payload = json.loads(text)
            assert payload["status"] == "ok", payload
            answers.append((args, text))
            if args == MIRELA_GRAPH:
                graph_counts["mirela"] = payload["count"]
        if viewer.kind in ("npc", "public"):
            _check_answers(viewer, path, answers, graph_counts)
        for spoof in SPOOFS:
            result = await client.call_tool(path, {**calls[0], **spoof})
            assert result.is_error, (viewer.label, path, spoof)
            _assert_hidden(viewer, path, result.content[0].text)  # type: ignore[union-attr]


async def test_tools_over_mcp_http(rt_service: Any, leak_seed: LeakSeed) -> None:
    """Every viewer bound the way an MCP client binds it (the `npc` query parameter), every
    tool, plus the spoofs; one server for the lot."""
    async with _mcp_base(rt_service) as base:
        for viewer in VIEWERS:
            async with Client(_mcp_url(base, leak_seed, viewer.npc_id)) as client:
                await _mcp_calls(client, viewer)


@pytest.mark.parametrize("viewer", VIEWERS, ids=lambda v: v.label)
async def test_tools_over_mcp_bound(rt_service: Any, leak_seed: LeakSeed,
                                    viewer: Viewer) -> None:
    """The binding `glyphoxa mcp --npc` makes (stdio): the same rule."""
    bound = ToolScope(leak_seed.campaign_id, leak_seed.session_id, viewer.npc_id)
    async with Client(build_server(rt_service, bound=bound)) as client:
        await _mcp_calls(client, viewer)
