"""The loop's L1 writes off the turn's path (`realtime/voice/l1_writer.py`), on the real
service and database: stored one at a time in the order they were said, a failed store left
to the Consolidator (nothing lost, nothing written twice), the turn not waiting for the
insert, and the next turn's hot context seeing the earlier lines even when a store is slow."""

from __future__ import annotations

import asyncio
from typing import Any

from glyphoxa_pipelines.memory import SessionStore
from realtime.transcript_writer import PreparedWrite
from realtime.voice.audio import BufferSink, WavSource
from realtime.voice.chat import OpenAIChat
from realtime.voice.consolidator import Consolidator, entry_for
from realtime.voice.context_manager import ContextManager
from realtime.voice.l1_writer import L1Writer
from realtime.voice.loop import VoiceConfig, VoiceLoop
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign
from tests.voice.scripted import ScriptedRecognizer, Silent, two_utterances


class RecordingStore:
    """The real service's store; the first call held back `delay_s`, the keys in `fail`
    refused; when each store started and finished is recorded."""

    def __init__(self, service: Any, *, delay_s: float = 0.0, fail: frozenset[str] = frozenset()
                 ) -> None:
        self.service = service
        self.delay_s = delay_s
        self.fail = fail
        self.started: list[str] = []
        self.finished: list[str] = []

    async def store_entries(self, prepared: PreparedWrite) -> dict[str, Any]:
        key = prepared.entries[0].idempotency_key
        self.started.append(key)
        if len(self.started) == 1:
            await asyncio.sleep(self.delay_s)
        if key in self.fail:
            raise RuntimeError(f"store of {key} refused")
        out = await self.service.store_entries(prepared)
        self.finished.append(key)
        return out


def _conversation(lines: list[tuple[str, str]]) -> ContextManager:
    cm = ContextManager(8_192)
    for role, text in lines:
        cm.add(role, text, speaker_id="thaldrin" if role == "npc" else "ana",  # type: ignore[arg-type]
               speaker_name="Ana", npc_id="thaldrin")
    return cm


LINES = [("player", "Where is the Sunblade kept?"),
         ("npc", "In the crypt below the temple."),
         ("player", "Then we go tonight.")]


async def test_stores_run_one_at_a_time_in_the_order_said(
    voice_service: Any, voice_campaign: VoiceCampaign, db: Any,
) -> None:
    sid = voice_campaign.session_id
    cm = _conversation(LINES)
    store = RecordingStore(voice_service, delay_s=0.3)  # the first store is slow
    writer = L1Writer(store)
    keys = []
    for message in cm.since(0):
        prepared = await voice_service.prepare_entries(sid, [entry_for(message)])
        writer.submit(prepared, message)
        keys.append(message.idempotency_key)
    assert writer.pending == 3
    await writer.flush()
    # a writer that stored concurrently would finish the quick ones before the slow first
    assert store.started == keys and store.finished == keys
    assert writer.pending == 0 and writer.stored == 3 and writer.failed == 0
    assert all(m.in_l1 for m in cm.since(0))
    assert [e.text for e in SessionStore(db).get_entries(sid)] == [t for _, t in LINES]
    await writer.close()


async def test_a_failed_store_is_left_to_the_consolidator(
    voice_service: Any, voice_campaign: VoiceCampaign, db: Any,
) -> None:
    sid = voice_campaign.session_id
    cm = _conversation(LINES)
    messages = cm.since(0)
    store = RecordingStore(voice_service, fail=frozenset({messages[1].idempotency_key}))
    writer = L1Writer(store)
    for message in messages:
        writer.submit(await voice_service.prepare_entries(sid, [entry_for(message)]), message)
    await writer.close()
    assert [m.in_l1 for m in messages] == [True, False, True]
    assert writer.failed == 1 and writer.stored == 2
    assert len(SessionStore(db).get_entries(sid)) == 2

    consolidator = Consolidator(voice_service, sid, cm)
    assert await consolidator.consolidate_now() == 1  # only the one the queue did not store
    texts = sorted(e.text for e in SessionStore(db).get_entries(sid))
    assert texts == sorted(t for _, t in LINES)  # every line, once


async def test_the_turn_does_not_wait_for_the_insert_and_the_next_one_sees_it(
    voice_service: Any, voice_campaign: VoiceCampaign, chat_stub: StreamingChatStub, db: Any,
) -> None:
    audio = two_utterances()
    chat_stub.respond = lambda body: {"content": "Aye, that I do."}
    loop = VoiceLoop(voice_service, VoiceConfig(voice_campaign.session_id, "thaldrin",
                                                partial_every_s=0),
                     stt=ScriptedRecognizer(["Have you seen Mirela today?",
                                             "Where did she go after that?"]),
                     chat=OpenAIChat("stub", base_url=chat_stub.base_url), tts=Silent(),
                     sink=BufferSink())
    store = RecordingStore(voice_service, delay_s=0.5)  # turn 1's line takes 0.5 s to store
    loop.l1 = L1Writer(store)
    first, second = await loop.run(WavSource(audio, speaker_id="ana", speaker_name="Ana"))

    t1 = first.timings
    assert t1["hot_context"] <= t1["first_token"] < t1["l1_written"]
    assert t1["l1_written"] - t1["hot_context"] >= 400  # the model did not wait for it
    # turn 2's hot context waited for turn 1's line and reply to be stored: both are there
    prompt = chat_stub.requests[1]["messages"][0]["content"]
    assert "Have you seen Mirela today?" in prompt and "Aye, that I do." in prompt
    rows = [(e.speaker_role, e.text) for e in SessionStore(db).get_entries(
        voice_campaign.session_id)]
    assert rows == [("player", "Have you seen Mirela today?"), ("npc", "Aye, that I do."),
                    ("player", "Where did she go after that?"), ("npc", "Aye, that I do.")]
    assert loop.consolidator.written == 0  # the queue stored everything: nothing twice
