"""One visibility rule, every read path: the same secret-fact matrix through each store read
that takes a viewer, and the hot-context read agreeing with the store's own reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.memory import (
    Entity,
    KnowledgeGraph,
    NewEntry,
    Relationship,
    SessionStore,
)
from glyphoxa_pipelines.memory.fact_text import fact_sentence
from glyphoxa_pipelines.memory.hot_read import hot_row_op
from glyphoxa_pipelines.memory.session_log import insert_entries_op
from glyphoxa_pipelines.memory.visibility import PUBLIC_VIEWER, SECRET_MARK, viewer
from realtime import fact_search as fs
from realtime.hot_context import fact_dict

# Who sees the secret "eldrinax hides_shard_of crown" (known_by grimjaw)?
MATRIX = {"eldrinax": True, "crown": True, "grimjaw": True, "hask": False, PUBLIC_VIEWER: False}


def _seed(db: Database, cid: str) -> KnowledgeGraph:
    g = KnowledgeGraph(db)
    for eid, typ in (("eldrinax", "npc"), ("grimjaw", "npc"), ("hask", "npc"), ("crown", "item")):
        g.add_entity(Entity(cid, eid, typ, eid.title()))
    g.add_relationship(
        Relationship(
            cid, "eldrinax", "crown", "hides_shard_of", visibility="secret", known_by=["grimjaw"]
        )
    )
    g.add_relationship(Relationship(cid, "grimjaw", "eldrinax", "distrusts"))
    return g


def _sees(facts: list[object]) -> bool:
    return "hides_shard_of" in {f.relationship.rel_type for f in facts}  # type: ignore[attr-defined]


@pytest.mark.parametrize("who", sorted(MATRIX))
def test_every_read_path_applies_the_same_rule(db: Database, campaign_id: str, who: str) -> None:
    g = _seed(db, campaign_id)
    expected = MATRIX[who]
    rels = g.get_relationships(campaign_id, "eldrinax", direction="both", npc_id=who)
    paths = {
        "get_relationships": "hides_shard_of" in {r.rel_type for r in rels},
        "neighbors": _sees(
            g.neighbors(campaign_id, "eldrinax", npc_id=who, include_facts=True).facts
        ),
        "find_path": bool(g.find_path(campaign_id, "eldrinax", "crown", npc_id=who)),
        "facts_about": _sees(db.run(fs.facts_about_op(campaign_id, "crown", who))),
        "search_facts": _sees(
            [f for f, _ in db.run(fs.search_facts_op(campaign_id, who, query="shard"))]
        ),
    }
    if who in ("eldrinax", "grimjaw", "hask"):  # the NPC's own knowledge: party to, or told
        ident = g.identity_snapshot(campaign_id, who)
        paths["identity_snapshot"] = _sees(ident.facts)
    assert paths == dict.fromkeys(paths, expected)


def test_no_npc_bound_means_public_only() -> None:
    assert viewer(None) == PUBLIC_VIEWER == viewer("")
    assert viewer("hask") == "hask"


def test_a_secret_fact_reads_as_a_guarded_sentence(db: Database, campaign_id: str) -> None:
    g = _seed(db, campaign_id)
    fact = g.identity_snapshot(campaign_id, "grimjaw").facts
    secret = next(f for f in fact if f.secret)
    assert secret.sentence() == f"Eldrinax hides shard of Crown ({SECRET_MARK})"
    assert fact_sentence("Grimjaw", "distrusts", "Eldrinax") == "Grimjaw distrusts Eldrinax"


def test_the_hot_read_is_the_store_reads(db: Database, campaign_id: str) -> None:
    g = _seed(db, campaign_id)
    log = SessionStore(db)
    sid = log.start_session(campaign_id).id
    t0 = datetime(2024, 5, 1, 20, 0, tzinfo=UTC)
    entries = [
        NewEntry(f"k{i}", f"line {i}", speaker_name="Ana", spoken_at=t0 + timedelta(minutes=i))
        for i in range(12)
    ]
    assert db.run(insert_entries_op(sid, entries), transaction=False) == 12
    assert db.run(insert_entries_op(sid, entries[:2]), transaction=False) == 0  # idempotent
    row = db.run(
        hot_row_op(sid, "grimjaw", recent_limit=4, fact_limit=10, window_s=150),
        transaction=False,
    )
    assert row is not None and row["campaign_id"] == campaign_id
    store_recent = log.get_recent(sid, 150, limit=4)
    assert [r["id"] for r in row["recent"]] == [e.id for e in store_recent] != []
    snap = g.identity_snapshot(campaign_id, "grimjaw", fact_limit=10)
    assert [f["id"] for f in row["facts"]] == [f.relationship.id for f in snap.facts]
    texts = [fact_dict(f, "grimjaw")["text"] for f in row["facts"]]
    assert texts == [f.sentence() for f in snap.facts]
    assert row["npc"]["id"] == "grimjaw"
