"""`glyphoxa campaign load` and `glyphoxa entity add|list|remove|keywords`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from glyphoxa_pipelines.cli.errors import user_errors

console = Console()
campaign_app = typer.Typer(help="Campaigns: load a campaign YAML file.")
entity_app = typer.Typer(help="Entities of a campaign's knowledge graph.")

CampaignOpt = typer.Option(..., "--campaign", "-c", help="Campaign id.")


@campaign_app.command("load")
def load(
    file: Path = typer.Argument(..., help="Campaign YAML file."),
    campaign: str | None = typer.Option(
        None, "--campaign", "-c", help="Campaign id (needed when the file has no campaign: block)."
    ),
) -> None:
    """Load (or update) a campaign from YAML in one transaction; idempotent. A Foundry
    world, Roll20 export or CSV (told by content) is staged for the DM's review instead."""
    from glyphoxa_pipelines.campaign.campaign_file import (
        CampaignFileError,
        check_campaign_id,
        parse_campaign_text,
    )
    from glyphoxa_pipelines.campaign.campaign_loader import CampaignChoiceError, CampaignLoader
    from glyphoxa_pipelines.campaign.input_file import InputFileError, read_input_text
    from glyphoxa_pipelines.campaign.tabletop.detect import detect_format
    from glyphoxa_pipelines.campaign.tabletop.world import TabletopFileError
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory.limits import LimitError

    errors = (CampaignFileError, CampaignChoiceError, LimitError, InputFileError,
              TabletopFileError)
    with user_errors(*errors):
        if campaign is not None:
            check_campaign_id(campaign)
        text = read_input_text(file)
        fmt = detect_format(text)
        if fmt != "yaml":
            from glyphoxa_pipelines.cli.world_import import stage_file

            if campaign is None:
                raise CampaignChoiceError(f"{file} is a {fmt} import: choose --campaign")
            stage_file(file, fmt, campaign, dry_run=False)
            return
        parsed = parse_campaign_text(text, str(file))
        with open_database() as db:
            report = CampaignLoader(db).load(parsed, campaign)
    console.print(
        f"campaign {report.campaign_id}: {report.entities} entities "
        f"({report.entities_changed} changed, {report.removed_entities} removed), "
        f"{report.relationships} relationships ({report.removed_relationships} removed), "
        f"{report.npcs} NPC profiles; DM decisions kept: {report.dm_kept}"
        + (f", {report.handed_to_dm} dropped rows kept as the DM's" if report.handed_to_dm else "")
    )


@campaign_app.command("list")
def list_campaigns() -> None:
    """One campaign per line: id, name."""
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore

    with user_errors(), open_database() as db:
        for c in CampaignStore(db).list():
            print(f"{c.id}\t{c.name}")


def _parse_attrs(pairs: list[str]) -> dict[str, object]:
    import json

    attrs: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--attr {pair!r}: expected key=value")
        try:
            attrs[key.strip()] = json.loads(value)  # numbers, booleans, lists
        except json.JSONDecodeError:
            attrs[key.strip()] = value
    return attrs


@entity_app.command("add")
def add(
    name: str = typer.Argument(...),
    type_: str = typer.Argument(..., metavar="TYPE"),
    campaign: str = CampaignOpt,
    attr: list[str] = typer.Option([], "--attr", help="key=value (repeatable)."),
    alias: list[str] = typer.Option([], "--alias", help="Alias (repeatable)."),
) -> None:
    """Add or replace an entity (DM-made)."""
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore, Entity, KnowledgeGraph
    from glyphoxa_pipelines.memory.limits import LimitError, check_id, check_json, check_name

    attrs = _parse_attrs(attr)
    with user_errors(LimitError):  # refused here, before the database could refuse it
        check_id(campaign, "--campaign")
        check_name(name, "entity name")
        check_name(type_, "entity type")
        for a in alias:
            check_name(a, "--alias")
        attrs = check_json(attrs, "--attr")
    with user_errors(), open_database() as db:
        CampaignStore(db).require(campaign)
        ent = KnowledgeGraph(db).add_entity(
            Entity(campaign, "", type_, name, aliases=alias, attributes=attrs, provenance="dm")
        )
    print(f"{ent.id}\t{ent.type}\t{ent.name}")


@entity_app.command("list")
def list_entities(
    campaign: str = CampaignOpt,
    type_: str | None = typer.Option(None, "--type", "-t", help="Only this type."),
) -> None:
    """One entity per line: id, type, name."""
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore, KnowledgeGraph

    with user_errors(), open_database() as db:
        CampaignStore(db).require(campaign)
        for e in KnowledgeGraph(db).find_entities(campaign, type=type_, limit=100_000):
            print(f"{e.id}\t{e.type}\t{e.name}")


@entity_app.command("remove")
def remove(
    name: str = typer.Argument(..., help="Name, alias or id."), campaign: str = CampaignOpt
) -> None:
    """Remove an entity and its facts."""
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore, KnowledgeGraph

    with user_errors(), open_database() as db:
        CampaignStore(db).require(campaign)
        graph = KnowledgeGraph(db)
        ent = graph.resolve(campaign, name)
        if ent is None:
            console.print(f"no entity {name!r} in campaign {campaign!r}; nothing removed")
            return
        graph.delete_entity(campaign, ent.id)
    console.print(f"removed {ent.id} ({ent.name})")


@entity_app.command("keywords")
def keywords(campaign: str = CampaignOpt) -> None:
    """The campaign's names and aliases, one per line: the STT keyword-boost list."""
    from glyphoxa_pipelines.correction import keyword_list
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore
    from glyphoxa_pipelines.memory.correction_targets import correction_entities_op

    with user_errors(), open_database() as db:
        CampaignStore(db).require(campaign)
        ents = db.run(correction_entities_op(campaign))
    for name in keyword_list(ents):
        print(name)


def register(app: typer.Typer) -> None:
    app.add_typer(campaign_app, name="campaign")
    app.add_typer(entity_app, name="entity")
