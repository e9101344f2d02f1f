"""`glyphoxa campaign export C -o FILE.tar.gz`; `campaign import FILE.tar.gz [--as C2]` comes
here from `import_commands` when the file is an archive."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from glyphoxa_pipelines.cli.campaign_commands import campaign_app
from glyphoxa_pipelines.cli.errors import user_errors
from glyphoxa_pipelines.cli.world_import import console

GZIP_MAGIC = b"\x1f\x8b"


def is_archive(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False


@campaign_app.command("export")
def export(
    campaign: str = typer.Argument(..., help="Campaign id."),
    output: Path = typer.Option(..., "--output", "-o", help="Archive file (.tar.gz)."),
) -> None:
    """Everything a campaign is, as one versioned archive with a manifest and checksums."""
    from glyphoxa_pipelines.campaign.archive.archive import export_campaign
    from glyphoxa_pipelines.db import open_database

    with user_errors(OSError), open_database() as db:
        rows = export_campaign(db, campaign, output)
    console.print(escape(f"campaign {campaign} -> {output}: ")
                  + ", ".join(f"{n} {t}" for t, n in rows.items() if n))


def import_archive(path: Path, as_id: str | None) -> None:
    from glyphoxa_pipelines.campaign.archive.archive import import_campaign
    from glyphoxa_pipelines.campaign.archive.bundle import ArchiveError
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory.limits import LimitError

    settings = Settings.from_env()
    with user_errors(ArchiveError, LimitError, OSError), open_database(settings) as db:
        rep = import_campaign(db, path, as_id, settings.home / "recaps")
    console.print(
        escape(f"campaign {rep.campaign_id} imported from {path}: ")
        + ", ".join(f"{n} {t}" for t, n in rep.rows.items() if n)
        + (f"; {rep.audio_files} recap audio files" if rep.audio_files else "")
        + ("; entry and fact numbers renumbered" if rep.renumbered else "")
    )


def register(app: typer.Typer) -> None:
    """The commands join `glyphoxa campaign`, registered by `campaign_commands`."""
