"""The service's per-process state stays bounded, and big correction batches leave the event
loop free (issue: a 10 x 150k-character batch stalled /healthz for seconds)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import httpx

from glyphoxa_pipelines.memory import NewEntry
from realtime import transcript_writer
from realtime.recent_utterances import MAX_LINE_CHARS, RecentUtterances


def _entry(key: str, text: str) -> NewEntry:
    return NewEntry(idempotency_key=key, text=text, speaker_name="Ana", speaker_role="player")


def test_recent_utterances_forget_the_least_recent_session_and_cut_long_lines() -> None:
    recent = RecentUtterances(limit=3, max_sessions=2)
    recent.remember("a", [_entry("a1", "hello")])
    recent.remember("b", [_entry("b1", "x" * (MAX_LINE_CHARS * 5))])
    recent.remember("a", [_entry("a2", "again")])  # a is now the most recent
    recent.remember("c", [_entry("c1", "third")])  # evicts b, not a
    assert [r["text"] for r in recent.of("a")] == ["hello", "again"]
    assert list(recent.of("b")) == []
    assert [r["text"] for r in recent.of("c")] == ["third"]
    recent.remember("c", [_entry("c2", "y" * (MAX_LINE_CHARS + 10))])
    assert len(list(recent.of("c"))[-1]["text"]) == MAX_LINE_CHARS


async def test_big_batch_is_corrected_off_the_event_loop(
    rt_client: httpx.AsyncClient, rt_seed: Any, monkeypatch: Any
) -> None:
    threads: list[int] = []
    real = transcript_writer.correct

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(transcript_writer, "correct", recording)
    # A session of its own in the seeded campaign (its names drive correction), so the seed's
    # live transcript that other tests read stays as it was.
    cid = rt_seed.campaign_id
    r = await rt_client.post(f"/v1/campaigns/{cid}/sessions",
                             json={"session_id": f"{cid}-bounds-{uuid.uuid4().hex[:6]}"})
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    loop_thread = threading.get_ident()
    small = {"idempotency_key": uuid.uuid4().hex, "text": "Thaldrin nods."}
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json={"entries": [small]})
    assert r.status_code == 201, r.text
    assert threads == [loop_thread]  # live speech: corrected inline

    threads.clear()
    words = "the smith Thaldrin speaks " * (transcript_writer.INLINE_CORRECTION_CHARS // 20)
    big = [{"idempotency_key": uuid.uuid4().hex, "text": words} for _ in range(2)]
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json={"entries": big})
    assert r.status_code == 201, r.text
    assert r.json()["written"] == 2
    assert len(threads) == 2 and loop_thread not in threads
