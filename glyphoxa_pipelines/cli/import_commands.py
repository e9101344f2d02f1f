"""`glyphoxa campaign import|pending|accept|discard`: tabletop worlds through the DM's review."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from glyphoxa_pipelines.cli.campaign_commands import CampaignOpt, campaign_app
from glyphoxa_pipelines.cli.errors import user_errors
from glyphoxa_pipelines.cli.world_import import console


@campaign_app.command("import")
def import_world(
    file: Path = typer.Argument(
        ..., help="Foundry world JSON, Roll20 export JSON, CSV, or a campaign archive."
    ),
    campaign: str | None = typer.Option(
        None, "--campaign", "-c", help="Campaign id (for a tabletop file)."
    ),
    format_: str | None = typer.Option(
        None, "--format", "-f", help="foundry, roll20 or csv (default: from the content)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be staged."),
    as_id: str | None = typer.Option(
        None, "--as", help="For an archive: the campaign id to restore it as."
    ),
) -> None:
    """Stage a virtual tabletop's world for the DM's review (nothing enters the graph
    yet), or restore a campaign archive (`campaign export`)."""
    from glyphoxa_pipelines.cli.archive_commands import import_archive, is_archive

    if format_ is None and is_archive(file):
        import_archive(file, as_id)
        return
    if campaign is None:
        raise typer.BadParameter("a tabletop import needs the campaign", param_hint="--campaign")
    from glyphoxa_pipelines.campaign.campaign_file import check_campaign_id
    from glyphoxa_pipelines.campaign.tabletop.detect import FORMATS
    from glyphoxa_pipelines.campaign.tabletop.world import TabletopFileError
    from glyphoxa_pipelines.cli.world_import import stage_file
    from glyphoxa_pipelines.memory.limits import LimitError

    if format_ is not None and format_ not in FORMATS:
        raise typer.BadParameter(f"one of {', '.join(FORMATS)}", param_hint="--format")
    with user_errors(TabletopFileError, LimitError):
        check_campaign_id(campaign)
        stage_file(file, format_, campaign, dry_run)


@campaign_app.command("pending")
def pending(campaign: str = CampaignOpt) -> None:
    """Import batches waiting for the DM, with their entities."""
    from glyphoxa_pipelines.campaign.tabletop.review import ImportReview
    from glyphoxa_pipelines.db import open_database

    with user_errors(), open_database() as db:
        batches = ImportReview(db).batches(campaign)
    if not batches:
        console.print("no import batches waiting")
    for b in batches:
        waiting = [e for e in b.entities if e["id"] not in set(b.accepted)]
        console.print(escape(f"{b.id}\t{b.format}\t{b.source}\t{len(waiting)} entities waiting"))
        for e in waiting:
            console.print(escape(f"  {e['id']}\t{e['type']}\t{e['name']}"))


@campaign_app.command("accept")
def accept(
    batch: str = typer.Argument(..., help="Import batch id."),
    campaign: str = CampaignOpt,
    entity: list[str] = typer.Option([], "--entity", "-e", help="Only this entity (repeatable)."),
) -> None:
    """Accept an import batch (or chosen entities of it) into the knowledge graph."""
    from glyphoxa_pipelines.campaign.tabletop.review import ImportReview, ReviewError
    from glyphoxa_pipelines.db import open_database

    with user_errors(ReviewError), open_database() as db:
        rep = ImportReview(db).accept(campaign, batch, entity or None)
    console.print(
        f"batch {rep.batch_id}: {len(rep.added)} entities added, {rep.facts} facts"
        + (f", {len(rep.already_there)} already in the world (left as they are)"
           if rep.already_there else "")
        + f"; batch {rep.status}"
    )


@campaign_app.command("discard")
def discard(batch: str = typer.Argument(..., help="Import batch id."),
            campaign: str = CampaignOpt) -> None:
    """Discard what is still waiting in an import batch."""
    from glyphoxa_pipelines.campaign.tabletop.review import ImportReview, ReviewError
    from glyphoxa_pipelines.db import open_database

    with user_errors(ReviewError), open_database() as db:
        n = ImportReview(db).discard(campaign, batch)
    console.print(f"batch {batch} discarded ({n} entities never entered the world)")


def register(app: typer.Typer) -> None:
    """The commands join `glyphoxa campaign`, registered by `campaign_commands`."""
