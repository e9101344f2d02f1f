from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from glyphoxa_pipelines.campaign.transcript_import import import_transcript
from glyphoxa_pipelines.memory.models import Chunk, SessionSummary
from glyphoxa_pipelines.processing.chunking import chunk_transcript
from glyphoxa_pipelines.processing.recaps import recap_from_summary, recap_llm, third_person
from glyphoxa_pipelines.processing.summaries import summarize_session, summarize_session_llm
from glyphoxa_pipelines.providers.embeddings import SentenceTransformerEmbedder
from glyphoxa_pipelines.providers.llm import ChatLLM

START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)

SCENES = [
    "DM: You arrive at the gates of Thornwall, where the old wizard Eldrinax waits.\n"
    "Rook: Okay, I roll a d20 for perception, that's a natural 12 plus 3.\n"
    "Mira: Yeah, sure, whatever, my turn?",
    "DM: Eldrinax reveals that Lord Varkas betrayed the Silver Guard and stole the Moonstone.\n"
    "Rook: I roll for damage, 8 plus 4 points of damage.",
    "DM: The party decides to travel north to the ruins of Greyhollow before dawn.\n"
    "Mira: Okay okay, guys, I need a snack break.",
    "DM: In the ruins you defeat the ghouls and discover a letter sealed by Lord Varkas.\n"
    "Rook: Nat 20 on initiative!",
]


def chunks_of(texts: list[str]) -> list[Chunk]:
    return [
        Chunk(id=f"s1#{i:05d}", campaign_id="c1", session_id="s1", seq=i, text=t,
              start_at=START + timedelta(minutes=10 * i))
        for i, t in enumerate(texts)
    ]


def test_extractive_summary_prefers_story_over_table_talk() -> None:
    summary = summarize_session(chunks_of(SCENES), dm_names=["DM"], max_points=4)
    assert summary.session_id == "s1" and summary.campaign_id == "c1"
    assert len(summary.key_points) == 4
    joined = " ".join(summary.key_points)
    for needle in ["Thornwall", "betrayed", "decides to travel", "discover a letter"]:
        assert needle in joined
    for chatter in ["d20", "snack", "initiative", "points of damage"]:
        assert chatter not in joined
    # chronological: each point comes from a later scene than the one before
    order = [next(i for i, s in enumerate(SCENES) if p in s) for p in summary.key_points]
    assert order == sorted(order)
    assert summary.summary == " ".join(summary.key_points)


def test_mmr_avoids_repeating_the_same_sentence() -> None:
    repeated = ["DM: Eldrinax reveals that Lord Varkas betrayed the Silver Guard long ago."] * 4
    repeated += ["DM: The party decides to travel north to the ruins of Greyhollow at dawn."]
    summary = summarize_session(chunks_of(repeated), dm_names=["DM"], max_points=5)
    assert len(summary.key_points) == len(set(summary.key_points)) == 2


@pytest.mark.slow  # a real episode through the embedding model
def test_real_episode_summary_with_embeddings(crd3_episode) -> None:
    embedder = SentenceTransformerEmbedder()
    entries = import_transcript(crd3_episode).as_entries("cr", "c1e001")[:450]
    chunks = chunk_transcript(entries, count_tokens=embedder.count_tokens)
    vectors = embedder.embed([c.text for c in chunks])
    started = time.perf_counter()
    summary = summarize_session(chunks, vectors, embedder=embedder, dm_names=["MATT"])
    assert time.perf_counter() - started < 5.0
    assert 4 <= len(summary.key_points) <= 25
    assert any("Kraghammer" in p or "Kima" in p for p in summary.key_points)
    assert all(len(p.split()) >= 7 for p in summary.key_points)
    recap = recap_from_summary(summary, facts=["Ty'rex is located in Draconia"],
                               campaign_name="Critical Role")
    assert recap.text.startswith("Previously, on Critical Role…")
    assert "Ty'rex is located in Draconia" in recap.text
    assert recap.session_id == "c1e001"


def test_recap_template_retells_in_third_person() -> None:
    summary = SessionSummary(
        session_id="s1", campaign_id="c1", summary="",
        key_points=[
            "You arrive at the gates of Thornwall, where your old friend waits.",
            "Eldrinax reveals that Lord Varkas betrayed the Silver Guard.",
            "ROOK: I swear I will find the Moonstone.",
            "You guys decide to travel north to Greyhollow.",
        ],
    )
    recap = recap_from_summary(summary, facts=["Mara Vell leader of Silver Guard"])
    text = recap.text
    assert text.startswith("Previously…")
    assert "our heroes arrive at the gates of Thornwall, where their old friend waits" in text
    assert "Rook declared, “I swear I will find the Moonstone.”" in text
    assert "our heroes decide to travel north" in text
    assert "Mara Vell leader of Silver Guard" in text
    assert recap_from_summary(summary).text == recap_from_summary(summary).text
    assert third_person("You see your reflection.") == "Our heroes see their reflection."


def test_third_person_tells_subject_from_object() -> None:
    assert third_person("The next morning you climb the hill.") == (
        "The next morning they climb the hill.")
    assert third_person("The guard hands you a key.") == "The guard hands them a key."
    assert third_person("He looks at you.") == "He looks at them."
    assert third_person("As you enter, the dwarf greets you.") == (
        "As they enter, the dwarf greets them.")
    assert third_person("The dragon attacked you and you fled.") == (
        "The dragon attacked them and they fled.")


def test_llm_summary_and_recap(openai_stub) -> None:
    def chat(body):
        system = body["messages"][0]["content"]
        if "Previously" in system:
            return json.dumps({"recap": "Previously on Thornwall: betrayal and a letter."})
        return json.dumps({"summary": "The party learned of Varkas' betrayal.",
                           "key_points": ["Varkas betrayed the Silver Guard."]})

    openai_stub.chat = chat
    llm = ChatLLM(model="stub", base_url=openai_stub.base_url, api_key="test")
    summary = summarize_session_llm(chunks_of(SCENES), llm)
    assert summary is not None and summary.key_points == ["Varkas betrayed the Silver Guard."]
    assert summary.method.startswith("llm")
    recap = recap_llm(summary, llm, facts=["Varkas betrayed the Silver Guard"])
    assert recap is not None and recap.text.startswith("Previously on Thornwall")
    openai_stub.chat = lambda body: "no json here"
    assert summarize_session_llm(chunks_of(SCENES), llm) is None
    assert recap_llm(summary, llm) is None


def test_lexical_fallback_is_deterministic() -> None:
    a = summarize_session(chunks_of(SCENES * 3), dm_names=["DM"])
    b = summarize_session(chunks_of(SCENES * 3), dm_names=["DM"], embeddings=None)
    assert a == b
    fake = np.eye(12, 8, dtype=np.float32)
    c = summarize_session(chunks_of(SCENES * 3), fake, dm_names=["DM"])
    assert c.key_points
