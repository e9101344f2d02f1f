"""A small campaign for the scale tests (replicas, several workers): two NPCs, a place, a
public fact and a live session with a scene. No embeddings: these tests are about where a
read goes, not what search finds, so they do not load the model."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Campaign,
    CampaignStore,
    Entity,
    KnowledgeGraph,
    Relationship,
    SessionStore,
)


@dataclass(frozen=True)
class ScaleSeed:
    campaign_id: str
    session_id: str
    npc_id: str
    other_npc_id: str


def seed_scale_campaign(url: str) -> ScaleSeed:
    cid = "sc-" + uuid.uuid4().hex[:10]
    with Database(url, max_size=2).open() as db:
        CampaignStore(db).upsert(Campaign(cid, f"Scale test {cid}"))
        kg = KnowledgeGraph(db)
        kg.add_entity(Entity(cid, "thaldrin", "npc", "Thaldrin Ashvale", ["Thaldrin"],
                             {"description": "the town blacksmith"}))
        kg.add_entity(Entity(cid, "borga", "npc", "Borga", [],
                             {"description": "a dwarven merchant who sells tunnel maps"}))
        kg.add_entity(Entity(cid, "gilded-tankard", "location", "The Gilded Tankard",
                             ["Gilded Tankard"]))
        kg.add_relationship(Relationship(cid, "thaldrin", "gilded-tankard", "drinks_at",
                                         evidence="Thaldrin sits by the fire"))
        sessions = SessionStore(db)
        live = sessions.start_session(cid, f"{cid}-live", title="Live")
        sessions.set_scene(live.id, {"location": "gilded-tankard", "present": ["thaldrin"]})
    return ScaleSeed(cid, live.id, "thaldrin", "borga")
