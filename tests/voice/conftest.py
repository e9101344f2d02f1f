"""The voice loop's test wiring: a real MemoryService on the run's embedded PostgreSQL, a
small campaign with a live session and a scene, the speech engines loaded once per process
(tests that need them skip when the `speech` extra is absent), and the streaming chat stub."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.voice.chat_stub import StreamingChatStub


@dataclass(frozen=True)
class VoiceCampaign:
    campaign_id: str
    session_id: str


@pytest.fixture
def voice_campaign(db: object) -> VoiceCampaign:
    from glyphoxa_pipelines.memory import (
        Campaign,
        CampaignStore,
        Entity,
        KnowledgeGraph,
        NpcProfile,
        Relationship,
        SessionStore,
    )

    cid = "v-" + uuid.uuid4().hex[:10]
    CampaignStore(db).upsert(Campaign(cid, "Voice test"))  # type: ignore[arg-type]
    kg = KnowledgeGraph(db)  # type: ignore[arg-type]
    for e in (
        Entity(cid, "thaldrin", "npc", "Thaldrin Ashvale", ["Thaldrin"],
               {"description": "the town blacksmith"}),
        Entity(cid, "mirela", "npc", "Mirela Quickfingers", ["Mirela"]),
        Entity(cid, "sunblade", "item", "Sunblade", [], {"description": "a holy sword"}),
        Entity(cid, "gilded-tankard", "location", "The Gilded Tankard", ["Gilded Tankard"]),
    ):
        kg.add_entity(e)
    kg.upsert_npc_profile(NpcProfile(cid, "thaldrin", personality="gruff but kind"))
    kg.add_relationship(Relationship(cid, "thaldrin", "gilded-tankard", "drinks_at"))
    sessions = SessionStore(db)  # type: ignore[arg-type]
    live = sessions.start_session(cid, f"{cid}-live", title="Live")
    sessions.set_scene(live.id, {"location": "gilded-tankard", "present": ["thaldrin"]})
    return VoiceCampaign(cid, live.id)


@pytest.fixture(scope="session")
async def voice_service(database_url: str, glyphoxa_home: Path) -> AsyncIterator[object]:
    from glyphoxa_pipelines.config import Settings
    from realtime.service import MemoryService

    svc = MemoryService(database_url, settings=Settings(home=glyphoxa_home),
                        spool_dir=glyphoxa_home / "voice-spool", probe_interval_s=0.2)
    await svc.open(warm_embedder=False)
    yield svc
    await svc.close()


@pytest.fixture(scope="session")
def stt() -> object:
    from glyphoxa_pipelines.providers.speech import SpeechModelMissing
    from realtime.voice.engines import live_whisper

    engine = live_whisper()
    try:
        engine.load()
    except SpeechModelMissing as exc:
        pytest.skip(str(exc))
    return engine


@pytest.fixture(scope="session")
def tts() -> object:
    from glyphoxa_pipelines.providers.speech import SpeechModelMissing, TextToSpeech

    engine = TextToSpeech()
    try:
        engine.load()
    except SpeechModelMissing as exc:
        pytest.skip(str(exc))
    return engine


@pytest.fixture
def chat_stub() -> Iterator[StreamingChatStub]:
    stub = StreamingChatStub()
    try:
        yield stub
    finally:
        stub.close()
