"""The dashboard's edits, each checked through the JSON API or the store afterwards: entity
edits, merge, retcon with history, review reject and correct, reveal and visibility, the
recall preview and the graph's filters."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.dashboard.dashboard_support import Seed


@pytest.fixture
async def dm(client: httpx.AsyncClient, seed: Seed) -> Any:
    """POST as the dashboard's pages do: with the page's CSRF token."""
    html = (await client.get(f"/dashboard/c/{seed.campaign_id}")).text
    token = re.search(r'"X-CSRF-Token": "([^"]+)"', html).group(1)  # type: ignore[union-attr]

    async def post(path: str, data: dict[str, Any] | None = None) -> httpx.Response:
        return await client.post(f"/dashboard/c/{seed.campaign_id}{path}", data=data,
                                 headers={"X-CSRF-Token": token, "HX-Request": "true"})

    return post


async def _entity(client: httpx.AsyncClient, seed: Seed, eid: str) -> dict[str, Any]:
    r = await client.post("/v1/tools/memory.query_entities", json={
        "campaign_id": seed.campaign_id, "arguments": {"name": eid}})
    assert r.status_code == 200
    return r.json()


async def test_entity_edit_names_aliases_attributes(
    client: httpx.AsyncClient, seed: Seed, dm: Any, dash_service: Any
) -> None:
    from glyphoxa_pipelines.memory import KnowledgeGraph

    r = await dm("/entities/thaldrin", {"name": "Thaldrin Ashvale", "aliases": "Thal, Ash",
                                        "attributes": "mood: grumpy\nage: 54"})
    assert r.status_code == 200 and "mood: grumpy" in r.text
    ent = await dash_service.run(KnowledgeGraph.get_entity.op(dash_service.graph,
                                                              seed.campaign_id, "thaldrin"))
    assert ent.aliases == ["Thal", "Ash"]
    assert ent.attributes == {"mood": "grumpy", "age": "54"}  # "role" removed with its line
    bad = await dm("/entities/thaldrin", {"name": "Thaldrin", "attributes": "no colon here"})
    assert bad.status_code == 422 and "line 1" in bad.json()["detail"]
    blank = await dm("/entities/thaldrin", {"name": " ", "aliases": ""})
    assert blank.status_code == 422 and "name" in blank.json()["detail"]


async def test_merge_folds_the_duplicate(
    client: httpx.AsyncClient, seed: Seed, dm: Any, dash_service: Any
) -> None:
    from glyphoxa_pipelines.memory import KnowledgeGraph

    r = await dm("/entities/smith/merge", {"into": "thaldrin"})
    assert r.status_code == 204
    assert r.headers["hx-redirect"] == f"/dashboard/c/{seed.campaign_id}/entities/thaldrin"
    kg = dash_service.graph
    assert await dash_service.run(KnowledgeGraph.get_entity.op(kg, seed.campaign_id,
                                                               "smith")) is None
    kept = await dash_service.run(KnowledgeGraph.get_entity.op(kg, seed.campaign_id,
                                                               "thaldrin"))
    assert kept.aliases == ["Thal", "The Smith", "Old Smith"]
    facts = await dash_service.run(KnowledgeGraph.get_relationships.op(
        kg, seed.campaign_id, "thaldrin"))
    assert [(f.rel_type, f.target_id) for f in facts] == [("works_at", "tankard")]
    assert (await dm("/entities/thaldrin/merge", {"into": "thaldrin"})).status_code == 422
    assert (await dm("/entities/nope/merge", {"into": "thaldrin"})).status_code == 404


async def test_retcon_keeps_history_visible(
    client: httpx.AsyncClient, seed: Seed, dm: Any
) -> None:
    r = await dm(f"/entities/thaldrin/facts/{seed.public_fact}/retcon")
    assert r.status_code == 200
    row = re.search(rf'<tr id="efact-{seed.public_fact}" class="(\w+)"', r.text)
    assert row and row.group(1) == "history" and "retconned" in r.text
    ctx = (await client.get(f"/v1/sessions/{seed.live}/npcs/thaldrin/context")).json()
    assert not any("works at" in f["text"] for f in ctx["facts"])


async def test_review_reject_and_correct(
    client: httpx.AsyncClient, seed: Seed, dm: Any, dash_service: Any
) -> None:
    from glyphoxa_pipelines.memory import KnowledgeGraph

    r = await dm(f"/review/{seed.pending_fact}/edit", {
        "source": "Thaldrin Ashvale", "relation": "OWES_FAVOR_TO", "target": "Mirela Quickfingers",
        "evidence": "corrected by the DM"})
    assert r.status_code == 200 and "corrected" in r.text
    assert "owes_favor_to" in r.text and "mirela" in r.text
    facts = await dash_service.run(KnowledgeGraph.get_relationships.op(
        dash_service.graph, seed.campaign_id, "thaldrin"))
    new = [f for f in facts if f.rel_type == "owes_favor_to"]
    assert len(new) == 1 and new[0].dm_confirmed and new[0].status == "canon"
    old = await dash_service.run(KnowledgeGraph.get_relationship.op(
        dash_service.graph, seed.campaign_id, seed.pending_fact))
    assert old.invalidated_at is not None and old.invalidated_by == new[0].id
    unknown = await dm(f"/review/{seed.pending_fact}/edit", {
        "source": "Nobody At All", "relation": "knows", "target": "Borga"})
    assert unknown.status_code == 404
    r = await dm(f"/review/{seed.secret_fact}/reject")
    assert r.status_code == 200 and "rejected" in r.text


async def test_reveal_and_visibility(client: httpx.AsyncClient, seed: Seed, dm: Any) -> None:
    def knowers(html: str, fact: int) -> str:
        row = re.search(rf'<tr id="secret-{fact}">(.*?)</tr>', html, re.S)
        assert row, html[:2000]
        return re.search(r'class="knowers">(.*?)</td>', row.group(1), re.S).group(1)  # type: ignore[union-attr]

    page = (await client.get(f"/dashboard/c/{seed.campaign_id}/secrets")).text
    assert "nobody" in knowers(page, seed.hidden_fact)  # hidden: not even Mirela
    assert "Borga" in knowers(page, seed.secret_fact) and "Mirela" in knowers(
        page, seed.secret_fact)  # secret: the NPCs it names
    r = await dm(f"/secrets/{seed.hidden_fact}/reveal", {"to": ["borga"]})
    assert r.status_code == 200
    told = knowers(r.text, seed.hidden_fact)
    assert "Borga" in told and "Mirela" not in told
    r = await dm(f"/secrets/{seed.hidden_fact}/reveal", {"everyone": "1"})
    assert r.status_code == 200 and f'id="secret-{seed.hidden_fact}"' not in r.text  # public
    r = await dm(f"/secrets/{seed.secret_fact}/visibility", {"visibility": "hidden"})
    assert "nobody" in knowers(r.text, seed.secret_fact)
    bad = await dm(f"/secrets/{seed.secret_fact}/visibility", {"visibility": "everyone"})
    assert bad.status_code == 422 and "visibility" in bad.json()["detail"]
    assert (await dm(f"/secrets/{seed.secret_fact}/reveal", {"to": ["nobody-here"]})
            ).status_code == 404


async def test_recall_preview_sees_as_the_npc(client: httpx.AsyncClient, seed: Seed) -> None:
    c = f"/dashboard/c/{seed.campaign_id}"

    async def recall(npc: str) -> str:
        r = await client.get(f"{c}/npcs/{npc}/recall",
                             params={"q": "Borga Mirela", "session": seed.live})
        assert r.status_code == 200, r.text
        return r.text

    assert "Borga distrusts Mirela Quickfingers (SECRET" in await recall("borga")
    assert "distrusts" not in await recall("thaldrin")  # not party to the secret
    r = await client.get(f"{c}/npcs/borga/recall", params={"q": "x", "tool": "memory.write"})
    assert r.status_code == 422


async def test_graph_filters(client: httpx.AsyncClient, seed: Seed) -> None:
    url = f"/dashboard/c/{seed.campaign_id}/graph.json"

    async def edges(**params: Any) -> set[str]:
        r = await client.get(url, params=params)
        assert r.status_code == 200, r.text
        return {e["data"]["label"] for e in r.json()["edges"]}

    assert await edges() == {"works at", "stole", "distrusts"}  # the DM: all canon facts
    assert await edges(npc="thaldrin") == {"works at"}
    assert await edges(npc="borga") == {"works at", "distrusts"}
    assert await edges(type=["npc", "place"]) == {"works at", "distrusts"}
    assert await edges(session="nope") == set()
    r = await client.get(url, params={"type": ["place"]})
    assert {n["data"]["type"] for n in r.json()["nodes"]} == {"place"}
    assert (await client.get(url, params={"type": [""]})).json() == {"nodes": [], "edges": []}
    assert (await client.get(url, params={"npc": "sunblade"})).status_code == 422


async def test_spellings_the_pipeline_heard_are_accepted_or_dismissed_on_the_review_page(
    client: httpx.AsyncClient, seed: Seed, dm: Any, dash_service: Any
) -> None:
    from glyphoxa_pipelines.memory import KnowledgeGraph
    from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import suggest_spellings_op

    offered = await dash_service.run(suggest_spellings_op(
        seed.campaign_id, seed.ended,
        {"thaldrin": ["Taldrin", "Thal"], "tankard": ["Gilded Tankerd"], "nobody": ["Nobody"]}))
    assert offered == 2  # "Thal" is an alias already; "nobody" is no entity
    page = (await client.get(f"/dashboard/c/{seed.campaign_id}/review")).text
    assert "Taldrin" in page and "Gilded Tankerd" in page and "Thaldrin Ashvale" in page
    queue = (await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue")).json()
    assert sorted((s["entity_id"], s["spelling"]) for s in queue["spellings"]) == [
        ("tankard", "Gilded Tankerd"), ("thaldrin", "Taldrin")]

    r = await dm("/review/spellings/thaldrin/accept", {"spelling": "taldrin", "row": "1"})
    assert r.status_code == 200 and "Taldrin is now an alias of Thaldrin Ashvale" in r.text
    assert 'id="spelling-1"' in r.text
    ent = await dash_service.run(KnowledgeGraph.get_entity.op(
        dash_service.graph, seed.campaign_id, "thaldrin"))
    assert ent.aliases == ["Thal", "Taldrin"]
    r = await client.post(f"/v1/campaigns/{seed.campaign_id}/entities/tankard/spellings/dismiss",
                          json={"spelling": "gilded tankerd"})
    assert r.status_code == 200 and r.json()["spelling"] == "Gilded Tankerd"
    queue = (await client.get(f"/v1/campaigns/{seed.campaign_id}/review-queue")).json()
    assert queue["spellings"] == []
    assert "No new spellings" in (await client.get(f"/dashboard/c/{seed.campaign_id}/review")).text
    # The same session reprocessed offers neither again: one is an alias, one dismissed.
    assert await dash_service.run(suggest_spellings_op(
        seed.campaign_id, seed.ended, {"thaldrin": ["Taldrin"], "tankard": ["Gilded Tankerd"]})
    ) == 0
    # Nothing waits under that name now: a clear 404, and a blank spelling is refused.
    again = await dm("/review/spellings/thaldrin/accept", {"spelling": "Taldrin", "row": "1"})
    assert again.status_code == 404 and "Taldrin" in again.json()["detail"]
    blank = await dm("/review/spellings/thaldrin/dismiss", {"spelling": " ", "row": "1"})
    assert blank.status_code == 422
    bad = await dm("/review/spellings/thaldrin/keep", {"spelling": "Taldrin", "row": "1"})
    assert bad.status_code == 422
    api = f"/v1/campaigns/{seed.campaign_id}/entities/thaldrin/spellings/accept"
    for spelling in ("Tal\x00drin", "T" * 201):  # a NUL byte, longer than any name: refused
        refused = await client.post(api, json={"spelling": spelling})
        assert refused.status_code == 422 and "spelling" in refused.text
    # the pipeline's offer skips what no name may be, and the rest of its offer lands
    assert await dash_service.run(suggest_spellings_op(
        seed.campaign_id, seed.ended, {"mirela": ["M" * 201, " ", "Mirella"]})) == 1
    ent = await dash_service.run(KnowledgeGraph.get_entity.op(
        dash_service.graph, seed.campaign_id, "thaldrin"))
    assert ent.aliases == ["Thal", "Taldrin"]  # nothing refused was written
