from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np

from glyphoxa_pipelines.campaign.transcript_import import import_transcript
from glyphoxa_pipelines.memory.models import Chunk
from glyphoxa_pipelines.processing.chunking import chunk_transcript
from glyphoxa_pipelines.processing.recaps import LLM_RECAP_VERSION, recap_from_summary, recap_llm
from glyphoxa_pipelines.processing.summaries import (
    LLM_REDUCE_SYSTEM,
    LLM_SCENE_SYSTEM,
    LLM_SUMMARIZER_VERSION,
    SUMMARIZER_VERSION,
    summarize_session,
    summarize_session_llm,
)
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
    # the DM's "you" to the whole table is told about the party: a written story has no "you"
    assert "The party arrives at the gates of Thornwall" in joined
    for chatter in ["d20", "snack", "initiative", "points of damage"]:
        assert chatter not in joined
    # chronological: each point comes from a later scene than the one before
    tails = [" ".join(p.rstrip(".").split()[-3:]) for p in summary.key_points]
    order = [next(i for i, s in enumerate(SCENES) if t in s) for t in tails]
    assert order == sorted(order)
    assert all(p in summary.summary for p in summary.key_points)
    assert summary.method == SUMMARIZER_VERSION


def test_mmr_avoids_repeating_the_same_sentence() -> None:
    repeated = ["DM: Eldrinax reveals that Lord Varkas betrayed the Silver Guard long ago."] * 4
    repeated += ["DM: The party decides to travel north to the ruins of Greyhollow at dawn."]
    summary = summarize_session(chunks_of(repeated), dm_names=["DM"], max_points=5)
    assert len(summary.key_points) == len(set(summary.key_points)) == 2


FIGHT = [
    "DM: You reach the old mill at the edge of Thornwall where the cultists gather at night.",
    "Rook: I sneak up to the window and look inside.",
    "DM: Inside, three cultists in red robes chant over a bound prisoner.",
    "DM: Everyone roll initiative.",
    "Rook: 17 for me.",
    "Mira: I rolled a 4, plus 2 is 6.",
    "DM: The first cultist lunges at Rook with a curved dagger and misses.",
    "Rook: I attack him with my sword, that's 12 points of damage.",
    "DM: Your blade cuts through his robes and the cultist falls to the floor, lifeless.",
    "DM: The last cultist drops his dagger and flees into the dark woods toward Greyhollow.",
]


def test_fight_keeps_its_outcome_and_players_deeds_are_retold() -> None:
    summary = summarize_session(chunks_of(FIGHT), dm_names=["DM"], characters={"Rook": "Sir Rook"})
    joined = " ".join(summary.key_points)
    assert "flees into the dark woods" in joined or "falls to the floor, lifeless" in joined
    assert "Sir Rook sneaks up to the window and looks inside." in joined or (
        "old mill" in joined)
    for table in ["initiative", "17 for me", "points of damage", "rolled"]:
        assert table not in joined
    # a player with no known character is never quoted under the player's name
    plain = summarize_session(chunks_of(FIGHT), dm_names=["DM"], characters={})
    assert "Rook" not in " ".join(p for p in plain.key_points if "Rook with" not in p)


def test_deeds_under_the_character_name_with_a_mapping() -> None:
    lines = [
        "DM: The hall of the Ironkeeper is lit by braziers and guarded by six dwarves.",
        "Rook: I kneel before the throne of Gradim Greyspine.",
        "DM: The Ironkeeper breaks the seal and reads the letter from Allura in silence.",
        "Mira: I keep watch by the door.",
        "DM: He looks up and tells you that Lady Kima went into the mines a week ago.",
    ]
    summary = summarize_session(chunks_of(lines), dm_names=["DM"], max_points=6,
                                characters={"Rook": "Vax", "Mira": "Keyleth"})
    joined = " ".join(summary.key_points)
    assert "Vax kneels before the throne of Gradim Greyspine." in joined
    assert "Rook" not in joined and "Mira" not in joined


def test_real_episode_story_has_no_table_talk(crd3_episode) -> None:
    from glyphoxa_pipelines.processing.cast import infer_characters
    from glyphoxa_pipelines.processing.table_talk import (
        TableContext,
        TableLine,
        TalkKind,
        classify_sentence,
    )

    entries = import_transcript(crd3_episode, dm_speakers={"matt"}).as_entries("cr", "c1e001")
    chunks = chunk_transcript(entries, count_tokens=SentenceTransformerEmbedder().count_tokens)
    summary = summarize_session(chunks, dm_names=["MATT"])
    assert 8 <= len(summary.key_points) <= 30
    assert any("Kraghammer" in p or "Kima" in p for p in summary.key_points)
    lines = [TableLine(e.speaker_name, e.text, e.speaker_role) for e in entries]
    context = TableContext.from_lines(lines)
    assert all(classify_sentence(p, "MATT", context, "dm") is not TalkKind.TABLE_TALK
               for p in summary.key_points)
    characters = infer_characters(lines)
    assert characters["TRAVIS"] == "Grog" and characters["LAURA"] == "Vex'ahlia"
    recap = recap_from_summary(summary, campaign_name="Critical Role",
                               characters=list(characters.values()))
    body = recap.text.split("\n", 1)[1]
    assert 150 <= len(body.split()) <= 250
    assert not context.mentions_cast(body)
    assert "When we left them," in body


def test_llm_map_reduce_over_scenes_and_recap(openai_stub) -> None:
    prompts: list[tuple[str, str]] = []

    def chat(body):
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        prompts.append((system, user))
        if "Previously" in system:
            return json.dumps({"recap": "Previously on Thornwall: betrayal and a letter."})
        if system == LLM_REDUCE_SYSTEM:
            return json.dumps({"summary": "The party learned of Varkas' betrayal.",
                               "key_points": ["Varkas betrayed the Silver Guard."]})
        return json.dumps({"summary": f"Scene summary {len(prompts)}.", "key_points": []})

    openai_stub.chat = chat
    llm = ChatLLM(model="stub", base_url=openai_stub.base_url, api_key="test")
    chunks = chunks_of(SCENES + FIGHT)
    summary = summarize_session_llm(chunks, llm, dm_names=["DM"], target_scenes=3)
    assert summary is not None and summary.key_points == ["Varkas betrayed the Silver Guard."]
    assert summary.method == LLM_SUMMARIZER_VERSION
    scene_calls = [u for s, u in prompts if s == LLM_SCENE_SYSTEM]
    assert len(scene_calls) >= 2  # mapped over scenes, then reduced once
    assert [s for s, _ in prompts].count(LLM_REDUCE_SYSTEM) == 1
    sent = "\n".join(scene_calls)
    for table in ["d20", "snack", "initiative", "points of damage"]:
        assert table not in sent  # the model only sees the story
    assert "Eldrinax reveals that Lord Varkas betrayed" in sent
    reduce_prompt = next(u for s, u in prompts if s == LLM_REDUCE_SYSTEM)
    assert "Scene summary" in reduce_prompt

    recap = recap_llm(summary, llm, facts=["Varkas betrayed the Silver Guard"],
                      characters=["Sir Rook", "Mira"])
    assert recap is not None and recap.text.startswith("Previously on Thornwall")
    assert recap.method == LLM_RECAP_VERSION
    assert "The party: Sir Rook and Mira" in prompts[-1][1]
    assert "Last scene (the cliffhanger)" in prompts[-1][1]

    # a failed reduce keeps the scene summaries in order; unusable answers fall back
    openai_stub.chat = lambda body: (
        "no json" if body["messages"][0]["content"] == LLM_REDUCE_SYSTEM
        else json.dumps({"summary": "A scene.", "key_points": ["Something happened."]}))
    merged = summarize_session_llm(chunks, llm, dm_names=["DM"], target_scenes=3)
    assert merged is not None and merged.summary.startswith("A scene. A scene.")
    openai_stub.chat = lambda body: "no json here"
    assert summarize_session_llm(chunks, llm, dm_names=["DM"]) is None
    assert recap_llm(summary, llm) is None
    openai_stub.chat = lambda body: json.dumps({"recap": "word " * 400})
    assert recap_llm(summary, llm) is None  # far past the asked length


def test_summary_is_deterministic_and_accepts_stored_embeddings() -> None:
    a = summarize_session(chunks_of(SCENES * 3), dm_names=["DM"])
    b = summarize_session(chunks_of(SCENES * 3), dm_names=["DM"], embeddings=None)
    assert a == b
    fake = np.eye(12, 8, dtype=np.float32)
    c = summarize_session(chunks_of(SCENES * 3), fake, dm_names=["DM"])
    assert c.key_points


def test_compression_keeps_the_story_and_drops_the_table_voice() -> None:
    from glyphoxa_pipelines.processing.prose import clean_sentence, usable

    assert clean_sentence("So you guys kind of just step forward, essentially, into the hall.") == (
        "You step forward into the hall.")
    assert clean_sentence("The ogre slowly turns and actually flees toward the river.") == (
        "The ogre turns and flees toward the river.")
    assert clean_sentence("Only the holy symbol remains in the early light.") == (
        "Only the holy symbol remains in the early light.")  # not manner adverbs
    for fragment in ["Comes down to swing at you, as he comes down in flames.",
                     "Tall, lanky, long, black and purple robes, a hood over its features.",
                     "With a yell, slams it right into his face against the wall.",
                     "That's amazing, as we now have for the group a castle of our own."]:
        assert not usable(clean_sentence(fragment)), fragment


def test_demo_session_story_names_who_did_what() -> None:
    from glyphoxa_pipelines.demo import SAMPLE_SESSIONS_DIR

    entries = import_transcript(SAMPLE_SESSIONS_DIR / "session-01.jsonl").as_entries("demo", "s1")
    chunks = chunk_transcript(entries, count_tokens=lambda text: len(text.split()))
    world = ["Grimjaw", "Eldrinax", "Brannoc", "Ironhold", "The Rusty Anvil", "Tower of Whispers"]
    summary = summarize_session(chunks, dm_names=["DM"], world_names=world)
    joined = " ".join(summary.key_points)
    assert "Grimjaw hands Brannoc a heavy hammer" in joined  # the NPC's lines are the world's
    assert "Eldrinax agrees to help the party" in joined  # the deal
    assert "Brannoc shakes the water off his cloak" in joined  # a player's deed, told as such
    assert not any(p.split()[0] in ("He", "She", "It") for p in summary.key_points)
    recap = recap_from_summary(summary, campaign_name="The Shattered Crown").text
    assert "forged it himself" not in recap and "Grimjaw hands Brannoc" in recap
    assert "When we left them," in recap


def test_trailing_colour_goes_and_names_stay() -> None:
    from glyphoxa_pipelines.processing.prose import trim_trailing_detail

    assert trim_trailing_detail(
        "You walk across the bridge toward the far cavern, keeping grip on both rails, "
        "feeling it rock to and fro.") == "You walk across the bridge toward the far cavern."
    assert trim_trailing_detail(  # a phrase that names someone says who: kept
        "The troll lunges across the bridge at you, dragging Kima behind it.").endswith(
        "dragging Kima behind it.")
    assert trim_trailing_detail(  # "the king" is no participle; too short a clause stays whole
        "The hall falls silent, waiting.") == "The hall falls silent, waiting."
    assert trim_trailing_detail("He bows to the king, the morning light behind.") == (
        "He bows to the king, the morning light behind.")


def test_a_leading_clause_of_time_goes_unless_it_names_someone() -> None:
    from glyphoxa_pipelines.processing.prose import trim_leading_clause

    assert trim_leading_clause("As the hood falls back, you see a smooth purple head.") == (
        "You see a smooth purple head.")
    assert trim_leading_clause("As Kima falls back, the troll roars in triumph.") == (
        "As Kima falls back, the troll roars in triumph.")
    assert trim_leading_clause("When it ends, you rest.") == "When it ends, you rest."


def test_table_voice_gestures_and_subjectless_openings_are_refused() -> None:
    from glyphoxa_pipelines.processing.prose import clean_sentence, usable

    assert clean_sentence("Vex recalls that Lady Kima was, specifically, a paladin of Bahamut.") == (
        "Vex recalls that Lady Kima was a paladin of Bahamut.")
    for bad in ["Lifeless, pull the blade from the maw, mind flayer down.",
                "You, see in the distance, a small light moving back toward the camp.",
                "The party has killed a crap ton of duergar in the tunnels.",
                "You also note, Vex, that the goblin corpses you come across have a wound.",
                "You slam into it, your horn gores, you can see you slam it into the side."]:
        assert not usable(clean_sentence(bad)), bad
    assert usable(clean_sentence("Suddenly, through the far door comes a massive cave troll."))


def test_a_misplaced_comma_keeps_the_leading_clause() -> None:
    from glyphoxa_pipelines.processing.prose import clean_sentence, trim_leading_clause, usable

    said = "As you let it, go it bursts into flames arcing halfway through the air."
    assert trim_leading_clause(said) == said  # "go it bursts ..." would stand alone broken
    assert not usable(clean_sentence("At first, let me go over a couple of things for tonight."))
