"""The live write path corrects each utterance in its session's scene (the names said in the
turns before it, and the speaker's own)."""

from __future__ import annotations

import uuid

import httpx


async def test_a_name_said_earlier_lets_its_mishearing_through(
    rt_client: httpx.AsyncClient, rt_seed  # type: ignore[no-untyped-def]
) -> None:
    sid = rt_seed.live_session
    key = "scene-" + uuid.uuid4().hex[:8]
    heard = {"text": "I thank borger for the help.", "speaker_name": "Ana", "role": "player",
             "word_confidences": [0.9, 0.9, 0.3, 0.9, 0.9, 0.9]}
    # "borger" is one sound from Borga: among all the campaign's names, not enough on its own
    r = await rt_client.post(f"/v1/sessions/{sid}/entries",
                             json=heard | {"idempotency_key": key + "-1"})
    assert r.status_code == 201, r.text
    assert r.json()["entries"][0]["text"] == heard["text"]
    r = await rt_client.post(f"/v1/sessions/{sid}/entries", json={
        "idempotency_key": key + "-2", "text": "Borga opens the door.", "speaker_name": "Matt",
        "role": "dm"})
    assert r.status_code == 201, r.text
    # once Borga was said, the same unsure word is Borga
    r = await rt_client.post(f"/v1/sessions/{sid}/entries",
                             json=heard | {"idempotency_key": key + "-3"})
    entry = r.json()["entries"][0]
    assert entry["text"] == "I thank Borga for the help."
    assert [c["method"] for c in entry["corrections"]] == ["context"]
