"""Fixtures of the pipeline tests: the shared embedded server (tests/conftest.py), Dagster
resources pointing at it, a throwaway Dagster instance, and small imported sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from glyphoxa_pipelines.demo import SAMPLE_SESSIONS_DIR

SESSION_01 = SAMPLE_SESSIONS_DIR / "session-01.jsonl"
SESSION_02 = SAMPLE_SESSIONS_DIR / "session-02.jsonl"
FACTS_SESSION = Path(__file__).resolve().parent / "fixtures" / "facts_session.jsonl"


@pytest.fixture(scope="session")
def pipeline_services(db: Any) -> Any:
    """Default providers (bundled MiniLM, no LLM) on the shared test database."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.pipeline.services import PipelineServices

    return PipelineServices(db, Settings.from_env())


@pytest.fixture(scope="session")
def dagster_resources() -> dict[str, Any]:
    from glyphoxa_pipelines.defs.resources import EmbedderResource, GlyphoxaDatabase, LLMResource

    return {"glyphoxa_db": GlyphoxaDatabase(), "embedder": EmbedderResource(), "llm": LLMResource()}


@pytest.fixture
def dagster_instance() -> Iterator[Any]:
    """A real DagsterInstance in a temporary DAGSTER_HOME (sqlite storage)."""
    from dagster import instance_for_test

    with instance_for_test() as instance:
        yield instance


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


@pytest.fixture
def sample_session(db: Any, campaign_id: str) -> tuple[str, str]:
    """(campaign id, session id): DM world plus the first sample session, ended."""
    add_dm_world(db, campaign_id)
    return campaign_id, import_sample(db, campaign_id)


@pytest.fixture
def facts_session(db: Any, campaign_id: str) -> tuple[str, str]:
    """(campaign id, session id): DM world plus a short session stating clear facts."""
    add_dm_world(db, campaign_id)
    return campaign_id, import_sample(db, campaign_id, FACTS_SESSION)
