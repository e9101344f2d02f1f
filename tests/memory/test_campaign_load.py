"""Campaign YAML: idempotent loading, updates, and errors that load nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import psycopg
import psycopg.rows
import pytest

from glyphoxa_pipelines.campaign.campaign_file import (
    CampaignFileError,
    parse_campaign_file,
    parse_campaign_text,
)
from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader
from glyphoxa_pipelines.db import Database
from glyphoxa_pipelines.demo import SAMPLE_CAMPAIGN
from glyphoxa_pipelines.memory import CampaignStore, KnowledgeGraph


def _rows(db: Database, cid: str) -> tuple[list[tuple], list[tuple]]:
    with db.connection() as conn:
        ents = conn.execute(
            "SELECT id, type, name, aliases, attributes, updated_at FROM entities "
            "WHERE campaign_id = %s ORDER BY id",
            (cid,),
        ).fetchall()
        rels = conn.execute(
            "SELECT id, source_id, rel_type, target_id, visibility, known_by, confidence "
            "FROM relationships WHERE campaign_id = %s ORDER BY id",
            (cid,),
        ).fetchall()
    return ents, rels


def _doc(cid: str, extra_entity: str = "", rel_type: str = "lives_in") -> str:
    return textwrap.dedent(
        f"""\
        campaign: {{id: {cid}, name: Test}}
        entities:
          - {{name: Eldrinax, type: npc, aliases: [the Old Wizard]}}
          - {{name: Ironhold, type: location}}
          - {{name: Grimjaw, type: npc}}
        {extra_entity}
        relationships:
          - {{source: the old wizard, target: Ironhold, type: {rel_type}}}
          - {{source: Grimjaw, target: eldrinax, type: fears, visibility: [Grimjaw]}}
        npcs:
          - {{name: Eldrinax, personality: cryptic, behavior_rules: [riddles]}}
        """
    )


def test_sample_campaign_meets_the_demo_minimum() -> None:
    parsed = parse_campaign_file(SAMPLE_CAMPAIGN)
    assert len(parsed.entities) >= 12
    assert len({e.type for e in parsed.entities}) >= 5
    assert len(parsed.relationships) >= 20
    assert len(parsed.npcs) >= 3
    assert any(r.visibility != "public" for r in parsed.relationships)


def test_load_is_idempotent_and_updates_what_changed(db: Database, campaign_id: str) -> None:
    cid = campaign_id + "-yaml"
    loader = CampaignLoader(db)
    first = loader.load(parse_campaign_text(_doc(cid)))
    assert (first.entities, first.relationships, first.npcs) == (3, 2, 1)
    before = _rows(db, cid)
    second = loader.load(parse_campaign_text(_doc(cid)))
    assert second.entities_changed == 0
    assert _rows(db, cid) == before  # nothing changed, not even timestamps or ids
    g = KnowledgeGraph(db)
    secret = g.get_relationships(cid, "grimjaw")[0]
    assert secret.visibility == "secret" and secret.known_by == ["grimjaw"]
    assert g.get_npc_profile(cid, "eldrinax").behavior_rules == ["riddles"]

    changed = _doc(cid, extra_entity="  - {name: Vexmira, type: npc}", rel_type="rules")
    report = loader.load(parse_campaign_text(changed))
    assert report.entities_changed == 1 and report.removed_relationships == 1
    assert [r.rel_type for r in g.get_relationships(cid, "eldrinax")] == ["rules"]
    smaller = (
        _doc(cid)
        .replace("  - {name: Grimjaw, type: npc}\n", "")
        .replace(
            "  - {source: Grimjaw, target: eldrinax, type: fears, visibility: [Grimjaw]}\n", ""
        )
    )
    report = loader.load(parse_campaign_text(smaller))
    assert report.removed_entities == 2  # Grimjaw and Vexmira left the file
    assert g.get_entity(cid, "grimjaw") is None


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (
            "campaign: {id: c1, name: X}\nentities:\n  - name: A\n    type: npc\n    colour: red\n",
            5,
            "unknown key",
        ),
        (
            "campaign: {id: c1, name: X}\nrelationships:\n  - {source: A, target: B, type: knows}\n",
            3,
            "unknown entity 'A'",
        ),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: npc, aliases: 5}\n",
            3,
            "valid list",
        ),
        ("campaign: {id: c1, name: X}\nentities: [\n", 3, "invalid YAML"),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: npc}\n  - {name: a, type: npc}\n",
            4,
            "defined twice",
        ),
        (
            "campaign: {id: c1, name: X}\nentities:\n  - {name: A, type: location}\nnpcs:\n  - {name: A}\n",
            5,
            "not an npc",
        ),
        ("campaign: {id: c1, name: X}\ncampaign: {id: c2, name: Y}\n", 2, "duplicate key"),
        ("campaign: {id: C 1, name: X}\n", 1, "campaign.id"),
        ("- just\n- a list\n", 1, "expected a mapping"),
    ],
)
def test_malformed_files_name_line_and_problem(text: str, line: int, problem: str) -> None:
    with pytest.raises(CampaignFileError) as info:
        parse_campaign_text(text, "bad.yaml")
    assert f"bad.yaml:{line}:" in str(info.value)
    assert problem in str(info.value)


def test_bad_file_via_cli_loads_nothing(db: Database, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glyphoxa_pipelines.cli import app

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "campaign: {id: never-loaded, name: X}\nentities:\n  - {name: A, type: npc}\n"
        "relationships:\n  - {source: A, target: Nobody, type: knows}\n"
    )
    result = CliRunner().invoke(app, ["campaign", "load", str(bad)])
    assert result.exit_code == 2
    assert "bad.yaml:5" in result.output and "unknown entity 'Nobody'" in result.output
    assert CampaignStore(db).get("never-loaded") is None
    missing = CliRunner().invoke(app, ["campaign", "load", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "cannot read" in missing.output


# -- reload after DM decisions (issue 11, item 3) -------------------------------------------


def _dm_doc(cid: str, *, population: int = 1000, climate: str = "cold",
            personality: str = "cryptic", mood: str = "calm", lives_conf: float = 0.9,
            guards_evidence: str = "seen at the gate", fears: bool = True,
            hates: bool = True, guards: bool = True) -> str:
    rels = [
        "  - {source: Eldrinax, target: Ironhold, type: lives_in, "
        f"confidence: {lives_conf}}}",
    ]
    if guards:
        rels.append(
            f"  - {{source: Grimjaw, target: Ironhold, type: guards, evidence: {guards_evidence}}}"
        )
    if fears:
        rels.append("  - {source: Grimjaw, target: Eldrinax, type: fears, visibility: [Grimjaw]}")
    if hates:
        rels.append("  - {source: Eldrinax, target: Grimjaw, type: hates}")
    return "\n".join(
        [
            f"campaign: {{id: {cid}, name: Test}}",
            "entities:",
            "  - {name: Eldrinax, type: npc}",
            f"  - {{name: Ironhold, type: location, attributes: "
            f"{{population: {population}, climate: {climate}}}}}",
            "  - {name: Grimjaw, type: npc}",
            "relationships:",
            *rels,
            "npcs:",
            f"  - {{name: Eldrinax, personality: {personality}, emotional_state: {mood}}}",
            "",
        ]
    )


def _facts(db: Database, cid: str) -> dict[str, list[dict[str, object]]]:
    """Every fact row of the campaign (history included), by relation type."""
    out: dict[str, list[dict[str, object]]] = {}
    with db.connection() as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        for row in cur.execute(
            "SELECT * FROM relationships WHERE campaign_id = %s ORDER BY id", (cid,)
        ).fetchall():
            out.setdefault(row["rel_type"], []).append(row)
    return out


def test_reload_never_undoes_dm_decisions(db: Database, campaign_id: str) -> None:
    from glyphoxa_pipelines.memory import NpcProfile, Relationship

    cid = campaign_id + "-dm"
    loader = CampaignLoader(db)
    g = KnowledgeGraph(db)
    loader.load(parse_campaign_text(_dm_doc(cid)))
    facts = _facts(db, cid)
    assert sorted(facts) == ["fears", "guards", "hates", "lives_in"]

    # The DM's decisions, through the store operations the service's DM routes run.
    g.set_fact_status(cid, facts["guards"][0]["id"], "rejected", dm_confirmed=False)
    g.set_visibility(cid, facts["lives_in"][0]["id"], "secret", ["eldrinax"])
    g.invalidate_relationship(cid, facts["hates"][0]["id"])  # retcon, with a replacement
    g.add_relationship(
        Relationship(cid, "eldrinax", "grimjaw", "trusts", provenance="dm", dm_confirmed=True)
    )
    g.update_entity(cid, "ironhold", attributes={"population": 500})
    profile = g.get_npc_profile(cid, "eldrinax")
    g.upsert_npc_profile(
        NpcProfile(cid, "eldrinax", personality=profile.personality, emotional_state="furious")
    )

    def check_decisions() -> dict[str, list[dict[str, object]]]:
        now = _facts(db, cid)
        assert [r["status"] for r in now["guards"]] == ["rejected"]
        assert now["lives_in"][0]["visibility"] == "secret"
        assert now["lives_in"][0]["known_by"] == ["eldrinax"]
        assert len(now["hates"]) == 1 and now["hates"][0]["invalidated_at"] is not None
        assert [r["provenance"] for r in now["trusts"]] == ["dm"]
        assert g.get_entity(cid, "ironhold").attributes["population"] == 500
        assert g.get_npc_profile(cid, "eldrinax").emotional_state == "furious"
        return now

    # Reloading the same file (what every service start does) changes nothing.
    before = _facts(db, cid)
    report = loader.load(parse_campaign_text(_dm_doc(cid)))
    assert report.entities_changed == 0 and report.removed_relationships == 0
    assert report.dm_kept >= 5
    assert check_decisions() == before  # same rows, same ids, same timestamps

    # A changed file: its changes apply where the DM did not decide; the DM's stand.
    changed = _dm_doc(cid, population=2000, climate="warm", personality="grim", mood="wary",
                      lives_conf=0.8, guards_evidence="seen at dawn", fears=False)
    report = loader.load(parse_campaign_text(changed))
    now = check_decisions()
    assert report.removed_relationships == 1 and "fears" not in now  # unedited: removed
    assert g.get_entity(cid, "ironhold").attributes == {"population": 500, "climate": "warm"}
    assert g.get_npc_profile(cid, "eldrinax").personality == "grim"
    assert now["lives_in"][0]["confidence"] == pytest.approx(0.8)
    assert now["guards"][0]["evidence"] == "seen at dawn"
    assert sum(len(rows) for rows in now.values()) == 4  # lives_in, guards, hates, trusts

    # Dropping facts the DM decided on keeps them (history stays, the rejection stays the
    # DM's); re-adding the retconned fact afterwards makes it current again, once.
    report = loader.load(parse_campaign_text(_dm_doc(cid, fears=False, hates=False,
                                                     guards=False)))
    now = _facts(db, cid)
    assert report.removed_relationships == 0 and report.handed_to_dm == 1
    assert [(r["status"], r["provenance"]) for r in now["guards"]] == [("rejected", "dm")]
    assert len(now["hates"]) == 1 and now["hates"][0]["file_values"] is None
    loader.load(parse_campaign_text(_dm_doc(cid, fears=False, guards=False)))
    hates = _facts(db, cid)["hates"]
    assert [r["invalidated_at"] is None for r in hates] == [False, True]


def test_reload_removes_an_unedited_entity_but_hands_an_edited_one_to_the_dm(
    db: Database, campaign_id: str
) -> None:
    cid = campaign_id + "-drop"
    loader = CampaignLoader(db)
    g = KnowledgeGraph(db)
    doc = f"campaign: {{id: {cid}, name: Test}}\nentities:\n  - {{name: Eldrinax, type: npc}}\n"
    extra = "  - {name: Vexmira, type: npc}\n  - {name: Brask, type: npc}\n"
    loader.load(parse_campaign_text(doc + extra))
    g.update_entity(cid, "brask", attributes={"mood": "angry"})
    report = loader.load(parse_campaign_text(doc))
    assert report.removed_entities == 1 and report.handed_to_dm == 1
    assert g.get_entity(cid, "vexmira") is None
    brask = g.get_entity(cid, "brask")
    assert brask.provenance == "dm" and brask.attributes == {"mood": "angry"}


def test_a_campaign_file_can_hide_a_fact_from_every_npc(db: Database, campaign_id: str) -> None:
    cid = campaign_id + "-hidden"
    doc = _doc(cid).replace(
        "visibility: [Grimjaw]}", "visibility: [Grimjaw]}\n  - {source: Grimjaw, "
        "target: Ironhold, type: betrays, visibility: hidden}"
    )
    CampaignLoader(db).load(parse_campaign_text(doc))
    g = KnowledgeGraph(db)
    hidden = [r for r in g.get_relationships(cid, "grimjaw") if r.rel_type == "betrays"]
    assert [r.visibility for r in hidden] == ["hidden"]
    # Hidden even from the NPC it names; the other, merely secret fact Grimjaw still knows.
    known = {f.relationship.rel_type for f in g.identity_snapshot(cid, "grimjaw").facts}
    assert "fears" in known and "betrays" not in known


def test_a_symmetric_relation_stated_from_both_ends_is_one_fact(
    db: Database, campaign_id: str
) -> None:
    cid = campaign_id + "-sym"
    doc = _doc(cid).replace(
        "visibility: [Grimjaw]}", "visibility: [Grimjaw]}\n  - {source: Grimjaw, "
        "target: Eldrinax, type: ALLIED_WITH}\n  - {source: Eldrinax, target: Grimjaw, "
        "type: allied_with}"
    )
    loader = CampaignLoader(db)
    loader.load(parse_campaign_text(doc))
    before = _rows(db, cid)
    allied = [r for r in before[1] if r[2] == "allied_with"]
    assert len(allied) == 1
    loader.load(parse_campaign_text(doc))
    assert _rows(db, cid) == before  # reloading changes nothing
    g = KnowledgeGraph(db)
    for end in ("grimjaw", "eldrinax"):  # read from either end
        assert any(r.rel_type == "allied_with" for r in g.get_relationships(cid, end))
