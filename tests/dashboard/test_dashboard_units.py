"""The dashboard's pure parts, without a database: the graph picture's transform, the merge's
alias list, the form parsing, the vendored files against VENDORED.md, and the reprocess
launcher with a real child process."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from glyphoxa_pipelines.memory import Entity, InvalidInputError, KnownFact, Relationship
from realtime.dashboard.forms import attribute_lines, name_list
from realtime.dashboard.graph_view import graph_elements
from realtime.dashboard.merge import merged_aliases
from realtime.dashboard.reprocess import Reprocessor, glyphoxa_command

VENDOR = Path(__file__).resolve().parents[2] / "realtime" / "dashboard" / "static" / "vendor"


def _fact(fid: int, src: str, rel: str, dst: str, session: str | None = None) -> KnownFact:
    return KnownFact(Relationship("c", src, dst, rel, id=fid, session_id=session), src, dst,
                     False)


ENTS = [Entity("c", "a", "npc", "Ana"), Entity("c", "b", "npc", "Bo"),
        Entity("c", "inn", "place", "Inn"), Entity("c", "lone", "item", "Lone Ring")]


def test_graph_elements_keep_edges_only_between_kept_nodes() -> None:
    facts = [_fact(1, "a", "works_at", "inn", "s1"), _fact(2, "a", "knows", "b")]
    out = graph_elements(ENTS, facts)
    assert [n["data"]["id"] for n in out["nodes"]] == ["lone", "a", "b", "inn"]
    assert {e["data"]["id"]: e["data"]["label"] for e in out["edges"]} == {
        "f1": "works at", "f2": "knows"}
    only_npcs = graph_elements(ENTS, facts, types={"npc"})
    assert [e["data"]["id"] for e in only_npcs["edges"]] == ["f2"]
    assert {n["data"]["type"] for n in only_npcs["nodes"]} == {"npc"}
    connected = graph_elements(ENTS, facts[:1], only_connected=True)
    assert {n["data"]["id"] for n in connected["nodes"]} == {"a", "inn"}
    assert graph_elements(ENTS, facts, types={"item"}) == {
        "nodes": [{"data": {"id": "lone", "label": "Lone Ring", "type": "item"}}], "edges": []}


def test_merged_aliases() -> None:
    assert merged_aliases("Thaldrin", ["Thal"], ["The Smith", "thal", "THALDRIN", " ", "Smith"]
                          ) == ["Thal", "The Smith", "Smith"]


def test_form_parsing() -> None:
    assert name_list(" a, ,b ,") == ["a", "b"]
    assert attribute_lines("mood: calm\n\n url: http://x:1 ") == {"mood": "calm",
                                                                 "url": "http://x:1"}
    with pytest.raises(InvalidInputError, match="line 2"):
        attribute_lines("ok: 1\nnot a pair")
    with pytest.raises(InvalidInputError, match="line 1"):
        attribute_lines(": no key")


def test_vendored_files_match_the_table() -> None:
    table = (VENDOR / "VENDORED.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", table, re.M)
    assert {name for name, _ in rows} == {p.name for p in VENDOR.glob("*.js")}
    for name, digest in rows:
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    assert (VENDOR / "LICENSE.htmx").exists() and (VENDOR / "LICENSE.cytoscape").exists()


async def test_reprocessor_runs_the_command_once_at_a_time(tmp_path: Path) -> None:
    log = tmp_path / "args"
    script = ("import sys, pathlib, time; time.sleep(0.3); "
              f"pathlib.Path({str(log)!r}).write_text(' '.join(sys.argv[1:])); print('ok')")
    rep = Reprocessor([sys.executable, "-c", script])
    first = rep.launch("camp")
    assert first.running and rep.launch("camp") is first  # a second click joins the first
    for _ in range(200):
        if not first.running:
            break
        await asyncio.sleep(0.05)
    assert first.returncode == 0 and first.output.strip() == "ok"
    assert log.read_text() == "backfill --campaign camp"
    failing = Reprocessor([str(tmp_path / "no-such-glyphoxa")]).launch("camp")
    for _ in range(100):
        if not failing.running:
            break
        await asyncio.sleep(0.05)
    assert failing.returncode == -1 and "could not start" in failing.output


def test_the_default_command_is_the_clis_backfill() -> None:
    """The button's command line is one the CLI takes (the launch itself is tested with the
    CLI's backfill, under Dagster)."""
    command = [*glyphoxa_command(), "backfill", "--help"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert "--campaign" in out.stdout and "backfill" in out.stdout.lower()
