"""Recaps out of the database: `GET /v1/sessions/{s}/recap` (text and audio) and the
`memory.get_recap` tool."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import Campaign, CampaignStore, Recap, RecapStore, SessionStore
from realtime.tools.tiers import SMOOTH_WINDOW

T0 = datetime(2024, 3, 1, 19, 0, tzinfo=UTC)
AUDIO = b"RIFF\x24\x00\x00\x00WAVEfmt fake recap audio"


@dataclass
class Recaps:
    campaign_id: str
    sessions: list[str]  # s1 (recap with audio), s2 (text only), s3 (live, none yet)


@pytest.fixture
def recaps(rt_db_url: str, tmp_path: Path) -> Recaps:
    cid = "recap-" + uuid.uuid4().hex[:8]
    audio = tmp_path / "s1.wav"
    audio.write_bytes(AUDIO)
    with Database(rt_db_url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, "Recaps"))
        log, store = SessionStore(db), RecapStore(db)
        ids = [
            log.start_session(cid, f"{cid}-s{i}", title=f"Night {i}",
                              started_at=T0 + timedelta(days=7 * i),
                              status="ended" if i < 3 else "live").id
            for i in (1, 2, 3)
        ]
        store.save(Recap(ids[0], cid, "Previously: the caravan burned.", str(audio), "llm"))
        store.save(Recap(ids[1], cid, "Previously: the party reached Kraghammer.", None, "llm"))
    return Recaps(cid, ids)


async def test_the_recap_route_serves_text_and_audio(
    rt_client: httpx.AsyncClient, recaps: Recaps
) -> None:
    s1, s2, s3 = recaps.sessions
    r = await rt_client.get(f"/v1/sessions/{s1}/recap")
    body = r.json()
    assert r.status_code == 200 and body["text"] == "Previously: the caravan burned."
    assert body["audio_url"] == f"/v1/sessions/{s1}/recap/audio"
    audio = await rt_client.get(body["audio_url"])
    assert audio.status_code == 200 and audio.content == AUDIO
    assert audio.headers["content-type"].startswith("audio/")
    r = await rt_client.get(f"/v1/sessions/{s2}/recap")
    assert r.status_code == 200 and r.json()["audio_url"] is None
    assert (await rt_client.get(f"/v1/sessions/{s2}/recap/audio")).status_code == 404
    r = await rt_client.get(f"/v1/sessions/{s3}/recap")
    assert r.status_code == 404 and "no recap yet" in r.json()["detail"]
    r = await rt_client.get("/v1/sessions/nope-at-all/recap")
    assert r.status_code == 404 and "unknown session" in r.json()["detail"]


async def test_the_get_recap_tool(rt_client: httpx.AsyncClient, recaps: Recaps, rt_seed,  # type: ignore[no-untyped-def]
                                  rt_service) -> None:
    s1, s2, s3 = recaps.sessions
    # Tier membership follows measured latency: on a loaded machine earlier calls may have
    # taken get_recap out of FAST. Pin its evidence so this checks the FAST contract.
    for _ in range(SMOOTH_WINDOW):
        rt_service.latencies.record("memory.get_recap", 1.0)

    async def call(session: str, *, bound: str | None = s3, campaign: str | None = None,
                   tier: str | None = "FAST") -> dict:  # type: ignore[type-arg]
        r = await rt_client.post("/v1/tools/memory.get_recap", json={
            "campaign_id": campaign, "session_id": bound, "tier": tier,
            "arguments": {"session": session}})
        assert r.status_code == 200, r.text
        return r.json()

    last = await call("last")  # FAST offers it: one primary-key read
    assert last["status"] == "ok" and last["count"] == 1
    assert last["results"][0]["text"] == "Previously: the party reached Kraghammer."
    assert last["results"][0]["source"]["session_id"] == s2
    named = (await call(s1))["results"][0]
    assert named["has_audio"] and named["source"]["title"] == "Night 1"
    assert (await call("current"))["results"] == []  # the live session has none yet
    # another campaign's session is as if it did not exist
    other = await call(s1, bound=None, campaign=rt_seed.campaign_id)
    assert other["status"] == "ok" and other["results"] == []
