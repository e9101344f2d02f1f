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


# "Hidden from all until revealed": the plot names grimjaw and hask, yet neither sees it until
# the DM reveals it; then those told, and after a reveal to all, everyone.
HIDDEN_STAGES = {
    "hidden": {"grimjaw": False, "hask": False, "eldrinax": False, PUBLIC_VIEWER: False},
    "told hask": {"grimjaw": False, "hask": True, "eldrinax": False, PUBLIC_VIEWER: False},
    "to all": {"grimjaw": True, "hask": True, "eldrinax": True, PUBLIC_VIEWER: True},
}


def _sees_plot(db: Database, g: KnowledgeGraph, cid: str, who: str) -> dict[str, bool]:
    """Whether `who` sees the plot through each read path (all must agree)."""

    def plot(facts: list[object]) -> bool:
        return "plots_against" in {f.relationship.rel_type for f in facts}  # type: ignore[attr-defined]

    rels = g.get_relationships(cid, "grimjaw", direction="both", npc_id=who)
    paths = {
        "get_relationships": "plots_against" in {r.rel_type for r in rels},
        "neighbors": plot(g.neighbors(cid, "hask", npc_id=who, include_facts=True).facts),
        "find_path": bool(g.find_path(cid, "grimjaw", "hask", npc_id=who, max_depth=1)),
        "facts_about": plot(db.run(fs.facts_about_op(cid, "hask", who))),
        "search_facts": plot([f for f, _ in db.run(fs.search_facts_op(cid, who, query="plots"))]),
    }
    if who in ("grimjaw", "hask"):  # its own knowledge: the facts naming it, or told it
        paths["identity_snapshot"] = plot(g.identity_snapshot(cid, who).facts)
        sid = SessionStore(db).start_session(cid).id
        row = db.run(hot_row_op(sid, who, recent_limit=1, fact_limit=20, window_s=60),
                     transaction=False)
        paths["hot_read"] = any(f["rel_type"] == "plots_against" for f in row["facts"])
    return paths


def test_a_hidden_fact_is_seen_by_nobody_until_the_dm_reveals_it(
    db: Database, campaign_id: str
) -> None:
    g = _seed(db, campaign_id)
    fact = g.add_relationship(
        Relationship(campaign_id, "grimjaw", "hask", "plots_against", visibility="hidden")
    )
    for stage, who_sees in HIDDEN_STAGES.items():
        if stage == "told hask":
            told = g.reveal(campaign_id, fact.id, ["hask"])
            assert (told.visibility, told.known_by) == ("hidden", ["hask"])
        elif stage == "to all":
            assert g.reveal(campaign_id, fact.id).visibility == "public"
        for who, expected in who_sees.items():
            paths = _sees_plot(db, g, campaign_id, who)
            assert paths == dict.fromkeys(paths, expected), (stage, who)
    # The DM's view (no viewer) always held it.
    assert g.get_relationships(campaign_id, "grimjaw", npc_id=None)


def test_a_revealed_hidden_fact_reads_as_a_secret_to_those_told(
    db: Database, campaign_id: str
) -> None:
    g = _seed(db, campaign_id)
    fact = g.add_relationship(
        Relationship(campaign_id, "grimjaw", "hask", "plots_against", visibility="hidden")
    )
    g.reveal(campaign_id, fact.id, ["hask", "hask"])
    seen = [f for f in g.identity_snapshot(campaign_id, "hask").facts
            if f.relationship.rel_type == "plots_against"]
    assert len(seen) == 1 and seen[0].secret and SECRET_MARK in seen[0].sentence()


def test_reveal_refuses_unknown_npcs_and_facts(db: Database, campaign_id: str) -> None:
    from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError

    g = _seed(db, campaign_id)
    fact = g.add_relationship(
        Relationship(campaign_id, "grimjaw", "hask", "plots_against", visibility="hidden")
    )
    with pytest.raises(NotFoundError):
        g.reveal(campaign_id, fact.id, ["nobody"])
    with pytest.raises(NotFoundError):
        g.reveal(campaign_id, 10**9)
    with pytest.raises(InvalidInputError):
        g.reveal(campaign_id, fact.id, [])
    assert g.get_relationship(campaign_id, fact.id).known_by == []
