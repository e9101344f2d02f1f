"""A session's new spelling of a known entity ("Stillben" for the DM's "Stilben") resolves to
it: no second place is made, the spelling is reported in the step's metadata and offered to the
DM, and the DM's row is left as the DM wrote it (the pipeline never edits rows it does not own)
until the DM accepts the spelling; a dismissed one is never offered again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glyphoxa_pipelines.campaign.session_import import import_session
from glyphoxa_pipelines.db.operations import fetch_all
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph, NotFoundError
from glyphoxa_pipelines.memory.spelling_suggestions import (
    accept_spelling_op,
    dismiss_spelling_op,
    open_spellings_op,
)
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


def _session(db: Any, campaign_id: str, tmp_path: Path, name: str = "s") -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {"speaker": who, "role": role, "text": text,
                 "timestamp": f"2026-03-01T19:00:{10 * i:02d}Z"}
            )
            for i, (who, role, text) in enumerate(LINES)
        )
    )
    return import_session(db, campaign_id, path, session_id=f"{campaign_id}-{name}").session.id


def _graph(db: Any, campaign_id: str) -> Entity:
    kg = KnowledgeGraph(db)
    kg.add_entity(Entity(campaign_id, "", "pc", "Keyleth"))
    return kg.add_entity(Entity(campaign_id, "", "location", "Stilben"))


def _first_session_offered(db: Any, campaign_id: str, services: Any, tmp_path: Path) -> Entity:
    """The DM's Stilben, and a first session that heard it as "Stillben"."""
    place = _graph(db, campaign_id)
    run_session_chain(services, _session(db, campaign_id, tmp_path, "s1"),
                      assets=["extracted_knowledge"])
    return place


def test_a_new_spelling_is_reported_and_the_dm_entity_left_alone(
    db: Any, campaign_id: str, pipeline_services: Any, tmp_path: Path
) -> None:
    place = _graph(db, campaign_id)
    session = _session(db, campaign_id, tmp_path)
    # Extraction alone: the correction step would already have respelled the DM's name.
    out = run_session_chain(pipeline_services, session, assets=["extracted_knowledge"])
    meta = out["extracted_knowledge"].metadata
    assert meta["spellings_resolved_to_existing"] == {place.id: ["Stillben"]}
    assert meta["spellings_offered"] == 1
    assert _places(db, campaign_id) == [("Stilben", [])]  # no second place, no alias written
    offered = db.run(open_spellings_op(campaign_id))
    assert [(o["entity_id"], o["spelling"], o["sessions"]) for o in offered] == [
        (place.id, "Stillben", [session])
    ]
    # A reprocess replaces the session's offer rather than adding to it.
    run_session_chain(pipeline_services, session, assets=["extracted_knowledge"])
    assert len(db.run(open_spellings_op(campaign_id))) == 1


def test_the_dm_accepts_a_spelling_as_an_alias_or_dismisses_it_for_good(
    db: Any, campaign_id: str, pipeline_services: Any, tmp_path: Path
) -> None:
    place = _first_session_offered(db, campaign_id, pipeline_services, tmp_path)
    with pytest.raises(NotFoundError, match="Stilbenn"):  # only what was offered
        db.run(dismiss_spelling_op(campaign_id, place.id, "Stilbenn"))
    assert db.run(dismiss_spelling_op(campaign_id, place.id, " stillben ")) == "Stillben"
    assert db.run(open_spellings_op(campaign_id)) == []
    second = _session(db, campaign_id, tmp_path, "s2")
    meta = run_session_chain(pipeline_services, second, assets=["extracted_knowledge"])
    assert meta["extracted_knowledge"].metadata["spellings_resolved_to_existing"] == {
        place.id: ["Stillben"]}
    assert meta["extracted_knowledge"].metadata["spellings_offered"] == 0  # dismissed for good
    assert db.run(open_spellings_op(campaign_id)) == []
    assert _places(db, campaign_id) == [("Stilben", [])]

    other = KnowledgeGraph(db).add_entity(Entity(campaign_id, "", "location", "Stilben Keep"))
    assert other.id != place.id
    with pytest.raises(NotFoundError):  # a dismissal is for one entity, an offer too
        db.run(accept_spelling_op(KnowledgeGraph(db), campaign_id, other.id, "Stillben"))


def test_an_accepted_spelling_becomes_an_alias_the_next_session_is_not_offered(
    db: Any, campaign_id: str, pipeline_services: Any, tmp_path: Path
) -> None:
    place = _first_session_offered(db, campaign_id, pipeline_services, tmp_path)
    kept = db.run(accept_spelling_op(KnowledgeGraph(db), campaign_id, place.id, "STILLBEN"))
    assert (kept.name, kept.aliases) == ("Stilben", ["Stillben"])  # as it was heard
    assert db.run(open_spellings_op(campaign_id)) == []
    with pytest.raises(NotFoundError):  # nothing waits any more
        db.run(accept_spelling_op(KnowledgeGraph(db), campaign_id, place.id, "Stillben"))
    second = _session(db, campaign_id, tmp_path, "s2")
    out = run_session_chain(pipeline_services, second, assets=["extracted_knowledge"])
    assert out["extracted_knowledge"].metadata["spellings_resolved_to_existing"] == {}
    assert _places(db, campaign_id) == [("Stilben", ["Stillben"])]
