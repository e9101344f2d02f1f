"""A session's new spelling of a known entity ("Stillben" for the DM's "Stilben") resolves to
it: no second place is made, the spelling is reported in the step's metadata, and the DM's row
is left as the DM wrote it (the pipeline never edits rows it does not own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.session_import import import_session
from glyphoxa_pipelines.db.operations import fetch_all
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph
from glyphoxa_pipelines.pipeline.runner import run_session_chain

LINES = [
    ("DM", "dm", "Keyleth hiked down the mountain towards Stillben."),
    ("DM", "dm", "Stillben is a quiet town. Keyleth rested in Stillben."),
    ("Ana", "player", "We should rest too."),
]


def _places(db: Any, campaign_id: str) -> list[tuple[str, list[str]]]:
    def op():  # type: ignore[no-untyped-def]
        rows = yield fetch_all(
            "SELECT name, aliases FROM entities WHERE campaign_id = %s AND name LIKE 'Sti%%'"
            " ORDER BY name",
            (campaign_id,),
        )
        return [(r["name"], list(r["aliases"])) for r in rows]

    return db.run(op())


def test_a_new_spelling_is_reported_and_the_dm_entity_left_alone(
    db: Any, campaign_id: str, pipeline_services: Any, tmp_path: Path
) -> None:
    kg = KnowledgeGraph(db)
    kg.add_entity(Entity(campaign_id, "", "pc", "Keyleth"))
    place = kg.add_entity(Entity(campaign_id, "", "location", "Stilben"))
    path = tmp_path / "s.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {"speaker": who, "role": role, "text": text,
                 "timestamp": f"2026-03-01T19:00:{10 * i:02d}Z"}
            )
            for i, (who, role, text) in enumerate(LINES)
        )
    )
    session = import_session(db, campaign_id, path).session.id
    # Extraction alone: the correction step would already have respelled the DM's name.
    out = run_session_chain(pipeline_services, session, assets=["extracted_knowledge"])
    meta = out["extracted_knowledge"].metadata
    assert meta["spellings_resolved_to_existing"] == {place.id: ["Stillben"]}
    assert _places(db, campaign_id) == [("Stilben", [])]  # no second place, no alias written
