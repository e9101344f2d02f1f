"""The pipeline's correction step corrects each entry in the scene of the session's turns
before it (and the party), as the live path does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from glyphoxa_pipelines.memory import Entity, KnowledgeGraph, NewEntry, SessionStore
from glyphoxa_pipelines.pipeline.services import PipelineServices
from glyphoxa_pipelines.pipeline.session_steps import corrected_transcript

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
UNSURE = [0.9, 0.9, 0.3, 0.9, 0.9, 0.9]  # "borger" unsure


def test_correction_step_uses_the_scene_and_the_party(
    db: Any, campaign_id: str, pipeline_services: PipelineServices
) -> None:
    kg = KnowledgeGraph(db)
    kg.add_entity(Entity(campaign_id, "borga", "npc", "Borga", []))
    kg.add_entity(Entity(campaign_id, "scanlan", "player", "Scanlan", []))
    sessions = SessionStore(db)
    sid = sessions.start_session(campaign_id, f"{campaign_id}-s", title="Scene").id
    lines = [
        ("I thank borger for the help.", UNSURE),  # Borga not said yet: stays
        ("Borga opens the door.", None),
        ("I thank borger for the help.", UNSURE),  # Borga in the scene now
        ("Alright, got some scamlin up there.", [0.9, 0.9, 0.9, 0.6, 0.9, 0.9]),  # the party
    ]
    sessions.write_entries(sid, [
        NewEntry(idempotency_key=f"{sid}-{i}", text=text, speaker_id="ana", speaker_name="Ana",
                 spoken_at=T0 + timedelta(seconds=20 * i), duration_s=3.0,
                 word_confidences=conf)
        for i, (text, conf) in enumerate(lines)
    ])
    out = corrected_transcript(pipeline_services, sid)
    assert all(c.passed for c in out.checks)
    texts = [e.text for e in sessions.get_entries(sid)]
    assert texts == [
        "I thank borger for the help.",
        "Borga opens the door.",
        "I thank Borga for the help.",
        "Alright, got some Scanlan up there.",
    ]
    assert out.metadata["corrections_by_method"] == {"context": 2}
