"""A later session's fact invalidates an earlier contradicting one (history kept), and
reprocessing either session, in any order, leaves the same current facts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.session_import import import_session
from glyphoxa_pipelines.db.operations import fetch_all
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph
from glyphoxa_pipelines.pipeline.runner import run_session_chain

LINES = {
    "first": [
        ("DM", "dm", "The smith you want is Grimjaw. Grimjaw lives in Ironhold, by the gate."),
        ("Sam", "player", "Then we go to Ironhold and find Grimjaw."),
    ],
    "second": [
        ("DM", "dm", "News travels fast: Grimjaw lives in Thornwall now, far from the gate."),
        ("Ana", "player", "So Grimjaw left Ironhold for Thornwall?"),
    ],
}


def _session(tmp: Path, name: str, hour: int) -> Path:
    path = tmp / f"{name}.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(
                {
                    "speaker": who,
                    "role": role,
                    "text": text,
                    "timestamp": f"2026-03-0{hour}T19:00:{10 * i:02d}Z",
                }
            )
            for i, (who, role, text) in enumerate(LINES[name])
        )
    )
    return path


def _lives_in(db: Any, campaign_id: str) -> list[tuple[str, str, bool]]:
    def op():  # type: ignore[no-untyped-def]
        rows = yield fetch_all(
            """SELECT r.target_id, s.title, r.invalidated_at IS NULL AS current
               FROM relationships r JOIN sessions s ON s.id = r.session_id
               WHERE r.campaign_id = %s AND r.source_id = 'grimjaw' AND r.rel_type = 'lives_in'
               ORDER BY r.target_id""",
            (campaign_id,),
        )
        return [(r["target_id"], r["title"], r["current"]) for r in rows]

    return db.run(op())


def test_later_fact_wins_and_reprocessing_is_order_independent(
    db: Any, campaign_id: str, pipeline_services: Any, tmp_path: Path
) -> None:
    kg = KnowledgeGraph(db)
    for name, kind in (("Grimjaw", "npc"), ("Ironhold", "location"), ("Thornwall", "location")):
        kg.add_entity(Entity(campaign_id, "", kind, name))
    first = import_session(db, campaign_id, _session(tmp_path, "first", 1)).session.id
    second = import_session(db, campaign_id, _session(tmp_path, "second", 2)).session.id
    steps = ["corrected_transcript", "extracted_knowledge"]

    run_session_chain(pipeline_services, first, assets=steps)
    assert _lives_in(db, campaign_id) == [("ironhold", "first", True)]
    run_session_chain(pipeline_services, second, assets=steps)
    expected = [("ironhold", "first", False), ("thornwall", "second", True)]
    assert _lives_in(db, campaign_id) == expected  # invalidated, not deleted

    for order in ([first], [second], [first, second], [second, first]):
        for sid in order:
            run_session_chain(pipeline_services, sid, assets=steps)
        assert _lives_in(db, campaign_id) == expected, order
