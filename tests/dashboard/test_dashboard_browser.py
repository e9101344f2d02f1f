"""The DM's main flows in a real browser (Debian's chromium through Playwright) against the
real service and database: confirm a fact and see it in the next hot context, reveal a secret,
play a recap, launch a reprocess, search entities, filter the graph."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.dashboard_support import TOKEN, LiveServer, Seed

pytestmark = pytest.mark.browser


def _hot_context(page: Any, server: LiveServer, seed: Seed, npc: str) -> str:
    page.goto(f"{server.url}/dashboard/c/{seed.campaign_id}/npcs/{npc}?session={seed.live}")
    return page.locator("#hot-context").inner_text()


def test_login_is_asked_for_and_remembered(
    anonymous_page: Any, live_server: LiveServer, seed: Seed
) -> None:
    page = anonymous_page
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}")
    assert page.url == f"{live_server.url}/dashboard/login"
    page.get_by_label("Token").fill("not-the-token")
    page.get_by_role("button", name="Log in").click()
    assert "not the service" in page.locator("#login-error").inner_text()
    page.get_by_label("Token").fill(TOKEN)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/dashboard/")
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}")
    assert "Night 1" in page.locator("#timeline").inner_text()
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["glyphoxa_dash"]["httpOnly"] and cookies["glyphoxa_dash"]["sameSite"] == "Strict"
    assert TOKEN not in cookies["glyphoxa_dash"]["value"]


def test_confirm_a_fact_and_see_it_in_the_next_hot_context(
    page: Any, live_server: LiveServer, seed: Seed
) -> None:
    assert "owes debt to" not in _hot_context(page, live_server, seed, "thaldrin")
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}/review")
    row = page.locator(f"#fact-{seed.pending_fact}")
    assert "owes debt to" in row.inner_text()
    row.locator("button.confirm").click()
    page.locator(f"#fact-{seed.pending_fact} .badge").filter(has_text="confirmed").wait_for()
    assert "Thaldrin Ashvale owes debt to Borga" in _hot_context(page, live_server, seed,
                                                                 "thaldrin")


def test_reveal_a_secret(page: Any, live_server: LiveServer, seed: Seed) -> None:
    assert "stole" not in _hot_context(page, live_server, seed, "borga")
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}/secrets")
    row = page.locator(f"#secret-{seed.hidden_fact}")
    assert "nobody" in row.locator(".knowers").inner_text()
    row.get_by_label("Borga").check()
    row.locator("button.reveal").click()
    page.locator(f"#secret-{seed.hidden_fact} .knowers").filter(has_text="Borga").wait_for()
    told = _hot_context(page, live_server, seed, "borga")
    assert "Mirela Quickfingers stole Sunblade (SECRET: do not reveal)" in told
    assert "stole" not in _hot_context(page, live_server, seed, "thaldrin")


def test_play_a_recap(page: Any, live_server: LiveServer, seed: Seed) -> None:
    audio_url = f"/dashboard/c/{seed.campaign_id}/s/{seed.ended}/recap/audio"
    with page.expect_response(lambda r: r.url.endswith(audio_url)) as response:
        # the player loads the audio's metadata with the page
        page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}/s/{seed.ended}")
    assert "Previously: the Sunblade vanished." in page.locator("#recap-text").inner_text()
    played = page.evaluate(
            """async () => {
                 const a = document.getElementById("recap-audio");
                 a.muted = true;  // muted playback needs no user gesture
                 await a.play();
                 await new Promise((done) => a.addEventListener("ended", done, {once: true}));
                 return {src: a.currentSrc, duration: a.duration, time: a.currentTime};
               }"""
    )
    assert response.value.status in (200, 206)
    assert response.value.headers["content-type"].startswith("audio/")
    assert played["src"].endswith(audio_url)
    assert played["duration"] == pytest.approx(0.5, abs=0.05) and played["time"] > 0.4


def test_reprocess_launches_the_backfill_command(
    page: Any, live_server: LiveServer, seed: Seed
) -> None:
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}")
    page.get_by_role("button", name="Reprocess the campaign (Dagster backfill)").click()
    page.locator("#launch-ok").wait_for()
    assert live_server.reprocess_log.read_text() == f"backfill --campaign {seed.campaign_id}"
    assert "backfill recorded" in page.locator("#launch-output").inner_text()


def test_search_entities_in_place(page: Any, live_server: LiveServer, seed: Seed) -> None:
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}/entities")
    assert "Mirela Quickfingers" in page.locator("#entities").inner_text()
    page.locator("#q").fill("quick")
    page.locator("#entities").filter(has_not_text="Thaldrin").wait_for()
    assert "Mirela Quickfingers" in page.locator("#entities").inner_text()


def test_the_graph_picture_filters_by_npc(page: Any, live_server: LiveServer, seed: Seed) -> None:
    page.goto(f"{live_server.url}/dashboard/c/{seed.campaign_id}/graph")
    page.wait_for_function("window.glyphoxaGraph && window.glyphoxaGraph.edges().length === 4")
    labels = page.evaluate("window.glyphoxaGraph.edges().map((e) => e.data('label')).sort()")
    assert labels == ["distrusts", "stole", "works at", "works at"]
    page.get_by_label("as NPC").select_option("thaldrin")
    # Thaldrin sees the public facts only: not the theft (hidden) nor Borga's distrust
    # (a secret between Borga and Mirela)
    page.wait_for_function("window.glyphoxaGraph.edges().length === 2")
    labels = page.evaluate("window.glyphoxaGraph.edges().map((e) => e.data('label'))")
    assert labels == ["works at", "works at"]
    assert "2 facts" in page.locator("#graph-count").inner_text()
