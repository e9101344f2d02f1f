"""Small sessions to import and the DM's world they mention: the pipeline tests' inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphoxa_pipelines.demo import SAMPLE_SESSIONS_DIR

SESSION_01 = SAMPLE_SESSIONS_DIR / "session-01.jsonl"
SESSION_02 = SAMPLE_SESSIONS_DIR / "session-02.jsonl"
FACTS_SESSION = Path(__file__).resolve().parents[1] / "pipeline" / "fixtures" / "facts_session.jsonl"


def add_dm_world(db: Any, campaign_id: str) -> None:
    """The DM's entities for the sample sessions (as a campaign file would load them)."""
    from glyphoxa_pipelines.memory import Entity, KnowledgeGraph

    kg = KnowledgeGraph(db)
    for name, kind, aliases in (
        ("Eldrinax", "npc", ["the Old Wizard"]),
        ("Grimjaw", "npc", ["Grimjaw Ironfist"]),
        ("Vexmira", "npc", ["Lady Vexmira"]),
        ("Captain Orlen Hask", "npc", ["Captain Hask", "Hask"]),
        ("Brannoc", "player", []),
        ("Ironhold", "location", []),
        ("The Rusty Anvil", "location", ["Rusty Anvil"]),
        ("Tower of Whispers", "location", []),
    ):
        kg.add_entity(Entity(campaign_id, "", kind, name, aliases))


def import_sample(db: Any, campaign_id: str, path: Path = SESSION_01) -> str:
    from glyphoxa_pipelines.campaign.session_import import import_session

    return import_session(db, campaign_id, path).session.id
