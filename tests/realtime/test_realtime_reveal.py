"""A fact hidden from all, the NPCs it names included, reaches an NPC's next hot context the
moment the DM reveals it (one call), and nobody else's."""

from __future__ import annotations

import httpx


async def _context_facts(client: httpx.AsyncClient, seed, npc: str) -> str:  # type: ignore[no-untyped-def]
    r = await client.get(f"/v1/sessions/{seed.live_session}/npcs/{npc}/context")
    assert r.status_code == 200, r.text
    return r.text


async def test_hidden_until_revealed(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    base = f"/v1/campaigns/{rt_seed.campaign_id}"
    r = await rt_client.post(f"{base}/facts", json={
        "source": "borga", "relation": "plots_against", "target": "thaldrin",
        "visibility": "hidden"})
    assert r.status_code in (200, 201), r.text
    fact = r.json()["id"]
    try:
        for npc in ("borga", "thaldrin", "mirela-quickfingers"):
            assert "plots against" not in await _context_facts(rt_client, rt_seed, npc)
        r = await rt_client.post(f"{base}/facts/{fact}/reveal", json={"to": ["thaldrin"]})
        assert r.status_code == 200 and r.json()["known_by"] == ["thaldrin"]
        told = await _context_facts(rt_client, rt_seed, "thaldrin")
        assert "Borga plots against Thaldrin Ashvale (SECRET" in told
        assert "plots against" not in await _context_facts(rt_client, rt_seed, "borga")
        r = await rt_client.post(f"{base}/facts/{fact}/reveal", json={"to": None})
        assert r.status_code == 200 and r.json()["visibility"] == "public"
        assert "plots against" in await _context_facts(rt_client, rt_seed, "borga")
        bad = await rt_client.post(f"{base}/facts/{fact}/reveal", json={"to": ["nobody"]})
        assert bad.status_code == 404
    finally:  # the seed is shared: the fact stops being true
        await rt_client.post(f"{base}/facts/{fact}/retcon", json={})
