"""Every page renders from the real database through the in-process app, and each edit lands
through the API's own operations (seen through the JSON API afterwards)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.dashboard.dashboard_support import Seed


def csrf(page_html: str) -> str:
    found = re.search(r'"X-CSRF-Token": "([^"]+)"', page_html)
    assert found, "the page carries no CSRF token"
    return found.group(1)


async def _get(client: httpx.AsyncClient, path: str) -> httpx.Response:
    r = await client.get(path)
    assert r.status_code == 200, (path, r.status_code, r.text[:500])
    return r


async def test_every_page_renders(client: httpx.AsyncClient, seed: Seed) -> None:
    c = f"/dashboard/c/{seed.campaign_id}"
    index = await _get(client, "/dashboard/")
    assert seed.campaign_id in index.text
    timeline = (await _get(client, c)).text
    assert timeline.index("Night 1") < timeline.index("Night 2")  # oldest first
    session = (await _get(client, f"{c}/s/{seed.ended}")).text
    assert "The party met Thaldrin at the inn." in session
    assert "Previously: the Sunblade vanished." in session
    assert f'src="{c}/s/{seed.ended}/recap/audio"' in session
    audio = await client.get(f"{c}/s/{seed.ended}/recap/audio")
    assert audio.status_code == 200 and audio.content == seed.audio.read_bytes()
    assert "No recap yet" in (await _get(client, f"{c}/s/{seed.live}")).text
    review = (await _get(client, f"{c}/review")).text
    assert f'id="fact-{seed.pending_fact}"' in review and "owes debt to" in review
    entities = (await _get(client, f"{c}/entities?q=thal")).text
    assert "Thaldrin Ashvale" in entities and "Mirela" not in entities
    entity = (await _get(client, f"{c}/entities/thaldrin")).text
    assert "role: smith" in entity and "works at" in entity
    secrets = (await _get(client, f"{c}/secrets")).text
    assert f'id="secret-{seed.hidden_fact}"' in secrets
    assert f'id="secret-{seed.public_fact}"' not in secrets
    npc = (await _get(client, f"{c}/npcs/thaldrin")).text
    assert "Thaldrin Ashvale works at Gilded Tankard" in npc
    assert "owes debt" not in npc  # pending: not known yet
    graph = (await _get(client, f"{c}/graph")).text
    assert "cytoscape-3.34.4.min.js" in graph


async def test_the_preview_is_not_one_of_the_npcs_turns(
    client: httpx.AsyncClient, seed: Seed, dash_service: Any
) -> None:
    r = await client.get(f"/dashboard/c/{seed.campaign_id}/npcs/borga?session={seed.live}")
    assert r.status_code == 200 and "Borga distrusts Mirela Quickfingers" in r.text
    assert dash_service.turn_count(seed.live, "borga") == 0
    await dash_service.hot_context(seed.live, "borga")  # a real turn still counts
    assert dash_service.turn_count(seed.live, "borga") == 1


async def test_unknown_things_are_404(client: httpx.AsyncClient, seed: Seed) -> None:
    c = f"/dashboard/c/{seed.campaign_id}"
    for path in ("/dashboard/c/no-such-campaign", f"{c}/s/nope", f"{c}/entities/nope",
                 f"{c}/npcs/nope", f"/dashboard/c/other/s/{seed.ended}"):
        r = await client.get(path)
        assert r.status_code == 404, path
    r = await client.get(f"{c}/npcs/tankard")
    assert r.status_code == 422 and "not an NPC" in r.json()["detail"]
