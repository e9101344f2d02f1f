"""Pre-fetch triggers (names, aliases, misheard names, temporal cues) and injection of the
pre-fetched results into the next hot context."""

from __future__ import annotations

import httpx

from glyphoxa_pipelines.processing.mentions import MentionFinder
from realtime.prefetch import PrefetchCache, Prefetched, Trigger, detect

FINDER = MentionFinder({"Thaldrin Ashvale": "thaldrin", "Thaldrin": "thaldrin",
                        "Iron Circle": "iron-circle", "Sunblade": "sunblade"})


def test_entity_triggers_whole_word_case_insensitive() -> None:
    got = detect("have you seen THALDRIN or the iron circle's men?", FINDER)
    assert [(t.kind, t.key) for t in got] == [("entity", "thaldrin"), ("entity", "iron-circle")]
    assert detect("Thaldrins are not a thing, sunblades neither", FINDER) == []
    assert detect("nothing here at all", FINDER) == []


def test_temporal_cues_fire_a_topic_search() -> None:
    for text, topic in (
        ("Do you remember the wolves on the north road?", "the wolves on the north road"),
        ("what did we buy last time in the dwarf city", "we buy in the dwarf city"),
        ("When did Mira leave the guild?", "Mira leave the guild"),
        ("When did we meet the merchant", "meet the merchant"),
        ("Previously, the caravan was attacked", "the caravan was attacked"),
    ):
        got = [t for t in detect(text, FINDER) if t.kind == "memory"]
        assert [t.key for t in got] == [topic], text
    assert [t for t in detect("do you remember?", FINDER) if t.kind == "memory"] == []
    assert [t for t in detect("I like the north road", FINDER) if t.kind == "memory"] == []


def test_a_long_speech_makes_a_valid_search_of_the_cue_sentence() -> None:
    """A cue inside a long DM speech: the topic is the cue's sentence, within the search
    tool's query limit (a longer one failed validation and lost the pre-fetch)."""
    from realtime.prefetch.triggers import MAX_TOPIC_CHARS
    from realtime.tools.args import SearchSessionsArgs

    filler = "The rain keeps falling on the slate roofs of the old harbour town. " * 12
    speech = filler + "Do you remember the smugglers tunnel under the lighthouse? " + filler
    (trig,) = detect(speech, None)
    assert trig.kind == "memory" and trig.key == "the smugglers tunnel under the lighthouse"
    endless = "Do you remember " + "the long grey road " * 60
    (trig,) = detect(endless, None)
    assert 0 < len(trig.key) <= MAX_TOPIC_CHARS and trig.key.startswith("the long grey road")
    assert not trig.key.endswith(" ro")  # cut at a word
    SearchSessionsArgs(query=trig.key)  # a valid search
    short = detect("Last time, what happened at the mill?", None)
    assert short[0].key == "at the mill"  # short partials keep their whole topic


def test_cache_ttl_and_visibility() -> None:
    cache = PrefetchCache(ttl_s=60)
    trig = Trigger("entity", "x", "X")
    cache.put("s", Prefetched(trig, "", ["public"], fetched_at=__import__("time").monotonic()))
    cache.put("s", Prefetched(trig, "npc-a", ["a-only"],
                              fetched_at=__import__("time").monotonic()))
    assert [i.memories for i in cache.get("s", "npc-a")] == [["a-only"], ["public"]]
    assert [i.memories for i in cache.get("s", "npc-b")] == [["public"]]
    assert cache.fresh("s", trig, "npc-a") and not cache.fresh("s", trig, "npc-b")
    cache.put("s", Prefetched(Trigger("entity", "y", "Y"), "", ["old"], fetched_at=0.0))
    assert all(i.trigger.key != "y" for i in cache.get("s", "npc-b"))


async def test_partial_prefetch_lands_in_next_context(rt_client: httpx.AsyncClient, rt_seed, rt_service) -> None:  # type: ignore[no-untyped-def]
    sid = rt_seed.live_session
    # a misheard name still fires (phonetic correction runs first)
    r = await rt_client.post(f"/v1/sessions/{sid}/partials",
                             json={"text": "hey borga, do you remember the tunnel map we bought"})
    assert r.status_code == 200
    kinds = {(t["kind"], t["key"]) for t in r.json()["triggers"]}
    assert ("entity", "borga") in kinds
    assert any(k == "memory" for k, _ in kinds)
    await rt_service.wait_prefetch(sid, 5.0)
    ctx = (await rt_client.get(f"/v1/sessions/{sid}/npcs/thaldrin/context")).json()
    kinds = {m["kind"] for m in ctx["memories"]}
    assert {"entity", "chunk"} <= kinds
    chunk = next(m for m in ctx["memories"] if m["kind"] == "chunk")
    assert chunk["source"]["session_id"] in rt_seed.past_sessions
    assert "## What you recall" in ctx["prompt"]
    # the same partial again is deduplicated (fetched once per turn)
    r = await rt_client.post(f"/v1/sessions/{sid}/partials",
                             json={"text": "hey borga, do you remember the tunnel map we bought"})
    again = r.json()["triggers"]
    assert again and not any(t["scheduled"] for t in again)  # detected, not fetched again


async def test_misheard_name_triggers(rt_client: httpx.AsyncClient, rt_seed) -> None:  # type: ignore[no-untyped-def]
    r = await rt_client.post(f"/v1/sessions/{rt_seed.live_session}/partials",
                             json={"text": "where is the sun blade now"})
    assert ("entity", "sunblade") in {(t["kind"], t["key"]) for t in r.json()["triggers"]}
