"""`glyphoxa recap show|play S`: a session's "previously on…" recap, read from the database
(the pipeline wrote it), as text or spoken from its audio file."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from glyphoxa_pipelines.cli.errors import user_errors

if TYPE_CHECKING:
    from glyphoxa_pipelines.memory import Recap

console = Console()
recap_app = typer.Typer(help='Session recaps ("previously on…").', no_args_is_help=True)

# Players tried in order when none is named: the first one installed plays the file.
PLAYERS = ("ffplay -nodisp -autoexit -loglevel error", "paplay", "aplay", "afplay")

SessionArg = typer.Argument(..., help="Session id.")


def _load(session_id: str) -> Recap:
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import NotFoundError, RecapStore, SessionStore

    with open_database() as db:
        recap = RecapStore(db).get(session_id)
        if recap is None:
            known = SessionStore(db).get_session(session_id) is not None
            raise NotFoundError(
                f"no recap yet for session {session_id!r} (run `glyphoxa process`)"
                if known
                else f"unknown session {session_id!r}"
            )
    return recap


@recap_app.command("show")
def show(session_id: str = SessionArg) -> None:
    """Print the recap's text (and its audio file, when there is one)."""
    with user_errors():
        recap = _load(session_id)
    console.print(recap.text, highlight=False, markup=False)
    if recap.audio_path:
        there = Path(recap.audio_path).is_file()
        console.print(f"\naudio: {recap.audio_path}" + ("" if there else " (missing)"),
                      highlight=False, markup=False)


@recap_app.command("play")
def play(
    session_id: str = SessionArg,
    player: str | None = typer.Option(
        None, help="Command that plays a file (the path is appended); default: the first of "
        "ffplay, paplay, aplay, afplay installed."
    ),
) -> None:
    """Play the recap's audio file."""
    with user_errors():
        recap = _load(session_id)
    audio = Path(recap.audio_path) if recap.audio_path else None
    if audio is None or not audio.is_file():
        console.print(f"session {session_id} has no recap audio; the text:\n", highlight=False)
        console.print(recap.text, highlight=False, markup=False)
        raise typer.Exit(2)
    command = shlex.split(player) if player else next(
        (shlex.split(p) for p in PLAYERS if shutil.which(p.split()[0])), None
    )
    if not command:
        console.print(f"no audio player found (tried {', '.join(p.split()[0] for p in PLAYERS)});"
                      f" the file is {audio}", highlight=False, markup=False)
        raise typer.Exit(2)
    done = subprocess.run([*command, str(audio)], check=False)
    if done.returncode != 0:
        console.print(f"{command[0]} exited with {done.returncode}", highlight=False)
        raise typer.Exit(done.returncode)
    console.print(f"played {audio}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(recap_app, name="recap")
