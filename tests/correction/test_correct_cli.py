"""`glyphoxa correct` on its own Typer app (CliRunner), and the bench's skip path."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import correct as correct_cli
from glyphoxa_pipelines.correction import Corrector
from glyphoxa_pipelines.memory.models import Entity


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    for var in ("GLYPHOXA_LLM_BASE_URL", "GLYPHOXA_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    app = typer.Typer()
    correct_cli.register(app)

    @app.command("noop")
    def noop() -> None:  # a second command, so `correct` stays a named sub-command
        pass

    return app


@pytest.fixture
def names_file(tmp_path: Path) -> Path:
    path = tmp_path / "names.txt"
    path.write_text(
        "# the party\nEldrinax\nVex'ahlia|Vex|Lady Vex\n\nIronhold\nTower of Whispers\n",
        encoding="utf-8",
    )
    return path


def test_one_corrected_line_per_input_line_in_order(app: typer.Typer, names_file: Path) -> None:
    stdin = "elder nacks lives here\n\nwe went to iron hold.\nnothing to fix\nvexa leah"
    result = CliRunner().invoke(app, ["correct", "--entities", str(names_file)], input=stdin)
    assert result.exit_code == 0, result.output
    assert result.stdout.split("\n") == [
        "Eldrinax lives here",
        "",
        "we went to Ironhold.",
        "nothing to fix",
        "Vex'ahlia",
        "",
    ]


def test_json_output_carries_the_corrections(app: typer.Typer, names_file: Path) -> None:
    stdin = "elder nacks lives here\r\nEldrinax again\n"
    result = CliRunner().invoke(
        app, ["correct", "--entities", str(names_file), "--json"], input=stdin
    )
    assert result.exit_code == 0, result.output
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["text"] == "Eldrinax lives here"
    assert first["raw_text"] == "elder nacks lives here"
    assert first["corrections"] == [
        {
            "original": "elder nacks",
            "replacement": "Eldrinax",
            "start": 0,
            "end": 11,
            "score": first["corrections"][0]["score"],
            "method": "phonetic",
            "entity": "Eldrinax",
        }
    ]
    assert second == {"text": "Eldrinax again", "raw_text": "Eldrinax again", "corrections": []}


def test_names_come_from_the_knowledge_graph_with_campaign(
    app: typer.Typer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glyphoxa_pipelines.db as db_module
    import glyphoxa_pipelines.memory as memory_module

    opened: list[str] = []

    class FakeDb:
        def __enter__(self) -> FakeDb:
            opened.append("db")
            return self

        def __exit__(self, *exc: Any) -> None:
            pass

    class FakeGraph:
        def __init__(self, db: FakeDb) -> None:
            assert isinstance(db, FakeDb)

        def find_entities(self, campaign_id: str, **kwargs: Any) -> list[Entity]:
            assert campaign_id == "c1"
            return [
                Entity(campaign_id="c1", id="e1", type="npc", name="Eldrinax", aliases=["Eld"]),
                Entity(campaign_id="c1", id="e2", type="episode", name="Session Elder Nacks"),
                Entity(campaign_id="c1", id="e3", type="location", name="Ironhold"),
            ]

    monkeypatch.setattr(db_module, "open_database", lambda *a, **k: FakeDb())
    monkeypatch.setattr(memory_module, "KnowledgeGraph", FakeGraph)
    result = CliRunner().invoke(
        app, ["correct", "--campaign", "c1"], input="elder nacks went to iron hold\n"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == "Eldrinax went to Ironhold\n"
    assert opened == ["db"]


def test_missing_names_source_is_a_usage_error(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["correct"], input="x\n")
    assert result.exit_code == 2
    result = CliRunner().invoke(
        app, ["correct", "--entities", str(tmp_path / "absent.txt")], input="x\n"
    )
    assert result.exit_code == 2
    assert "cannot read" in result.output


def test_empty_names_file_passes_lines_through(app: typer.Typer, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    stdin = "elder nacks\n  spaced  out  \n"
    result = CliRunner().invoke(app, ["correct", "--entities", str(empty)], input=stdin)
    assert result.exit_code == 0
    assert result.stdout == stdin


def test_run_filter_streams_line_by_line() -> None:
    sink = io.StringIO()
    count = correct_cli.run_filter(Corrector(["Eldrinax"]), io.StringIO("a\nelder nacks\n"), sink)
    assert count == 2
    assert sink.getvalue() == "a\nEldrinax\n"


def test_bench_skips_cleanly_without_data(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from bench import correction as bench  # main() is what `python bench/correction.py` runs

    assert bench.main(["--data", str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last) == {
        "bench": "correction",
        "skipped": True,
        "reason": f"no {tmp_path / 'crd3' / 'cleaned'}",
    }
