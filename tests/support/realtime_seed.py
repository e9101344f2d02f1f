"""A small seeded campaign for the realtime tests: NPCs with profiles, places, a quest, public
and secret facts, two past sessions with transcript chunks (embedded) and summaries, and a
live session with a scene."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    KnowledgeGraph,
    NewEntry,
    NpcProfile,
    Relationship,
    SemanticIndex,
    SessionStore,
    SessionSummary,
    SummaryStore,
)
from glyphoxa_pipelines.processing.chunking import chunk_transcript

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)

TRANSCRIPT_1 = [
    ("Matt", "dm", "You enter the Gilded Tankard, a warm inn full of smoke and song."),
    ("Ana", "player", "I walk up to the blacksmith by the fire and ask his name."),
    ("Thaldrin", "npc", "Thaldrin Ashvale, smith of this town. Mind the sparks, traveller."),
    ("Ana", "player", "Have you heard about the Sunblade? It was stolen from the temple."),
    ("Thaldrin", "npc", "Aye, the Sunblade vanished three nights ago. Dark business, that."),
    ("Ben", "player", "I order a round of ale and ask about work in town."),
    ("Matt", "dm", "The barkeep mentions wolves attacking caravans on the north road."),
    ("Ben", "player", "We agree to hunt the wolves for fifty gold pieces."),
]
TRANSCRIPT_2 = [
    ("Matt", "dm", "The next morning you travel to Kraghammer, the dwarven city in the mountain."),
    ("Ana", "player", "We look for the Iron Circle's hall to ask about the caravans."),
    ("Matt", "dm", "A dwarf named Borga tells you the Iron Circle controls the mines."),
    ("Ben", "player", "I try to bargain for a map of the old tunnels under the mountain."),
    ("Matt", "dm", "Borga sells you the tunnel map for thirty gold and a favour owed."),
    ("Ana", "player", "We rest at the mountain inn and plan the descent into the tunnels."),
]

SECRET = "mirela-quickfingers stole sunblade"


@dataclass
class Seed:
    campaign_id: str
    live_session: str
    past_sessions: list[str]
    secret_fact_id: int
    public_fact_id: int
    ids: dict[str, str]


def _entries(session_id: str, lines: list[tuple[str, str, str]], start: datetime) -> list[NewEntry]:
    return [
        NewEntry(
            idempotency_key=f"{session_id}-{i}",
            text=text,
            speaker_id=name.lower(),
            speaker_name=name,
            speaker_role=role,  # type: ignore[arg-type]
            spoken_at=start + timedelta(seconds=20 * i),
            duration_s=5.0,
        )
        for i, (name, role, text) in enumerate(lines)
    ]


def seed_campaign(url: str, embedder: Any, cid: str) -> Seed:
    with Database(url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, f"Realtime test {cid}"))
        kg = KnowledgeGraph(db)
        ents = [
            Entity(cid, "thaldrin", "npc", "Thaldrin Ashvale", ["Thaldrin"],
                   {"description": "the town blacksmith"}),
            Entity(cid, "mirela-quickfingers", "npc", "Mirela Quickfingers", ["Mirela"],
                   {"description": "a charming halfling thief"}),
            Entity(cid, "borga", "npc", "Borga", [], {"description": "a dwarven merchant"}),
            Entity(cid, "gilded-tankard", "location", "The Gilded Tankard", ["Gilded Tankard"]),
            Entity(cid, "kraghammer", "location", "Kraghammer", [],
                   {"description": "dwarven city"}),
            Entity(cid, "sunblade", "item", "Sunblade", [], {"description": "a holy sword"}),
            Entity(cid, "iron-circle", "faction", "Iron Circle", [],
                   {"description": "dwarven mining guild"}),
            Entity(cid, "recover-sunblade", "quest", "Recover the Sunblade", []),
            Entity(cid, "wolf-hunt", "event", "The wolf hunt",
                   [], {"description": "the party hunted wolves on the north road"}),
        ]
        for e in ents:
            kg.add_entity(e)
        kg.upsert_npc_profile(
            NpcProfile(cid, "thaldrin", personality="gruff but kind", speaking_style="terse",
                       emotional_state="wary", behavior_rules=["Never discuss the temple"],
                       secret_knowledge=["He saw a small figure near the temple that night"])
        )
        sessions = SessionStore(db)
        s1 = sessions.start_session(cid, f"{cid}-s1", title="Arrival", started_at=T0,
                                    status="ended")
        s2 = sessions.start_session(cid, f"{cid}-s2", title="Kraghammer",
                                    started_at=T0 + timedelta(days=7), status="ended")
        live = sessions.start_session(cid, f"{cid}-s3", title="Tunnels",
                                      started_at=T0 + timedelta(days=14))
        sessions.set_scene(live.id, {"location": "gilded-tankard",
                                     "present": ["thaldrin", "mirela-quickfingers"],
                                     "quests": ["recover-sunblade", "Find the lost caravan"]})
        index = SemanticIndex(db)
        for sess, lines, start in ((s1, TRANSCRIPT_1, T0), (s2, TRANSCRIPT_2,
                                                             T0 + timedelta(days=7))):
            sessions.write_entries(sess.id, _entries(sess.id, lines, start))
            stored = sessions.get_entries(sess.id)
            chunks = chunk_transcript(stored, count_tokens=embedder.count_tokens,
                                      target_tokens=60, max_tokens=120, known_names=ents)
            vecs = embedder.embed([c.text for c in chunks])
            index.index_chunks(chunks, vecs, model=embedder.model_id)
            # the turns' own vectors, as the pipeline's chunk_embeddings step writes them
            turns = index.entries_missing_embeddings(embedder.model_id, session_id=sess.id)
            index.add_entry_embeddings(embedder.model_id, list(zip(
                [t.entry_id for t in turns], embedder.embed([t.embedding_text() for t in turns]),
                strict=True)))
        summaries = SummaryStore(db)
        summaries.save(SessionSummary(s1.id, cid, "The party arrived at the Gilded Tankard, "
                                      "heard of the stolen Sunblade and took a wolf-hunting job.",
                                      ["Sunblade stolen", "wolf hunt"], "test"))
        summaries.save(SessionSummary(s2.id, cid, "The party went to Kraghammer and bought a "
                                      "tunnel map from Borga of the Iron Circle.",
                                      ["tunnel map", "favour owed to Borga"], "test"))
        public = kg.add_relationship(Relationship(
            cid, "thaldrin", "gilded-tankard", "drinks_at", session_id=s1.id,
            observed_at=T0 + timedelta(minutes=1), evidence="Thaldrin sits by the fire"))
        secret = kg.add_relationship(Relationship(
            cid, "mirela-quickfingers", "sunblade", "stole", visibility="secret",
            known_by=["thaldrin"], session_id=s1.id, observed_at=T0 + timedelta(minutes=2),
            evidence="only Thaldrin saw it"))
        kg.add_relationship(Relationship(
            cid, "borga", "iron-circle", "member_of", session_id=s2.id,
            observed_at=T0 + timedelta(days=7, minutes=3), evidence="Borga of the Iron Circle"))
        kg.add_relationship(Relationship(
            cid, "iron-circle", "kraghammer", "controls_mines_of", session_id=s2.id,
            observed_at=T0 + timedelta(days=7, minutes=2)))
    return Seed(cid, live.id, [s1.id, s2.id], int(secret.id or 0), int(public.id or 0),
                {e.id: e.name for e in ents})
