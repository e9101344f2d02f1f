"""Slash commands through the real CommandTree's callbacks, with interaction doubles, against
the real service on the embedded database: what is sent, and what the database holds after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from discord_fakes import GUILD, FakeAttachment, FakeInteraction, member

from glyphoxa_pipelines.memory import (
    Entity,
    KnowledgeGraph,
    Recap,
    RecapStore,
    Relationship,
    SessionStore,
)
from realtime.discord.commands import GlyphoxaTree
from realtime.discord.commands.entities import entity_choices
from realtime.discord.commands.facts import fact_choices
from realtime.discord.commands.sessions import session_choices
from realtime.discord.context import BotContext
from realtime.discord.replies import UNEXPECTED

DM = member("DM")
PLAYER = member("Players")


def cmd(tree: GlyphoxaTree, path: str) -> Any:
    head, _, tail = path.partition(" ")
    found = tree.get_command(head)
    return found.get_command(tail) if tail else found


async def call(tree: GlyphoxaTree, path: str, user: Any = DM, guild: int | None = GUILD,
               **options: Any) -> FakeInteraction:
    interaction = FakeInteraction(guild, user)
    await cmd(tree, path).callback(interaction, **options)
    return interaction


async def test_entity_add_writes_entity_and_profile(tree: GlyphoxaTree, db: Any,
                                                    campaign_id: str) -> None:
    out = await call(tree, "entity add", name="Mira Vance", type_="NPC",
                     personality="Sharp-tongued smuggler", attributes='{"race": "half-elf"}')
    assert out.last.embed is not None and "Added Mira Vance (npc)" in out.last.text
    graph = KnowledgeGraph(db)
    ent = graph.resolve(campaign_id, "mira vance")
    assert ent is not None and ent.attributes == {"race": "half-elf"} and ent.provenance == "dm"
    assert graph.get_npc_profile(campaign_id, ent.id).personality == "Sharp-tongued smuggler"


async def test_players_cannot_edit(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    out = await call(tree, "entity add", PLAYER, name="Intruder", type_="npc")
    assert out.last.ephemeral and "Only the DM" in out.last.text
    assert KnowledgeGraph(db).resolve(campaign_id, "Intruder") is None
    manager = await call(tree, "entity add", member(manager=True), name="Ally", type_="npc")
    assert "Added Ally" in manager.last.text  # server managers count as DM
    for path in ("session start", "review"):
        denied = await call(tree, path, PLAYER)
        assert denied.last.ephemeral and "Only the DM" in denied.last.text


async def test_bad_input_is_named_and_nothing_is_written(tree: GlyphoxaTree, db: Any,
                                                         campaign_id: str) -> None:
    bad_json = await call(tree, "entity add", name="Mira", type_="npc", attributes="{race: elf")
    assert bad_json.last.ephemeral and "attributes: not valid JSON" in bad_json.last.text
    not_object = await call(tree, "entity add", name="Mira", type_="npc", attributes="[1]")
    assert "expected a JSON object" in not_object.last.text
    bad_type = await call(tree, "entity add", name="Mira", type_="not a type!")
    assert bad_type.last.ephemeral and bad_type.last.text.startswith("Invalid input: type")
    personality = await call(tree, "entity add", name="Mira", type_="item", personality="Loud")
    assert "personality is for NPCs" in personality.last.text
    assert KnowledgeGraph(db).resolve(campaign_id, "Mira") is None
    for out in (bad_json, not_object, bad_type, personality):
        assert "Traceback" not in out.last.text


async def test_entity_list_pages_and_anyone_may_read(tree: GlyphoxaTree, db: Any,
                                                    campaign_id: str) -> None:
    graph = KnowledgeGraph(db)
    for i in range(40):
        graph.add_entity(Entity(campaign_id, "", "location", f"Place {i:02d}"))
    graph.add_entity(Entity(campaign_id, "", "npc", "Grimjaw"))
    out = await call(tree, "entity list", PLAYER, type_="location")
    first = out.last
    assert not first.ephemeral and first.view is not None
    assert "location: 40" in first.text and "page 1/3" in first.text
    assert "**Place 00** (location)" in first.text and "Grimjaw" not in first.text
    assert len(first.embed.description) <= 4096
    view = first.view
    click = FakeInteraction(GUILD, PLAYER)
    await view.forward.callback(click)
    assert "page 2/3" in click.last.text and "Place 15" in click.last.text
    few = await call(tree, "entity list", PLAYER, type_="npc")
    assert few.last.view is None and "Grimjaw" in few.last.text
    none = await call(tree, "entity list", PLAYER, type_="quest")
    assert none.last.ephemeral and "No quest" in none.last.text


async def test_entity_remove(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    KnowledgeGraph(db).add_entity(Entity(campaign_id, "", "npc", "Grimjaw", ["Grimjaw Ironfist"]))
    unknown = await call(tree, "entity remove", name="Nobody")
    assert unknown.last.ephemeral and "unknown entity 'Nobody'" in unknown.last.text
    out = await call(tree, "entity remove", name="grimjaw ironfist")
    assert "Removed" in out.last.text and not out.last.ephemeral
    assert KnowledgeGraph(db).resolve(campaign_id, "Grimjaw") is None


async def test_autocomplete(ctx: BotContext, tree: GlyphoxaTree, db: Any,
                            campaign_id: str) -> None:
    graph = KnowledgeGraph(db)
    graph.add_entity(Entity(campaign_id, "", "npc", "Eldrinax", ["the Old Wizard"]))
    graph.add_entity(Entity(campaign_id, "", "location", "Tower of Whispers"))
    remove = cmd(tree, "entity remove")
    assert remove.get_parameter("name").autocomplete
    got = await entity_choices(ctx, FakeInteraction(GUILD, PLAYER), "old wiz")
    assert [(c.name, c.value) for c in got] == [("Eldrinax (npc)", "Eldrinax")]
    npcs = await entity_choices(ctx, FakeInteraction(GUILD, PLAYER), "", type_="npc")
    assert [c.value for c in npcs] == ["Eldrinax"]
    assert cmd(tree, "npc").get_parameter("name").autocomplete
    assert await entity_choices(ctx, FakeInteraction(9999, PLAYER), "") == []  # unmapped guild
    SessionStore(db).start_session(campaign_id, None, title="The Vault")
    sessions = await session_choices(ctx, FakeInteraction(GUILD, PLAYER), "vault")
    assert [c.name for c in sessions] == ["The Vault (live)"]


CAMPAIGN_YAML = """\
campaign:
  id: {cid}
  name: Loaded from Discord
entities:
  - name: Vexmira
    type: npc
    aliases: [the Silver Widow]
  - name: Ironhold
    type: location
relationships:
  - {{source: Vexmira, target: Ironhold, type: lives_in}}
npcs:
  - name: Vexmira
    personality: Cold and precise.
"""


async def test_campaign_load_from_attachment(tree: GlyphoxaTree, db: Any,
                                             campaign_id: str) -> None:
    file = FakeAttachment("world.yaml", CAMPAIGN_YAML.format(cid=campaign_id).encode())
    out = await call(tree, "campaign load", file=file)
    assert out.response.deferred == {"ephemeral": True, "thinking": True}
    assert out.last.kind == "followup" and "2 entities" in out.last.text
    assert "1 relationships" in out.last.text and "1 NPC profiles" in out.last.text
    graph = KnowledgeGraph(db)
    assert graph.resolve(campaign_id, "the silver widow").name == "Vexmira"

    broken = CAMPAIGN_YAML.format(cid=campaign_id).replace("type: location", "typo: location")
    bad = await call(tree, "campaign load", file=FakeAttachment("broken.yaml", broken.encode()))
    assert bad.last.ephemeral and "Malformed campaign file" in bad.last.text
    assert "broken.yaml:9:" in bad.last.text  # the line of the bad key

    other = CAMPAIGN_YAML.format(cid="someone-else").replace("Ironhold", "Elsewhere")
    refused = await call(tree, "campaign load", file=FakeAttachment("o.yaml", other.encode()))
    assert "this server runs" in refused.last.text
    assert graph.resolve(campaign_id, "Elsewhere") is None

    binary = await call(tree, "campaign load", file=FakeAttachment("x.yaml", b"\xff\xfe\x00"))
    assert "not UTF-8" in binary.last.text


async def test_tabletop_attachment_is_staged_for_review(tree: GlyphoxaTree, db: Any,
                                                        campaign_id: str) -> None:
    csv = (Path(__file__).parents[1] / "campaign" / "fixtures" / "entities.csv").read_bytes()
    out = await call(tree, "campaign load", file=FakeAttachment("sheet.csv", csv))
    assert out.last.ephemeral and "staged" in out.last.text and "accept" in out.last.text
    with db.connection() as conn:  # staged, not in the world yet
        (batches,) = conn.execute("SELECT count(*) FROM import_batches WHERE campaign_id = %s",
                                  (campaign_id,)).fetchone()
        (entities,) = conn.execute("SELECT count(*) FROM entities WHERE campaign_id = %s "
                                   "AND provenance = 'import'", (campaign_id,)).fetchone()
    assert batches == 1 and entities == 0
    again = await call(tree, "campaign load", file=FakeAttachment("sheet.csv", csv))
    assert "nothing changed" in again.last.text


async def test_session_lifecycle_and_scene(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    store = SessionStore(db)
    no_session = await call(tree, "scene set", location="Ironhold")
    assert "No live session" in no_session.last.text
    started = await call(tree, "session start", title="Into the Mines")
    live = store.list_sessions(campaign_id, 5, status="live")
    assert [s.title for s in live] == ["Into the Mines"] and live[0].id in started.last.text
    again = await call(tree, "session start", title="Oops")
    assert again.last.ephemeral and "still live" in again.last.text
    assert len(store.list_sessions(campaign_id, 5)) == 1

    await call(tree, "scene set", location="Thal'Durin Mines", present="Grimjaw, Brannoc ,",
               quests="Find the shard")
    scene = store.get_session(live[0].id).scene
    assert scene["location"] == "Thal'Durin Mines" and scene["present"] == ["Grimjaw", "Brannoc"]
    assert scene["quests"] == ["Find the shard"]

    ended = await call(tree, "session end")
    assert "Session ended: Into the Mines" in ended.last.text
    assert store.get_session(live[0].id).status == "ended"
    nothing = await call(tree, "session end")
    assert nothing.last.ephemeral and "No live session" in nothing.last.text


async def test_recap(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    store = SessionStore(db)
    nothing = await call(tree, "recap", PLAYER)
    assert "No session has ended" in nothing.last.text
    first = store.start_session(campaign_id, None, title="One")
    store.end_session(first.id)
    pending = await call(tree, "recap", PLAYER)
    assert pending.last.ephemeral and "No recap" in pending.last.text
    RecapStore(db).save(Recap(first.id, campaign_id, "Previously, the party met Grimjaw."))
    out = await call(tree, "recap", PLAYER)
    assert "the party met Grimjaw" in out.last.text and not out.last.ephemeral
    named = await call(tree, "recap", PLAYER, session=first.id)
    assert "the party met Grimjaw" in named.last.text
    unknown = await call(tree, "recap", PLAYER, session="no-such-session")
    assert unknown.last.ephemeral and "unknown session" in unknown.last.text


def _fact(db: Any, campaign_id: str, **kw: Any) -> Relationship:
    graph = KnowledgeGraph(db)
    for name in ("Grimjaw", "Vexmira", "Eldrinax", "Ironhold", "Tower"):
        if graph.resolve(campaign_id, name) is None:
            graph.add_entity(Entity(campaign_id, "", "npc" if name[0] in "GVE" else "location",
                                    name))
    base = dict(campaign_id=campaign_id, source_id="grimjaw", target_id="vexmira",
                rel_type="distrusts")
    return graph.add_relationship(Relationship(**{**base, **kw}))


async def test_review_queue_buttons(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    a = _fact(db, campaign_id, status="pending", confidence=0.5, provenance="extracted",
              evidence="Grimjaw: I'd never trust the Widow.")
    b = _fact(db, campaign_id, rel_type="owes_money_to", status="pending", confidence=0.4,
              provenance="extracted")
    out = await call(tree, "review")
    assert out.last.ephemeral and "Review 1/2" in out.last.text
    assert "Grimjaw distrusts Vexmira" in out.last.text and "never trust" in out.last.text
    view = out.last.view
    sneaky = FakeInteraction(GUILD, PLAYER)
    await view.confirm.callback(sneaky)
    assert sneaky.last.ephemeral and "Only the DM" in sneaky.last.text
    graph = KnowledgeGraph(db)
    assert graph.get_relationship(campaign_id, a.id).status == "pending"

    click = FakeInteraction(GUILD, DM)
    await view.confirm.callback(click)
    assert "Review 2/2" in click.last.text
    confirmed = graph.get_relationship(campaign_id, a.id)
    assert confirmed.status == "canon" and confirmed.dm_confirmed
    click = FakeInteraction(GUILD, DM)
    await view.reject.callback(click)
    assert "Done: 1 confirmed, 1 rejected" in click.last.text and click.last.view is None
    assert graph.get_relationship(campaign_id, b.id).status == "rejected"
    empty = await call(tree, "review")
    assert "empty" in empty.last.text


async def test_fact_secret_reveal_retcon(ctx: BotContext, tree: GlyphoxaTree, db: Any,
                                         campaign_id: str) -> None:
    fact = _fact(db, campaign_id, rel_type="lives_in", target_id="tower")
    choices = await fact_choices(ctx, FakeInteraction(GUILD, DM), "")
    assert (f"#{fact.id} Grimjaw lives in Tower", str(fact.id)) in [(c.name, c.value)
                                                                    for c in choices]
    assert await fact_choices(ctx, FakeInteraction(GUILD, PLAYER), "") == []  # no spoilers
    graph = KnowledgeGraph(db)

    out = await call(tree, "fact secret", fact=str(fact.id), known_by="Eldrinax")
    assert out.last.ephemeral and "known to Eldrinax" in out.last.text
    rel = graph.get_relationship(campaign_id, fact.id)
    assert rel.visibility == "secret" and rel.known_by == ["eldrinax"]

    told = await call(tree, "fact reveal", fact=f"#{fact.id}", to="Vexmira")
    assert "revealed to Vexmira" in told.last.text
    rel = graph.get_relationship(campaign_id, fact.id)
    assert rel.visibility == "secret" and set(rel.known_by) == {"eldrinax", "vexmira"}
    await call(tree, "fact reveal", fact=f"#{fact.id}")
    assert graph.get_relationship(campaign_id, fact.id).visibility == "public"

    bad = await call(tree, "fact reveal", fact="the tower thing")
    assert bad.last.ephemeral and "pick one from the list" in bad.last.text
    missing = await call(tree, "fact retcon", fact="999999999", new_target="Ironhold")
    assert "unknown fact 999999999" in missing.last.text

    out = await call(tree, "fact retcon", fact=str(fact.id), new_target="Ironhold")
    assert "no longer true; replaced by fact #" in out.last.text
    old = graph.get_relationship(campaign_id, fact.id)
    assert old.invalidated_at is not None and old.invalidated_by is not None
    new = graph.get_relationship(campaign_id, old.invalidated_by)
    assert (new.source_id, new.rel_type, new.target_id) == ("grimjaw", "lives_in", "ironhold")


async def test_npc_sees_only_what_it_knows(tree: GlyphoxaTree, db: Any, campaign_id: str) -> None:
    _fact(db, campaign_id, rel_type="lives_in", source_id="eldrinax", target_id="tower")
    _fact(db, campaign_id, rel_type="plots_against", source_id="vexmira", target_id="ironhold",
          visibility="secret")
    out = await call(tree, "npc", name="Eldrinax")
    assert out.last.ephemeral and "identity (no live session)" in out.last.text
    assert "Eldrinax lives in Tower" in out.last.text and "plots" not in out.last.text
    SessionStore(db).start_session(campaign_id, None, title="Live")
    live = await call(tree, "npc", name="Eldrinax")
    assert "hot context" in live.last.text and "Tower" in live.last.text
    assert "plots" not in live.last.text
    vex = await call(tree, "npc", name="Vexmira")
    assert "plots against Ironhold" in vex.last.text  # its own secret: it knows
    unknown = await call(tree, "npc", name="Nobody")
    assert "unknown entity 'Nobody'" in unknown.last.text
    assert (await call(tree, "npc", PLAYER, name="Eldrinax")).last.ephemeral


async def test_degraded_database_and_bugs_give_short_messages(
    ctx: BotContext, tree: GlyphoxaTree, db: Any, campaign_id: str, monkeypatch: Any
) -> None:
    svc = ctx.service
    svc.guard.degraded = True
    try:
        out = await call(tree, "entity add", name="Ghost", type_="npc")
    finally:
        svc.guard.degraded = False
    assert out.last.ephemeral and out.last.text.startswith("Memory degraded")
    assert KnowledgeGraph(db).resolve(campaign_id, "Ghost") is None

    async def boom(campaign: str) -> list[Any]:
        raise RuntimeError("internal detail that must not leak")

    monkeypatch.setattr(svc, "review_queue", boom)
    bug = await call(tree, "review")
    assert bug.last.ephemeral and bug.last.content == UNEXPECTED

    dms = await call(tree, "entity list", PLAYER, guild=None)
    assert "not in direct messages" in dms.last.text
    unmapped = await call(tree, "entity list", PLAYER, guild=9999)
    assert "runs no campaign" in unmapped.last.text


async def test_tree_error_handler_answers_failed_checks(tree: GlyphoxaTree) -> None:
    from discord import app_commands

    interaction = FakeInteraction(GUILD, PLAYER)
    await tree.on_error(interaction, app_commands.CheckFailure("Not here."))
    assert interaction.last.ephemeral and interaction.last.content == "Not here."


def test_every_message_fits_discord(tree: GlyphoxaTree) -> None:
    names = sorted(c.qualified_name for c in tree.walk_commands())
    assert names == sorted([
        "entity", "entity add", "entity list", "entity remove", "campaign", "campaign load",
        "session", "session start", "session end", "scene", "scene set", "fact",
        "fact secret", "fact reveal", "fact retcon", "recap", "review", "npc",
    ])
    payload = [c.to_dict(tree) for c in tree.get_commands()]
    assert json.dumps(payload)  # every command serialises for Discord's sync


async def test_review_carries_heard_spellings_after_the_facts(
    tree: GlyphoxaTree, db: Any, campaign_id: str
) -> None:
    from glyphoxa_pipelines.memory.pipeline_rows.knowledge_rows import suggest_spellings_op
    from glyphoxa_pipelines.memory.session_log import SessionStore

    fact = _fact(db, campaign_id, status="pending", confidence=0.5, provenance="extracted")
    session = SessionStore(db).start_session(campaign_id, f"{campaign_id}-heard").id
    assert db.run(suggest_spellings_op(campaign_id, session,
                                       {"grimjaw": ["Grimjew"], "ironhold": ["Ironhald"]})) == 2
    out = await call(tree, "review")
    assert "Review 1/3" in out.last.text and "Grimjaw distrusts Vexmira" in out.last.text
    view = out.last.view
    click = FakeInteraction(GUILD, DM)
    await view.skip.callback(click)
    assert "Review 2/3" in click.last.text and "Grimjew" in click.last.text
    assert "heard for **Grimjaw**" in click.last.text
    click = FakeInteraction(GUILD, DM)
    await view.confirm.callback(click)
    assert "Review 3/3" in click.last.text and "Ironhald" in click.last.text
    graph = KnowledgeGraph(db)
    assert graph.get_entity(campaign_id, "grimjaw").aliases == ["Grimjew"]
    click = FakeInteraction(GUILD, DM)
    await view.reject.callback(click)
    assert "Done: 1 confirmed, 1 rejected" in click.last.text
    assert graph.get_entity(campaign_id, "ironhold").aliases == []
    assert graph.get_relationship(campaign_id, fact.id).status == "pending"  # skipped
    again = await call(tree, "review")
    assert "Review 1/1" in again.last.text  # the skipped fact; both spellings are answered
