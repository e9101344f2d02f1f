"""The session lifecycle: the ContextManager compacts at 75 % of the window into ordered
summaries, the Consolidator writes what is not yet in L1 on a (fake) clock and at shutdown,
once, on the real service and database, and the VoiceLoop carries its history through both."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from glyphoxa_pipelines.memory import SessionStore
from realtime.voice.audio import BufferSink, WavSource
from realtime.voice.chat import OpenAIChat
from realtime.voice.consolidator import Consolidator
from realtime.voice.context_manager import SUMMARY_PREFIX, ContextManager, estimate_tokens
from realtime.voice.loop import VoiceConfig, VoiceLoop
from realtime.voice.summarizer import ChatSummarizer, ExtractiveSummarizer
from tests.support.openai_stub import OpenAIStub
from tests.voice.chat_stub import StreamingChatStub
from tests.voice.conftest import VoiceCampaign
from tests.voice.scripted import ScriptedRecognizer, Silent, two_utterances


class CountingSummarizer:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def summarize(self, messages: Sequence[dict[str, Any]]) -> str:
        self.calls.append([m["content"] for m in messages])
        return f"summary {len(self.calls)}"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_tokens_are_four_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


async def test_compacts_the_oldest_half_at_75_percent_and_summaries_accumulate() -> None:
    summarizer = CountingSummarizer()
    cm = ContextManager(100, summarizer=summarizer)  # 75 tokens = 300 characters
    for i in range(4):
        cm.add("player", f"{i}" * 60, speaker_name="Ana")  # 240 characters in all
    assert not await cm.compact_if_needed()
    cm.add("npc", "x" * 60)  # 300 characters: at the threshold
    assert await cm.compact_if_needed()
    assert summarizer.calls == [["Ana: " + "0" * 60, "Ana: " + "1" * 60]]
    assert [m.content[0] for m in cm.window] == ["2", "3", "x"]
    assert cm.tokens() < 75

    for i in range(5, 9):
        cm.add("player", f"{i}" * 60, speaker_name="Ana")
    assert await cm.compact_if_needed()
    assert cm.summaries == ["summary 1", "summary 2"]
    messages = cm.messages("You are Thaldrin.")
    assert messages[0] == {"role": "system", "content": "You are Thaldrin."}
    assert messages[1]["content"] == f"{SUMMARY_PREFIX}\n\nsummary 1\n\nsummary 2"
    assert messages[2]["role"] in {"user", "assistant"}
    assert {"role": "assistant", "content": "x" * 60} not in messages  # summarised away


async def test_system_prompt_counts_towards_the_window() -> None:
    cm = ContextManager(100, summarizer=CountingSummarizer())
    cm.add("player", "hello there")
    cm.add("npc", "well met")
    assert not await cm.compact_if_needed("short")
    assert await cm.compact_if_needed("h" * 300)


async def test_extractive_fallback_when_the_chat_server_fails() -> None:
    stub = OpenAIStub()
    try:
        stub.chat = lambda body: "Ana asked Thaldrin about the Sunblade."
        chat = ChatSummarizer("stub", base_url=stub.base_url)
        lines = [{"role": "user", "content": "Ana: Where is the Sunblade? It was stolen."},
                 {"role": "assistant", "content": "In the crypt. Go at dawn."}]
        assert await chat.summarize(lines) == "Ana asked Thaldrin about the Sunblade."
        assert "Ana: Where is the Sunblade?" in stub.requests[-1][1]["messages"][1]["content"]
        stub.fail_next = 1
        fallback = await chat.summarize(lines)
        assert fallback == "Ana: Where is the Sunblade?\nNPC: In the crypt."
        assert fallback == await ExtractiveSummarizer().summarize(lines)
    finally:
        stub.close()


async def test_consolidator_writes_on_the_clock_and_at_shutdown_once(
    voice_service: Any, voice_campaign: VoiceCampaign, db: Any,
) -> None:
    sid = voice_campaign.session_id
    clock = FakeClock()
    cm = ContextManager(60, summarizer=CountingSummarizer())
    consolidator = Consolidator(voice_service, sid, cm, interval_s=1800, clock=clock)
    cm.add("player", "I already went in inline.", speaker_id="ana", in_l1=True)
    cm.add("player", "Where is the Sunblade kept?", speaker_id="ana", speaker_name="Ana")
    cm.add("npc", "In the crypt below the temple.", speaker_id="thaldrin", npc_id="thaldrin")

    clock.now += 1799
    assert await consolidator.tick() == 0  # not yet due
    clock.now += 1
    assert await consolidator.tick() == 2
    assert await consolidator.tick() == 0  # the clock restarted with the run

    texts = [e.text for e in SessionStore(db).get_entries(sid)]
    assert texts == ["Where is the Sunblade kept?", "In the crypt below the temple."]
    npc = SessionStore(db).get_entries(sid)[1]
    assert npc.speaker_role == "npc" and npc.npc_id == "thaldrin"

    # more talk, compacted before the next run: the summary is not written, the lines are
    for i in range(4):
        cm.add("player", f"Line {i} about the road north and its many dangers.",
               speaker_id="ana")
    assert await cm.compact_if_needed()
    assert cm.summaries
    assert await consolidator.consolidate_now() == 4  # shutdown: no wait for the clock
    assert await consolidator.consolidate_now() == 0
    texts = [e.text for e in SessionStore(db).get_entries(sid)]
    assert len(texts) == 6 and len(set(texts)) == 6
    assert not any(t.startswith("summary") for t in texts)
    assert cm.since(0) == []  # the log is trimmed once written


async def test_the_loop_keeps_its_history_through_the_context_manager(
    voice_service: Any, voice_campaign: VoiceCampaign, chat_stub: StreamingChatStub, db: Any,
) -> None:
    audio = two_utterances()
    chat_stub.respond = lambda body: {"content": "Aye, that I do."}
    config = VoiceConfig(voice_campaign.session_id, "thaldrin", partial_every_s=0,
                         context_window_tokens=100)  # the instructions alone pass 75 %
    loop = VoiceLoop(voice_service, config,
                     stt=ScriptedRecognizer(["Have you seen Mirela today?",
                                             "Where did she go after that?"]),
                     chat=OpenAIChat("stub", base_url=chat_stub.base_url), tts=Silent(),
                     sink=BufferSink())
    results = await loop.run(WavSource(audio, speaker_id="ana", speaker_name="Ana"))

    assert [r.reply for r in results] == ["Aye, that I do.", "Aye, that I do."]
    first, second = (r["messages"] for r in chat_stub.requests)
    assert first[-1] == {"role": "user", "content": "Ana: Have you seen Mirela today?"}
    # turn 2: turn 1's player line summarised into the prefix, the reply and the new line kept
    assert second[1] == {"role": "system", "content":
                         f"{SUMMARY_PREFIX}\n\nAna: Have you seen Mirela today?"}
    assert second[2:] == [{"role": "assistant", "content": "Aye, that I do."},
                          {"role": "user", "content": "Ana: Where did she go after that?"}]
    # L1 once each: the inline writes, and nothing again from the consolidator at the end
    rows = [(e.speaker_role, e.text) for e in SessionStore(db).get_entries(
        voice_campaign.session_id)]
    assert sorted(rows) == sorted([("player", "Have you seen Mirela today?"),
                                   ("npc", "Aye, that I do."),
                                   ("player", "Where did she go after that?"),
                                   ("npc", "Aye, that I do.")])
