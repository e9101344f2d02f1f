"""Architecture rules, read from the source with `ast` (tests/support/import_graph.py):

- no import circle between project modules (module-level imports: the ones that run on import);
- no module takes another module's private name (`from x import _y`, `x._y`) or reaches into a
  private module outside its own package (`dagster._core`);
- no module over 600 lines;
- the realtime path never loads Dagster.

Each rule reports every violation at once, one per line, so a failure is a to-do list.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.support.import_graph import (
    FUNCTION,
    MODULE,
    ROOT,
    Project,
    cycles,
    path_within,
    reachable,
)

MAX_LINES = 600

# Violations tolerated while their fix lands on another branch; none today. The list may only
# shrink: a new violation fails `test_no_new_violations`, and a fixed one left here fails
# `test_known_violations_still_exist` so it gets removed.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()

PROJECT = Project()


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _private_module_outside_its_package(importer: str, module: str) -> bool:
    """`a.b._c.d` is private to package a.b: only a.b's own modules may load it."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            owner = ".".join(parts[:i])
            return not (importer == owner or importer.startswith(owner + "."))
    return False


def import_circles(project: Project) -> dict[str, str]:
    """Circles among module-level imports, and circles that only a deferred import (inside a
    function) keeps from failing at import time: the modules still depend on each other."""
    found: dict[str, str] = {}
    graph = project.edges()
    for component in cycles(graph):
        found["import circle: " + ", ".join(component)] = " -> ".join(
            path_within(graph, component))
    deferred = project.edges(runs=frozenset({MODULE, FUNCTION}))
    for component in cycles(deferred):
        key = "import circle: " + ", ".join(component)
        if key not in found:
            found[key] = " -> ".join(path_within(deferred, component)) + (
                " (closed by an import inside a function)")
    return found


def private_imports(project: Project) -> dict[str, str]:
    found: dict[str, str] = {}
    for module in project.modules.values():
        rel = module.path.relative_to(project.root)
        for imp in module.imports:
            target = project.target_module(imp)
            if _private_module_outside_its_package(module.name, target):
                found[f"private import: {module.name} uses {target}"] = f"{rel}:{imp.line}"
            elif imp.name and target == imp.module and _private(imp.name):
                found[f"private import: {module.name} uses {imp.module}.{imp.name}"] = (
                    f"{rel}:{imp.line}")
        # `x._y` on a project module bound by import
        bound = {}
        for imp in module.imports:
            target = imp.bound_module(project)
            if target is not None and project.is_project(target):
                bound[imp.bound] = target
        for node in ast.walk(module.tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in bound
                    and bound[node.value.id] != module.name):
                key = f"private import: {module.name} uses {bound[node.value.id]}.{node.attr}"
                found.setdefault(key, f"{rel}:{node.lineno}")
    return found


def long_modules(project: Project) -> dict[str, str]:
    return {
        f"too long: {m.path.relative_to(project.root)}": f"{m.lines} lines (at most {MAX_LINES})"
        for m in project.modules.values() if m.lines > MAX_LINES
    }


def all_violations(project: Project = PROJECT) -> dict[str, str]:
    return {**import_circles(project), **private_imports(project), **long_modules(project)}


def _report(keys: set[str], found: dict[str, str]) -> str:
    return "\n".join(f"  {k}  [{found.get(k, 'fixed')}]" for k in sorted(keys))


def test_no_new_violations() -> None:
    found = all_violations()
    new = set(found) - KNOWN_VIOLATIONS
    assert not new, f"{len(new)} architecture violation(s):\n{_report(new, found)}"


def test_known_violations_still_exist() -> None:
    fixed = KNOWN_VIOLATIONS - set(all_violations())
    assert not fixed, (
        "fixed, so remove from KNOWN_VIOLATIONS in tests/test_architecture.py:\n"
        + _report(fixed, {})
    )


def test_the_scan_sees_the_project() -> None:
    """The rules are only as good as the scan: it must find the modules and their imports."""
    assert {"realtime.service", "realtime.api.app", "glyphoxa_pipelines.db.database",
            "bench.store"} <= set(PROJECT.modules)
    graph = PROJECT.edges()
    assert "realtime.service" in reachable(graph, ["realtime.api.app"])
    assert any(t.startswith("glyphoxa_pipelines.") for t in graph["realtime.service"])
    assert "bench.scale_dataset" in graph["bench.store"]  # bench scripts' bare imports


def test_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert path_within(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_rules_catch_each_kind_of_violation(tmp_path: Path) -> None:
    """A tiny project with one of everything: the rules must name each violation."""
    pkg = tmp_path / "realtime"
    (pkg / "_impl").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "_impl/__init__.py": "X = 1\n",
        "a.py": "from realtime import b\nfrom realtime._impl import X\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from realtime import c\n"
                "def f():\n    from realtime.a import thing\n",
        "c.py": "from realtime import a\nfrom realtime.a import _secret\nimport dagster._core\n"
                "import realtime.b as bee\ny = a._hidden\nw = bee._inner\n" + "z = 1\n" * MAX_LINES,
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    found = all_violations(Project(tmp_path, ["realtime"]))
    assert set(found) == {
        "import circle: realtime.a, realtime.b",  # closed by the import inside f()
        "private import: realtime.c uses realtime.a._secret",
        "private import: realtime.c uses realtime.a._hidden",
        "private import: realtime.c uses realtime.b._inner",
        "private import: realtime.c uses dagster._core",
        "too long: realtime/c.py",
    }, found  # realtime.a may use realtime._impl: its own package's private module


def test_realtime_never_loads_dagster_statically() -> None:
    """Everything a realtime module loads at import time, packages on the way included, is
    free of Dagster; the chain that would bring it in is the failure message."""
    graph = PROJECT.edges(with_parents=True)
    starts = [name for name in PROJECT.modules if name == "realtime" or
              name.startswith("realtime.")]
    loaded = reachable(graph, starts)
    offenders = []
    for name in sorted(loaded):
        for imp in PROJECT.modules[name].imports:
            top = imp.module.split(".")[0]
            if imp.when == MODULE and (top == "dagster" or top.startswith("dagster_")):
                chain = [name]
                while loaded[chain[-1]] is not None:
                    chain.append(loaded[chain[-1]])
                offenders.append(" <- ".join(chain) + f" imports {imp.module}")
    assert not offenders, "\n".join(offenders)


def test_realtime_imports_no_dagster_at_runtime() -> None:
    """The same, in a fresh interpreter importing every realtime module (no static blind spot:
    dynamic imports and third-party packages count too)."""
    names = sorted(n for n in PROJECT.modules if n == "realtime" or n.startswith("realtime."))
    code = (
        "import importlib, sys\n"
        "import glyphoxa_pipelines.cli, glyphoxa_pipelines.cli.serve_commands\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'dagster' or m.startswith('dagster.')\n"
        "             or m.startswith('dagster_'))\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
