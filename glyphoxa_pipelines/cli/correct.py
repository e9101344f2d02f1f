"""`glyphoxa correct`: fix misheard entity names in transcript lines (stdin → stdout).

A filter, so it composes with other tools: one output line per input line, in order, flushed
as it goes. Names come from a file (`Canonical|alias|alias` per line) or from a campaign's
knowledge graph; the database is imported only when `--campaign` is used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

import typer

from glyphoxa_pipelines.correction import (
    Corrector,
    LLMCorrector,
    NameIndex,
    parse_entity_lines,
)

EntityPair = tuple[str, list[str]]


def _file_entities(path: Path) -> list[EntityPair]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc}", param_hint="--entities") from exc
    return parse_entity_lines(text.splitlines())


def _campaign_entities(campaign: str) -> list[EntityPair]:
    """Names and aliases of the campaign's entities (episodes are not names people say)."""
    from glyphoxa_pipelines.cli.errors import user_errors
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import KnowledgeGraph

    with user_errors(), open_database() as db:
        entities = KnowledgeGraph(db).find_entities(campaign, limit=100_000)
    return [(e.name, list(e.aliases)) for e in entities if e.type != "episode"]


def run_filter(corrector: Corrector, source: TextIO, sink: TextIO, *, as_json: bool = False) -> int:
    """Correct each line of `source` onto `sink`; returns the number of lines."""
    count = 0
    for line in source:
        body = line.rstrip("\r\n")
        result = corrector(body)
        sink.write(json.dumps(result.as_dict(), ensure_ascii=False) if as_json else result.text)
        sink.write("\n")
        sink.flush()
        count += 1
    return count


def correct_command(
    entities: Path | None = typer.Option(
        None,
        "--entities",
        "-e",
        help="File with one name per line; aliases as Canonical|alias|alias.",
    ),
    campaign: str | None = typer.Option(
        None, "--campaign", "-c", help="Take the names from this campaign's knowledge graph."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print each result as JSON with its corrections."
    ),
    llm: bool = typer.Option(
        True,
        "--llm/--no-llm",
        help="Run stage 2 when GLYPHOXA_LLM_BASE_URL / GLYPHOXA_LLM_MODEL are set.",
    ),
) -> None:
    """Read transcript lines on stdin, write the corrected lines on stdout."""
    if entities is None and campaign is None:
        raise typer.BadParameter("give --entities FILE or --campaign C", param_hint="--entities")
    names: list[EntityPair] = []
    if entities is not None:
        names += _file_entities(entities)
    if campaign is not None:
        names += _campaign_entities(campaign)
    corrector = Corrector(NameIndex(names), llm=LLMCorrector.from_env() if llm else None)
    try:
        run_filter(corrector, sys.stdin, sys.stdout, as_json=as_json)
    except BrokenPipeError:  # `glyphoxa correct ... | head`: the reader has had enough
        sys.stderr.close()
        raise typer.Exit(0) from None


def register(app: typer.Typer) -> None:
    app.command("correct")(correct_command)
