"""Budget tiers from measured latencies, and the per-turn tier selector."""

from __future__ import annotations

from realtime import tools as tl


def test_tiers_follow_measured_p50() -> None:
    lat = tl.LatencyTracker()
    fast = {s.name for s in tl.tools_for_tier(tl.Tier.FAST, lat)}
    assert fast == {"memory.query_entities", "memory.get_session_summary",
                    "memory.search_facts"}  # priors
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
        tl.validate("memory.search_facts", {"limit": 0, "relation": "Bad Type", "x": 1})
    except tl.ToolInputError as exc:
        fields = {p.split(":")[0] for p in exc.problems}
        assert fields == {"limit", "relation", "x"}
    else:
        raise AssertionError("expected ToolInputError")
