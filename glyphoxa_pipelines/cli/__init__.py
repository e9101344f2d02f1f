"""The `glyphoxa` command. Each concern registers its commands from its own module; modules
import heavy dependencies (Dagster, torch) inside the commands, so `glyphoxa serve` never
loads Dagster."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="glyphoxa",
    help="Glyphoxa memory: NPC memory on PostgreSQL + pgvector, built by Dagster.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

COMMAND_MODULES = (
    "db_commands",
    "campaign_commands",
    "import_commands",
    "archive_commands",
    "correct",
    "pipeline_commands",
    "serve_commands",
    "spool_commands",
    "recap_commands",
    "inspect_commands",
    "discord_commands",
    "voice_commands",
    "demo",
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"glyphoxa_pipelines.cli.{_name}").register(app)


def main() -> None:
    app()
