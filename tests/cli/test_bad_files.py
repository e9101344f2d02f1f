"""The CLI's bad-file corpus: every file an unlucky operator (or an adversary) could hand to
`campaign load`, `session import` or `entity add` ends with exit 2, one message naming the file
(and line, where the problem is inside it) and the problem, and nothing written."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphoxa_pipelines.cli import app
from glyphoxa_pipelines.memory.limits import MAX_FILE_BYTES

runner = CliRunner()
GOOD_LINE = json.dumps({"speaker": "Dana", "text": "You enter the tavern."})
DEEP = 20_000


def _count(db: object, sql: str, *params: object) -> int:
    with db.connection() as conn:  # type: ignore[attr-defined]
        return int(conn.execute(sql, params).fetchone()[0])


def _expect_refusal(args: list[str], where: str, problem: str) -> None:
    started = time.monotonic()
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"traceback: {result.exception!r}"
    )
    assert result.exit_code == 2, result.output
    assert "rror" in result.output and where in result.output, result.output
    assert problem in result.output, result.output
    assert "unreachable" not in result.output
    assert time.monotonic() - started < 20, "a bad file must be refused promptly"


# -- campaign files ---------------------------------------------------------------------------

def _campaign(cid: str, entity: str) -> str:
    return f"campaign: {{id: {cid}, name: Bad}}\nentities:\n{entity}"


def _laughs() -> str:
    rows = ['      a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        rows.append(f"      a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "  - name: Bomb\n    type: item\n    attributes:\n" + "\n".join(rows) + "\n"


CAMPAIGN_CASES: dict[str, tuple[Callable[[str], str], int | None, str]] = {
    # name: (text for a campaign id, line named or None, problem named)
    "nul-escape-in-name": (
        lambda c: _campaign(c, '  - {name: "Eld\\0rinax", type: npc}\n'), 3, "NUL"),
    "nul-byte-in-file": (
        lambda c: _campaign(c, "  - {name: Eld\x00rinax, type: npc}\n"), 3, "NUL"),
    "lone-surrogate-in-alias": (
        lambda c: _campaign(c, '  - {name: E, type: npc, aliases: ["\\ud800"]}\n'), 3,
        "surrogate"),
    "over-long-name": (
        lambda c: _campaign(c, f"  - {{name: {'N' * 300}, type: npc}}\n"), 3, "limit is 200"),
    "nan-attribute": (
        lambda c: _campaign(c, "  - {name: E, type: item, attributes: {hp: .nan}}\n"), 3,
        "finite"),
    "deep-yaml": (
        lambda c: _campaign(
            c, "  - {name: E, type: item, attributes: {k: " + "[" * DEEP + "]" * DEEP + "}}\n"
        ),
        None,
        "nested too deeply",
    ),
    "billion-laughs-in-attributes": (lambda c: _campaign(c, _laughs()), 6, "larger than"),
    "over-long-description": (
        lambda c: f"campaign: {{id: {c}, name: Bad, description: {'d' * 20_000}}}\n", 1,
        "limit is 10,000"),
}


@pytest.mark.parametrize("case", sorted(CAMPAIGN_CASES))
def test_bad_campaign_file(case: str, db: object, tmp_path: Path) -> None:
    make, line, problem = CAMPAIGN_CASES[case]
    cid = "bad-" + uuid.uuid4().hex[:10]
    path = tmp_path / f"{case}.yaml"
    path.write_bytes(make(cid).encode("utf-8", "surrogatepass"))
    where = f"{path}:{line}:" if line is not None else str(path)
    _expect_refusal(["campaign", "load", str(path)], where, problem)
    assert _count(db, "SELECT count(*) FROM campaigns WHERE id = %s", cid) == 0


@pytest.mark.parametrize(
    ("kind", "problem"),
    [("directory", "is a directory"), ("device", "not a regular file"),
     ("huge", "the limit is"), ("nul-in-name", "null byte"), ("missing", "cannot read")],
)
def test_unreadable_files(kind: str, problem: str, db: object, tmp_path: Path) -> None:
    if kind == "directory":
        target = str(tmp_path)
    elif kind == "device":
        target = "/dev/zero"
    elif kind == "huge":
        huge = tmp_path / "huge.jsonl"
        with open(huge, "wb") as f:
            f.truncate(MAX_FILE_BYTES + 1)  # sparse: 64 MB that costs no disk
        target = str(huge)
    elif kind == "nul-in-name":
        target = str(tmp_path / "camp\x00aign.yaml")
    else:
        target = str(tmp_path / "absent.yaml")
    # A NUL in the name is refused by the command line's own argument check (a usage error,
    # exit 2, naming the argument) before any of our code runs.
    shown = "'file'" if kind == "nul-in-name" else target
    before = _count(db, "SELECT count(*) FROM campaigns")
    _expect_refusal(["campaign", "load", target], shown, problem)
    assert _count(db, "SELECT count(*) FROM campaigns") == before
    cid = "bad-" + uuid.uuid4().hex[:10]
    _expect_refusal(["session", "import", target, "--campaign", cid], shown, problem)


# -- transcripts ------------------------------------------------------------------------------

def _jsonl(**fields: object) -> str:
    entry = {"speaker": "Rook", "text": "I order an ale."} | fields
    return GOOD_LINE + "\n" + json.dumps(entry) + "\n"


TRANSCRIPT_CASES: dict[str, tuple[str, str, int | None, str]] = {
    # name: (file suffix, content, line named or None, problem named)
    "nul-in-speaker": (".jsonl", _jsonl(speaker="Ro\x00ok"), 2, "NUL"),
    "surrogate-in-speaker": (
        ".jsonl", GOOD_LINE + '\n{"speaker": "\\ud800", "text": "hi"}\n', 2, "surrogate"),
    "nul-in-speaker-id": (".jsonl", _jsonl(speaker_id="r\x00"), 2, "NUL"),
    "over-long-speaker": (".jsonl", _jsonl(speaker="S" * 300), 2, "limit is 200"),
    "over-long-text": (".jsonl", _jsonl(text="word " * 50_000), 2, "limit is 200,000"),
    "duration-1e30": (".jsonl", _jsonl(duration_s=1e30), 2, "duration"),
    "duration-1e308": (".jsonl", _jsonl(duration_s=1e308), 2, "duration"),
    "duration-infinity": (".jsonl", GOOD_LINE + '\n{"speaker": "R", "text": "x", '
                          '"duration_s": Infinity}\n', 2, "finite"),
    "duration-nan": (".jsonl", GOOD_LINE + '\n{"speaker": "R", "text": "x", '
                     '"duration_s": NaN}\n', 2, "finite"),
    "timestamp-year-1": (".jsonl", _jsonl(timestamp="0001-01-01T00:00:00+14:00"), 2,
                         "out of range"),
    "timestamp-9999": (".jsonl", _jsonl(timestamp="9999-12-31T23:59:59Z"), 2, "future"),
    "timestamp-number-1e30": (".jsonl", _jsonl(timestamp=1e30), 2, "out of range"),
    "offset-1e30": (".jsonl", _jsonl(offset=1e30), 2, "more than a year"),
    "deep-jsonl": (".jsonl", GOOD_LINE + '\n{"speaker": "R", "text": "x", "meta": '
                   + "[" * DEEP + "]" * DEEP + "}\n", 2, "nested too deeply"),
    "deep-crd3": (".json", '{"TURNS": ' + "[" * DEEP + "]" * DEEP + "}", None,
                  "nested too deeply"),
    "vtt-hour-99999999999": (
        ".vtt", "WEBVTT\n\n99999999999:00:00.000 --> 99999999999:00:01.000\nDM: Hello\n", 3,
        "more than a year"),
    "text-nul-byte": (".txt", "DM: Hello\nRook: I \x00 wave\n", 2, "NUL"),
}


@pytest.mark.parametrize("case", sorted(TRANSCRIPT_CASES))
def test_bad_transcript(case: str, db: object, campaign_id: str, tmp_path: Path) -> None:
    suffix, content, line, problem = TRANSCRIPT_CASES[case]
    path = tmp_path / f"{case}{suffix}"
    path.write_bytes(content.encode("utf-8", "surrogatepass"))
    where = f"{path}:{line}:" if line is not None else str(path)
    _expect_refusal(["session", "import", str(path), "--campaign", campaign_id], where, problem)
    assert _count(db, "SELECT count(*) FROM sessions WHERE campaign_id = %s", campaign_id) == 0
    assert _count(
        db, "SELECT count(*) FROM session_entries WHERE campaign_id = %s", campaign_id
    ) == 0


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [("--session", "s\x00x", "NUL"), ("--title", "T" * 300, "limit is 200"),
     ("--campaign", "c\x00", "NUL")],
)
def test_bad_import_options(
    option: str, value: str, problem: str, db: object, campaign_id: str, tmp_path: Path
) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(GOOD_LINE + "\n")
    args = ["session", "import", str(path), "--campaign", campaign_id]
    args = [*args[:3], option, value] if option == "--campaign" else [*args, option, value]
    _expect_refusal(args, option, problem)
    assert _count(db, "SELECT count(*) FROM sessions WHERE campaign_id = %s", campaign_id) == 0


@pytest.mark.parametrize(
    ("name", "extra", "problem"),
    [("N" * 300, [], "limit is 200"), ("Eld\x00rinax", [], "NUL"),
     ("Eldrinax", ["--attr", "hp=NaN"], "finite"), ("Eldrinax", ["--alias", "\ud800"],
                                                   "surrogate")],
)
def test_bad_entity_add(
    name: str, extra: list[str], problem: str, db: object, campaign_id: str
) -> None:
    _expect_refusal(["entity", "add", name, "npc", "--campaign", campaign_id, *extra], "",
                    problem)
    assert _count(db, "SELECT count(*) FROM entities WHERE campaign_id = %s", campaign_id) == 0
