"""Fixtures of the pipeline tests: the shared embedded server (tests/conftest.py), Dagster
resources pointing at it, a throwaway Dagster instance and small imported sessions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.sample_sessions import FACTS_SESSION, add_dm_world, import_sample


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
