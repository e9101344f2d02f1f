"""`glyphoxa spool list|retry|drop`: the realtime service's dead letters.

A spooled utterance that the database refused on replay is not lost: it waits in a dead-letter
file beside the spool (the service's /healthz counts them). These commands show what is there
and why, write letters again once the cause is fixed (idempotent: nothing lands twice), or
drop them. They work while the service runs.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from glyphoxa_pipelines.cli.errors import user_errors

console = Console()
spool_app = typer.Typer(help="Spooled utterances the database refused on replay (dead letters).")

DirOption = typer.Option(None, "--dir", help="Spool folder (default: the configured one).")


def _directory(directory: Path | None) -> Path:
    from glyphoxa_pipelines.config import Settings

    return directory or Settings.from_env().spool_dir


@spool_app.command("list")
def list_command(directory: Path | None = DirOption) -> None:
    """One line per dead letter: id, session, entries, when, and the database's reason."""
    from realtime.dead_letters import dead_letter_files

    total = 0
    for dead in dead_letter_files(_directory(directory)):
        for letter in dead.list():
            total += 1
            what = (
                f"unreadable line ({len(letter['raw'])} characters)"
                if "raw" in letter
                else f"session {letter.get('session_id')}, "
                f"{len(letter.get('entries', []))} entries"
            )
            console.print(f"{letter.get('id')}  {letter.get('dead_at', '?')}  {what}\n"
                          f"    {letter.get('error')}", highlight=False, markup=False)
    console.print(f"{total} dead letter(s)")


@spool_app.command("retry")
def retry_command(
    ids: list[str] = typer.Argument(None, help="Dead-letter ids (see `glyphoxa spool list`)."),
    all_: bool = typer.Option(False, "--all", help="Retry every dead letter."),
    directory: Path | None = DirOption,
) -> None:
    """Write dead letters to the database again; those that land are removed."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import SessionStore
    from realtime.dead_letters import dead_letter_files, retry

    if not ids and not all_:
        console.print("name dead-letter ids, or --all")
        raise typer.Exit(2)
    files = dead_letter_files(_directory(directory))
    with user_errors(), open_database(Settings.from_env()) as db:
        store = SessionStore(db)
        written, failed = retry(files, None if all_ else set(ids),
                                lambda session_id, entries: store.write_entries(session_id,
                                                                                entries))
    for lid, why in failed.items():
        console.print(f"{lid}: still refused: {why}", highlight=False, markup=False)
    unknown = set(ids or ()) - set(written) - set(failed)
    for lid in sorted(unknown):
        console.print(f"{lid}: no such dead letter", highlight=False, markup=False)
    console.print(f"{len(written)} written, {len(failed)} still dead")
    if failed or unknown:
        raise typer.Exit(1)


@spool_app.command("drop")
def drop_command(
    ids: list[str] = typer.Argument(None, help="Dead-letter ids (see `glyphoxa spool list`)."),
    all_: bool = typer.Option(False, "--all", help="Drop every dead letter."),
    directory: Path | None = DirOption,
) -> None:
    """Delete dead letters for good (what they said is then lost)."""
    from realtime.dead_letters import dead_letter_files

    if not ids and not all_:
        console.print("name dead-letter ids, or --all")
        raise typer.Exit(2)
    dropped = 0
    for dead in dead_letter_files(_directory(directory)):
        wanted = [str(d.get("id")) for d in dead.list()] if all_ else ids
        dropped += dead.remove(wanted)
    console.print(f"{dropped} dropped")
    if not all_ and dropped < len(set(ids)):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(spool_app, name="spool")
