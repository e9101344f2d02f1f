"""Budget tiers from measured latencies, and the per-turn tier selector."""

from __future__ import annotations

from realtime import tools as tl
from realtime.tools.tiers import SMOOTH_WINDOW


def test_tiers_follow_measured_p50() -> None:
    lat = tl.LatencyTracker()
    fast = {s.name for s in tl.tools_for_tier(tl.Tier.FAST, lat)}
    assert fast == {"memory.query_entities", "memory.get_session_summary",
                    "memory.get_recap", "memory.search_facts"}  # priors
    assert {s.name for s in tl.tools_for_tier(tl.Tier.STANDARD, lat)} == set(tl.TOOLS)
    for _ in range(20):
        lat.record("memory.search_sessions", 4.0)
        lat.record("memory.search_facts", 80.0)
    fast = {s.name for s in tl.tools_for_tier(tl.Tier.FAST, lat)}
    assert "memory.search_sessions" in fast and "memory.search_facts" not in fast
    standard = {s.name for s in tl.tools_for_tier(tl.Tier.STANDARD, lat)}
    assert "memory.search_facts" not in standard
    assert {s.name for s in tl.tools_for_tier(tl.Tier.DEEP, lat)} == set(tl.TOOLS)
    snap = lat.snapshot()["memory.search_sessions"]
    assert snap["n"] == 20 and snap["p50_ms"] == 4.0


def _fast(lat: tl.LatencyTracker) -> set[str]:
    return {s.name for s in tl.tools_for_tier(tl.Tier.FAST, lat)}


def test_one_slow_sample_moves_no_tool() -> None:
    lat = tl.LatencyTracker()
    before = _fast(lat)
    lat.record("memory.search_facts", 900.0)
    lat.record("memory.get_session_summary", 900.0)
    assert _fast(lat) == before
    for _ in range(3):  # sustained: the smoothed p50 follows, and the tool leaves
        lat.record("memory.search_facts", 900.0)
    assert "memory.search_facts" not in _fast(lat)


def test_membership_has_hysteresis() -> None:
    lat = tl.LatencyTracker()
    name = "memory.search_facts"  # budget 10 ms: leaves above 12.5, comes back at 8 or less
    for _ in range(40):
        lat.record(name, 11.5)  # over budget, inside the band: stays
    assert name in _fast(lat)
    for _ in range(40):
        lat.record(name, 14.0)
    assert name not in _fast(lat)
    for _ in range(40):
        lat.record(name, 9.0)  # under budget, inside the band: stays out
    assert name not in _fast(lat)
    for _ in range(40):
        lat.record(name, 6.0)
    assert name in _fast(lat)


def test_fast_always_offers_query_entities() -> None:
    lat = tl.LatencyTracker()
    for _ in range(64):
        lat.record("memory.query_entities", 400.0)
    assert lat.p50("memory.query_entities") == 400.0
    for tier in tl.Tier:
        assert "memory.query_entities" in {s.name for s in tl.tools_for_tier(tier, lat)}


async def test_a_tool_outside_the_tier_is_refused(rt_client, rt_seed, rt_service) -> None:  # type: ignore[no-untyped-def]
    for _ in range(SMOOTH_WINDOW):  # the shared service: slow now, whatever ran before
        rt_service.latencies.record("memory.search_graph", 500.0)
    call = {"campaign_id": rt_seed.campaign_id, "npc_id": "borga", "tier": "FAST"}
    r = await rt_client.post("/v1/tools/memory.search_graph",
                             json={**call, "arguments": {"query": "Sunblade", "entity": "borga"}})
    body = r.json()
    assert r.status_code == 200 and body["status"] == "refused" and body["results"] == []
    assert "FAST" in body["error"] and "memory.query_entities" in body["error"]
    r = await rt_client.post("/v1/tools/memory.query_entities",
                             json={**call, "arguments": {"name": "Borga"}})
    assert r.json()["status"] == "ok"
    r = await rt_client.post("/v1/tools/memory.search_graph",  # DEEP offers it
                             json={**call, "tier": "DEEP",
                                   "arguments": {"query": "Sunblade", "entity": "borga"}})
    assert r.json()["status"] == "ok"


def test_selector_precedence() -> None:
    sel = tl.select_tier
    assert sel().tier is tl.Tier.FAST
    assert sel(first_turn=True) == tl.TierDecision(tl.Tier.STANDARD, "first_turn")
    assert sel(utterance="Tell me everything about the war").tier is tl.Tier.DEEP
    assert sel(utterance="tell me everything", queue_depth=3).reason == "queue_depth"
    assert sel(utterance="tell me everything", dm_override="fast").tier is tl.Tier.FAST
    assert sel(queue_depth=5, dm_override=tl.Tier.DEEP).reason == "dm_override"
    assert sel(utterance="hello there", first_turn=False).reason == "default"


async def test_context_reports_tier(rt_client, rt_seed) -> None:  # type: ignore[no-untyped-def]
    url = f"/v1/sessions/{rt_seed.live_session}/npcs/borga/context"
    r = (await rt_client.get(url, params={"utterance": "explain in detail what happened"}))
    tools = r.json()["tools"]
    assert tools["tier"] == "DEEP" and set(tools["names"]) == set(tl.TOOLS)
    r = await rt_client.get(url, params={"queue_depth": 4})
    assert r.json()["tools"]["tier"] == "FAST"
    r = await rt_client.get(url, params={"tier": "STANDARD"})
    assert r.json()["tools"]["reason"] == "dm_override"


def test_validate_reports_every_problem() -> None:
    try:
        tl.validate("memory.search_facts", {"limit": 0, "relation": "???", "x": 1})
    except tl.ToolInputError as exc:
        fields = {p.split(":")[0] for p in exc.problems}
        assert fields == {"limit", "relation", "x"}
    else:
        raise AssertionError("expected ToolInputError")
