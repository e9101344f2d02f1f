"""Issue 11 item 6: an empty `known_by` entry is the public viewer's id, so it would make a
secret public. No write path stores one (HTTP, the service's DM edits, store operations, the
database itself, campaign files), and migration 019 cleans rows written before it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from glyphoxa_pipelines.campaign.campaign_file import CampaignFileError, parse_campaign_text
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import InvalidInputError, KnowledgeGraph, Relationship

MIGRATION = Path(__file__).resolve().parents[2] / "migrations" / "019_known_by_not_blank.sql"
BLANKS = ["", "   ", "\t"]


@pytest.fixture
async def fact(rt_client: httpx.AsyncClient) -> tuple[str, int]:
    cid = "rt-kb-" + uuid.uuid4().hex[:8]
    assert (await rt_client.put(f"/v1/campaigns/{cid}",
                                json={"id": cid, "name": "K"})).status_code == 200
    for ent in ({"id": "vex", "type": "npc", "name": "Vex"},
                {"id": "orb", "type": "item", "name": "Orb"}):
        r = await rt_client.post(f"/v1/campaigns/{cid}/entities", json=ent)
        assert r.status_code == 201, r.text
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts", json={
        "source": "vex", "relation": "hid", "target": "orb", "visibility": "public"})
    assert r.status_code in (200, 201), r.text
    return cid, int(r.json()["id"])


async def _public_can_see(rt_client: httpx.AsyncClient, cid: str) -> bool:
    r = await rt_client.post("/v1/tools/memory.search_facts",
                             json={"campaign_id": cid, "arguments": {"query": "hid"}})
    assert r.status_code == 200 and r.json()["status"] == "ok", r.text
    return any("Vex hid Orb" in f["text"] for f in r.json()["results"])


@pytest.mark.parametrize("blank", BLANKS)
async def test_http_refuses_blank_known_by(rt_client: httpx.AsyncClient, fact: tuple[str, int],
                                           blank: str) -> None:
    cid, fact_id = fact
    r = await rt_client.put(f"/v1/campaigns/{cid}/facts/{fact_id}/visibility",
                            json={"visibility": "secret", "known_by": ["vex", blank]})
    assert r.status_code == 422, r.text
    assert "known_by" in r.json()["detail"]
    r = await rt_client.post(f"/v1/campaigns/{cid}/facts", json={
        "source": "orb", "relation": "glows_for", "target": "vex", "visibility": "secret",
        "known_by": [blank]})
    assert r.status_code == 422, r.text
    # the refused edit changed nothing: the fact is still public (the control), and the
    # refused new fact does not exist
    assert await _public_can_see(rt_client, cid)
    r = await rt_client.post("/v1/tools/memory.search_facts",
                             json={"campaign_id": cid, "arguments": {"relation": "glows_for"}})
    assert r.json()["count"] == 0


@pytest.mark.parametrize("blank", BLANKS)
async def test_service_and_store_refuse_blank_known_by(
    rt_service: Any, rt_db_url: str, rt_client: httpx.AsyncClient, fact: tuple[str, int],
    blank: str,
) -> None:
    cid, fact_id = fact
    # the service's DM edits (what Discord and the CLI call)
    with pytest.raises(InvalidInputError, match="known_by"):
        await rt_service.set_visibility(cid, fact_id, "secret", [blank])
    with pytest.raises(InvalidInputError, match="known_by"):
        await rt_service.add_fact(Relationship(cid, "orb", "vex", "glows_for",
                                               visibility="secret", known_by=[blank]))
    # the store's own operations, with no service in front: the database constraint
    with Database(rt_db_url, max_size=1).open() as db:
        kg = KnowledgeGraph(db)
        with pytest.raises(InvalidInputError, match="relationships_known_by_named"):
            kg.set_visibility(cid, fact_id, "secret", [blank])
        with pytest.raises(InvalidInputError, match="relationships_known_by_named"):
            kg.add_relationship(Relationship(cid, "orb", "vex", "glows_for",
                                             visibility="secret", known_by=["vex", blank]))
    with psycopg.connect(rt_db_url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE relationships SET known_by = %s WHERE id = %s",
                     (["vex", blank], fact_id))
    assert await _public_can_see(rt_client, cid)


@pytest.mark.parametrize("blank", ["", "  "])
def test_campaign_file_refuses_blank_known_by(blank: str) -> None:
    text = (
        "campaign: {id: kb-file, name: K}\n"
        "entities:\n"
        "  - {name: Vex, type: npc}\n"
        "  - {name: Orb, type: item}\n"
        "relationships:\n"
        f"  - {{source: Vex, target: Orb, type: hid, visibility: [Vex, \"{blank}\"]}}\n"
    )
    with pytest.raises(CampaignFileError) as err:
        parse_campaign_text(text, "kb.yaml")
    assert "kb.yaml:6:" in str(err.value) and "visibility" in str(err.value)


def test_migration_cleans_blank_entries(rt_db_url: str, fact: tuple[str, int]) -> None:
    """Rows written before migration 019 lose their blank entries (and so does what the
    campaign file said of them), then the constraint holds. Run inside a transaction that is
    rolled back, on a copy of the situation before the migration."""
    cid, fact_id = fact
    with psycopg.connect(rt_db_url) as conn:
        try:
            conn.execute("ALTER TABLE relationships DROP CONSTRAINT relationships_known_by_named")
            conn.execute("DROP FUNCTION glyphoxa_ids_named(text[])")
            conn.execute(
                """UPDATE relationships SET visibility = 'secret', known_by = %s,
                       file_values = jsonb_build_object('known_by', %s::jsonb)
                   WHERE id = %s""",
                (["", "vex", "  "], '["", "vex", " ", null]', fact_id),
            )
            conn.execute(MIGRATION.read_text().encode())
            known_by, file_known_by = conn.execute(
                "SELECT known_by, file_values -> 'known_by' FROM relationships WHERE id = %s",
                (fact_id,),
            ).fetchone()
            assert known_by == ["vex"]
            assert file_known_by == ["vex"]
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute("UPDATE relationships SET known_by = '{\"\"}' WHERE id = %s",
                             (fact_id,))
        finally:
            conn.rollback()
