"""Read a tabletop file and stage it for the DM's review (or preview it): shared by
`glyphoxa campaign import` and `glyphoxa campaign load`, which picks the reader by content."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from glyphoxa_pipelines.campaign.tabletop.world import ImportedWorld

console = Console(soft_wrap=True, highlight=False)


def preview(world: ImportedWorld) -> None:
    """What the import would offer the DM: entities by type, facts, DM-only notes."""
    kinds = Counter(e.type for e in world.entities)
    console.print(
        f"{escape(world.source)} ({world.format}): {len(world.entities)} entities ("
        + ", ".join(f"{n} {t}" for t, n in sorted(kinds.items()))
        + f"), {len(world.facts)} facts, "
        f"{sum(bool(e.dm_notes) for e in world.entities)} with DM-only notes"
    )
    for e in world.entities:
        extra = f" aka {', '.join(e.aliases)}" if e.aliases else ""
        secret = " [DM notes]" if e.dm_notes else ""
        console.print(escape(f"  {e.id}\t{e.type}\t{e.name}{extra}{secret}"))
    names = {e.id: e.name for e in world.entities}
    for f in world.facts:
        console.print(escape(f"  {names[f.source_id]} {f.rel_type} {names[f.target_id]}"))


def stage_file(path: Path, fmt: str | None, campaign: str, dry_run: bool) -> None:
    """Read `path` (format given or detected); preview it, or stage it as a pending batch."""
    from glyphoxa_pipelines.campaign.tabletop.detect import read_world_file
    from glyphoxa_pipelines.campaign.tabletop.review import ImportReview
    from glyphoxa_pipelines.db import open_database

    world, text = read_world_file(path, fmt)
    preview(world)
    if dry_run:
        console.print("dry run: nothing was written")
        return
    with open_database() as db:
        staged = ImportReview(db).stage(campaign, world, text)
    if staged.created:
        console.print(
            f"staged as import batch {staged.id} for campaign {escape(campaign)}: nothing "
            f"enters the world until the DM accepts it (glyphoxa campaign accept {staged.id} "
            f"-c {escape(campaign)} [--entity NAME]... or glyphoxa campaign discard)"
        )
    else:
        console.print(
            f"this file was imported before as batch {staged.id} ({staged.status}); "
            "nothing changed"
        )
