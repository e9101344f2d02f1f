"""NPC-scoped recall (issue 17) on the real database: a conversation held where an NPC was
absent never reaches its hot context, its tools (HTTP and MCP) or its pre-fetch; one it
witnessed does; the DM and unscoped callers recall both; a grant (told) and a DM presence edit
change the answer at the next read.

Every "does not reach" assertion is paired with a control on the same path that does reach,
so an empty answer cannot pass for a scoped one.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from mcp import Client

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    KnowledgeGraph,
    NewEntry,
    SemanticIndex,
    SessionStore,
)
from glyphoxa_pipelines.processing.chunking import chunk_transcript
from realtime.mcp.server import build_server
from realtime.tools import ToolScope

T0 = datetime(2026, 5, 1, 19, 0, tzinfo=UTC)

# Held at the docks with Bren present and Alda away.
DOCKS = [
    ("Matt", "dm", "", "At the docks at midnight, Bren the ferryman waits by his boat."),
    ("Ana", "player", "bren", "Bren, is it true about the smugglers' tunnel under the lighthouse?"),
    ("Bren", "npc", "bren", "Aye, the smugglers' tunnel runs under the lighthouse to the sea cave."),
    ("Ana", "player", "bren", "Who uses the lighthouse tunnel these nights?"),
    ("Bren", "npc", "bren", "Masked smugglers, every new moon, carrying crates to the sea cave."),
]
# Held at the bakery with Alda present.
BAKERY = [
    ("Matt", "dm", "", "In the bakery, Alda the baker dusts flour off her apron."),
    ("Ben", "player", "alda", "Alda, when is the Silver Comet festival?"),
    ("Alda", "npc", "alda", "The Silver Comet festival starts in three days, with honey cakes."),
    ("Ben", "player", "alda", "Will there be a comet parade at the festival?"),
    ("Alda", "npc", "alda", "A lantern parade for the comet, right through the market square."),
]
TUNNEL = "smugglers tunnel under the lighthouse"
FESTIVAL = "Silver Comet festival parade"


@dataclass
class World:
    cid: str
    docks: str  # Bren present, Alda absent
    bakery: str  # Alda present
    live: str


def _entries(session_id: str, lines: list[tuple[str, str, str, str]], start: datetime
             ) -> list[NewEntry]:
    return [
        NewEntry(idempotency_key=f"{session_id}-{i}", text=text, speaker_id=name.lower(),
                 speaker_name=name, speaker_role=role,  # type: ignore[arg-type]
                 npc_id=npc or None, spoken_at=start + timedelta(seconds=20 * i))
        for i, (name, role, npc, text) in enumerate(lines)
    ]


@pytest.fixture
def world(rt_db_url: str, rt_embedder: Any) -> World:
    cid = "scope-" + uuid.uuid4().hex[:8]
    with Database(rt_db_url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, f"NPC scope {cid}"))
        kg = KnowledgeGraph(db)
        ents = [Entity(cid, "alda", "npc", "Alda", [], {"description": "the baker"}),
                Entity(cid, "bren", "npc", "Bren", [], {"description": "the ferryman"}),
                Entity(cid, "cora", "npc", "Cora", [], {"description": "the harbour master"}),
                Entity(cid, "lighthouse", "location", "The Lighthouse", []),
                Entity(cid, "lantern", "item", "Lantern", [])]
        for e in ents:
            kg.add_entity(e)
        sessions = SessionStore(db)
        index = SemanticIndex(db)
        ids = {}
        for name, lines, present, day in (("docks", DOCKS, ["bren"], 0),
                                          ("bakery", BAKERY, ["alda"], 7)):
            start = T0 + timedelta(days=day)
            s = sessions.start_session(cid, f"{cid}-{name}", title=name, started_at=start,
                                       status="ended")
            sessions.set_scene(s.id, {"location": "lighthouse", "present": present})
            sessions.write_entries(s.id, _entries(s.id, lines, start))
            stored = sessions.get_entries(s.id)
            chunks = chunk_transcript(stored, count_tokens=rt_embedder.count_tokens,
                                      target_tokens=60, max_tokens=120, known_names=ents)
            index.index_chunks(chunks, rt_embedder.embed([c.text for c in chunks]),
                               model=rt_embedder.model_id)
            turns = index.entries_missing_embeddings(rt_embedder.model_id, session_id=s.id)
            index.add_entry_embeddings(rt_embedder.model_id, list(zip(
                [t.entry_id for t in turns],
                rt_embedder.embed([t.embedding_text() for t in turns]), strict=True)))
            ids[name] = s.id
        live = sessions.start_session(cid, f"{cid}-live", title="live",
                                      started_at=T0 + timedelta(days=14))
    return World(cid, ids["docks"], ids["bakery"], live.id)


async def _search(client: httpx.AsyncClient, w: World, npc: str | None, query: str
                  ) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"campaign_id": w.cid, "arguments": {"query": query, "top_k": 8}}
    if npc is not None:
        body["npc_id"] = npc
    r = await client.post("/v1/tools/memory.search_sessions", json=body)
    assert r.status_code == 200, r.text
    return r.json()["results"]


def _sessions(results: list[dict[str, Any]]) -> set[str]:
    return {r["source"]["session_id"] for r in results}


def _text(results: list[dict[str, Any]]) -> str:
    return "\n".join(r["text"] for r in results).lower()


async def test_search_recalls_only_what_the_npc_witnessed(rt_client: httpx.AsyncClient,
                                                          world: World) -> None:
    alda = await _search(rt_client, world, "alda", TUNNEL)
    assert world.docks not in _sessions(alda) and "lighthouse" not in _text(alda)
    assert world.bakery in _sessions(await _search(rt_client, world, "alda", FESTIVAL))
    bren = await _search(rt_client, world, "bren", TUNNEL)
    assert world.docks in _sessions(bren) and "lighthouse" in _text(bren)
    # Bren was not at the bakery; Cora was nowhere
    assert world.bakery not in _sessions(await _search(rt_client, world, "bren", FESTIVAL))
    assert await _search(rt_client, world, "cora", TUNNEL) == []
    # the DM (no NPC bound) recalls both
    both = _sessions(await _search(rt_client, world, None, TUNNEL))
    assert {world.docks, world.bakery} <= both | _sessions(
        await _search(rt_client, world, None, FESTIVAL))
    assert world.docks in both
    # a session named: the exact-scan path of the vector leg composes the rule too
    for npc, sees in (("alda", False), ("bren", True), (None, True)):
        body: dict[str, Any] = {"campaign_id": world.cid, "arguments": {
            "query": TUNNEL, "session_id": world.docks}}
        if npc:
            body["npc_id"] = npc
        r = await rt_client.post("/v1/tools/memory.search_sessions", json=body)
        assert r.status_code == 200, r.text
        assert ("lighthouse" in _text(r.json()["results"])) is sees, (npc, r.json())


async def test_mcp_and_graph_passages_are_scoped(rt_service: Any, rt_client: httpx.AsyncClient,
                                                 world: World) -> None:
    async with Client(build_server(rt_service, bound=ToolScope(world.cid, None, "alda"))) as c:
        res = await c.call_tool("memory.search_sessions", {"query": TUNNEL})
        payload = json.loads(res.content[0].text)  # type: ignore[union-attr]
        assert payload["status"] == "ok"
        assert "lighthouse" not in _text(payload["results"])
        res = await c.call_tool("memory.search_sessions", {"query": FESTIVAL})
        assert "comet" in _text(json.loads(res.content[0].text)["results"])  # type: ignore[union-attr]
    # GraphRAG passages are whole chunks: the lighthouse is named only at the docks
    for npc, sees in (("alda", False), ("bren", True), (None, True)):
        body: dict[str, Any] = {"campaign_id": world.cid, "arguments": {
            "entity": "lighthouse", "query": "smugglers tunnel", "mode": "fulltext",
            "depth": 0}}
        if npc:
            body["npc_id"] = npc
        r = await rt_client.post("/v1/tools/memory.search_graph", json=body)
        assert r.status_code == 200, r.text
        assert ("smugglers" in _text(r.json()["results"])) is sees, (npc, r.json())


async def test_hot_context_and_prefetch_are_scoped(rt_client: httpx.AsyncClient,
                                                   rt_service: Any, world: World) -> None:
    live = world.live
    start = T0 + timedelta(days=14)

    async def say(scene: list[str], lines: list[tuple[str, str, str, str]], at: int) -> None:
        r = await rt_client.put(f"/v1/sessions/{live}/scene", json={"present": scene})
        assert r.status_code == 200, r.text
        for i, e in enumerate(_entries(live, lines, start + timedelta(seconds=at))):
            r = await rt_client.post(f"/v1/sessions/{live}/entries", json={
                "idempotency_key": f"{e.idempotency_key}-{at}-{i}", "text": e.text,
                "speaker_id": e.speaker_id, "speaker_name": e.speaker_name,
                "role": e.speaker_role, "npc_id": e.npc_id,
                "spoken_at": e.spoken_at.isoformat() if e.spoken_at else None})
            assert r.status_code == 201, r.text

    await say(["alda", "bren"], [("Matt", "dm", "", "The harbour bells ring at dawn.")], 0)
    await say(["bren"], [("Ana", "player", "bren", "Bren, the vault password is blue heron.")],
              20)
    # addressed while away from the scene: Alda witnesses that line (a shout to the tower)
    await say(["bren"], [("Ana", "player", "alda", "Alda, can you hear me from the tower?")], 40)

    async def recent(npc: str) -> str:
        r = await rt_client.get(f"/v1/sessions/{live}/npcs/{npc}/context")
        assert r.status_code == 200, r.text
        return "\n".join(line["text"] for line in r.json()["recent"]).lower()

    alda, bren, cora = await recent("alda"), await recent("bren"), await recent("cora")
    assert "harbour bells" in alda and "hear me from the tower" in alda
    assert "blue heron" not in alda
    assert "blue heron" in bren and "harbour bells" in bren
    assert "blue heron" not in cora and "harbour bells" not in cora

    # pre-fetch: a temporal cue searches past sessions as the addressed NPC sees them
    for npc, sees in (("alda", False), ("bren", True)):
        r = await rt_client.post(f"/v1/sessions/{live}/partials", json={
            "text": "do you remember the smugglers tunnel under the lighthouse", "npc_id": npc})
        assert r.status_code == 200 and r.json()["triggers"], r.text
        await rt_service.wait_prefetch(live, 5.0)
        ctx = (await rt_client.get(f"/v1/sessions/{live}/npcs/{npc}/context")).json()
        chunks = [m for m in ctx["memories"] if m["kind"] == "chunk"]
        recalled = "\n".join(m["text"] for m in chunks).lower()
        assert ("lighthouse" in recalled) is sees, (npc, chunks)
        if not sees:
            assert all(m["source"]["session_id"] != world.docks for m in chunks)


async def test_grant_and_dm_edits_change_the_answer(rt_client: httpx.AsyncClient,
                                                    world: World) -> None:
    assert "lighthouse" not in _text(await _search(rt_client, world, "alda", TUNNEL))
    # told of the docks conversation
    r = await rt_client.patch(f"/v1/sessions/{world.docks}/presence", json={"told": ["alda"]})
    assert r.status_code == 200, r.text
    assert r.json()["lines_changed"] == len(DOCKS)
    assert r.json()["spans"][0]["told"] == ["alda"]
    assert "lighthouse" in _text(await _search(rt_client, world, "alda", TUNNEL))
    r = await rt_client.patch(f"/v1/sessions/{world.docks}/presence", json={"untold": ["alda"]})
    assert "lighthouse" not in _text(await _search(rt_client, world, "alda", TUNNEL))
    # the DM says Cora was there after all, and Bren was not
    r = await rt_client.patch(f"/v1/sessions/{world.docks}/presence",
                              json={"present": ["cora"], "absent": ["bren"]})
    assert r.status_code == 200, r.text
    assert "lighthouse" in _text(await _search(rt_client, world, "cora", TUNNEL))
    # the DM's word wins over what the scene, speaking and addressing derived
    assert "lighthouse" not in _text(await _search(rt_client, world, "bren", TUNNEL))
    # public: every NPC
    r = await rt_client.patch(f"/v1/sessions/{world.docks}/presence", json={"public": True})
    spans = r.json()["spans"]
    assert len(spans) == 1 and spans[0]["public"] and spans[0]["lines"] == len(DOCKS)
    assert "lighthouse" in _text(await _search(rt_client, world, "alda", TUNNEL))


async def test_presence_listing_and_a_partial_span(rt_client: httpx.AsyncClient,
                                                   world: World) -> None:
    r = await rt_client.get(f"/v1/sessions/{world.bakery}/presence")
    assert r.status_code == 200, r.text
    spans = r.json()["spans"]
    # derived at write: the scene's present, the speaker and the addressed NPC
    assert [(s["lines"], s["witnesses"], s["public"]) for s in spans] == [
        (len(BAKERY), ["alda"], False)]
    first, last = spans[0]["first_entry_id"], spans[0]["last_entry_id"]
    r = await rt_client.patch(f"/v1/sessions/{world.bakery}/presence",
                              json={"first_entry_id": first, "last_entry_id": first,
                                    "present": ["bren"]})
    assert r.status_code == 200, r.text
    assert r.json()["lines_changed"] == 1
    assert [(s["first_entry_id"], s["last_entry_id"], s["witnesses"])
            for s in r.json()["spans"]][0] == (first, first, ["alda", "bren"])
    assert r.json()["spans"][-1]["last_entry_id"] == last


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"present": ["nobody-here"]}, 404, "unknown NPC 'nobody-here'"),
    ({"present": ["lantern"]}, 422, "not an NPC"),
    ({}, 422, "names no NPC"),
    ({"present": ["alda"], "absent": ["alda"]}, 422, "both present and absent"),
    ({"first_entry_id": 1, "present": ["alda"]}, 404, "no line of session"),
])
async def test_bad_presence_edits_are_refused(rt_client: httpx.AsyncClient, world: World,
                                              body: dict[str, Any], status: int,
                                              says: str) -> None:
    r = await rt_client.patch(f"/v1/sessions/{world.bakery}/presence", json=body)
    assert r.status_code == status, r.text
    assert says in r.text


async def test_unrecorded_presence_is_public_and_absent_on_it_is_refused(
    rt_client: httpx.AsyncClient, rt_service: Any, world: World,
) -> None:
    """A session whose scene never names who is present records no presence: its lines stay
    every NPC's, as before presence existed."""
    live = world.live
    r = await rt_client.post(f"/v1/sessions/{live}/entries", json={
        "idempotency_key": "open-1", "text": "Anyone at the market hears the crier.",
        "speaker_id": "matt", "speaker_name": "Matt", "role": "dm"})
    assert r.status_code == 201, r.text
    for npc in ("alda", "bren", "cora"):
        ctx = (await rt_client.get(f"/v1/sessions/{live}/npcs/{npc}/context")).json()
        assert any("crier" in line["text"] for line in ctx["recent"]), npc
    spans = (await rt_client.get(f"/v1/sessions/{live}/presence")).json()["spans"]
    assert spans == [dict(spans[0], public=True, witnesses=[], lines=1)]
    r = await rt_client.patch(f"/v1/sessions/{live}/presence", json={"absent": ["cora"]})
    assert r.status_code == 422 and "is public" in r.text
    r = await rt_client.patch(f"/v1/sessions/{live}/presence", json={"public": False,
                                                                     "present": ["alda"]})
    assert r.status_code == 200, r.text
    ctx = (await rt_client.get(f"/v1/sessions/{live}/npcs/cora/context")).json()
    assert not any("crier" in line["text"] for line in ctx["recent"])
    ctx = (await rt_client.get(f"/v1/sessions/{live}/npcs/alda/context")).json()
    assert any("crier" in line["text"] for line in ctx["recent"])


async def test_scene_present_by_name_counts_as_the_npc(rt_client: httpx.AsyncClient,
                                                      world: World) -> None:
    """Discord's /scene set stores the names the DM typed: they resolve to the NPC's id."""
    live = world.live
    r = await rt_client.put(f"/v1/sessions/{live}/scene", json={"present": ["CORA", "Nobody"]})
    assert r.status_code == 200, r.text
    r = await rt_client.post(f"/v1/sessions/{live}/entries", json={
        "idempotency_key": "named-1", "text": "The tide turns at the third bell.",
        "speaker_id": "matt", "speaker_name": "Matt", "role": "dm"})
    assert r.status_code == 201, r.text
    spans = (await rt_client.get(f"/v1/sessions/{live}/presence")).json()["spans"]
    assert [s["witnesses"] for s in spans] == [["Nobody", "cora"]]
    for npc, hears in (("cora", True), ("alda", False)):
        ctx = (await rt_client.get(f"/v1/sessions/{live}/npcs/{npc}/context")).json()
        assert any("third bell" in line["text"] for line in ctx["recent"]) is hears, npc


async def test_summaries_and_recaps_only_of_sessions_the_npc_heard(
    rt_client: httpx.AsyncClient, rt_db_url: str, world: World,
) -> None:
    """A session's summary and recap retell all of it: an NPC that heard none of its lines
    gets neither (as if none existed), one that heard some of it, the DM, and everyone for a
    session without lines, get them."""
    from glyphoxa_pipelines.memory import Recap, RecapStore, SessionSummary, SummaryStore

    with Database(rt_db_url, max_size=2).open() as db:
        quiet = SessionStore(db).start_session(world.cid, f"{world.cid}-quiet", title="quiet",
                                               started_at=T0 + timedelta(days=10),
                                               status="ended")
        for sid, what in ((world.docks, "the smugglers' tunnel"),
                          (world.bakery, "the comet festival"), (quiet.id, "a quiet week")):
            SummaryStore(db).save(SessionSummary(sid, world.cid, f"Summary of {what}.",
                                                 method="test"))
            RecapStore(db).save(Recap(sid, world.cid, f"Previously: {what}.", method="test"))

    async def ask(tool: str, npc: str | None, session: str) -> str:
        body: dict[str, Any] = {"campaign_id": world.cid, "arguments": {"session": session}}
        if npc is not None:
            body["npc_id"] = npc
        r = await rt_client.post(f"/v1/tools/{tool}", json=body)
        assert r.status_code == 200, r.text
        return _text(r.json()["results"])

    for tool in ("memory.get_session_summary", "memory.get_recap"):
        assert "tunnel" in await ask(tool, "bren", world.docks)
        assert "tunnel" in await ask(tool, None, world.docks)
        assert await ask(tool, "alda", world.docks) == ""
        assert "festival" in await ask(tool, "alda", world.bakery)
        assert await ask(tool, "bren", world.bakery) == ""
        # a session with no lines has no audience to keep: public
        assert "quiet week" in await ask(tool, "cora", quiet.id)


async def test_an_npcs_last_session_is_the_last_it_heard(rt_client: httpx.AsyncClient,
                                                        rt_db_url: str, world: World) -> None:
    from glyphoxa_pipelines.memory import SessionSummary, SummaryStore

    with Database(rt_db_url, max_size=2).open() as db:
        for sid, what in ((world.docks, "the tunnel"), (world.bakery, "the festival")):
            SummaryStore(db).save(SessionSummary(sid, world.cid, f"Summary of {what}.",
                                                 method="test"))
    for npc, says in (("bren", "tunnel"), ("alda", "festival"), (None, "festival")):
        body: dict[str, Any] = {"campaign_id": world.cid, "arguments": {"session": "last"}}
        if npc is not None:
            body["npc_id"] = npc
        r = await rt_client.post("/v1/tools/memory.get_session_summary", json=body)
        assert r.status_code == 200, r.text
        assert says in _text(r.json()["results"]), (npc, r.json())
    body = {"campaign_id": world.cid, "npc_id": "cora", "arguments": {"session": "last"}}
    r = await rt_client.post("/v1/tools/memory.get_session_summary", json=body)
    assert r.json()["results"] == []  # Cora heard neither session
