"""The summary step is told who plays whom as the campaign's graph knows it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from glyphoxa_pipelines.memory.graph_entities import upsert_entity_op
from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.pipeline.text_products import campaign_characters


def test_players_characters_from_the_graph(db: Any, sample_session: tuple[str, str]) -> None:
    campaign_id, _ = sample_session
    for entity in [
        Entity(campaign_id, "grog", "player", "Grog", attributes={"played_by": "TRAVIS"}),
        Entity(campaign_id, "pike", "player", "Pike"),  # nobody answered for her yet
        Entity(campaign_id, "kima", "npc", "Kima", attributes={"played_by": "MATT"}),
    ]:
        db.run(upsert_entity_op(entity))
    got = campaign_characters(SimpleNamespace(db=db), campaign_id)  # type: ignore[arg-type]
    assert got.get("TRAVIS") == "Grog"
    assert "Pike" not in got.values() and "MATT" not in got
