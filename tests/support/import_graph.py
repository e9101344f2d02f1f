"""The project's imports read statically with `ast`, for the architecture rules.

Nothing is imported or executed: a module that fails to import, or imports something heavy,
is still checked, and the rules see every import, also the ones inside functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT_DIRS = ("glyphoxa_pipelines", "realtime", "bench")
# bench/ holds scripts that put bench/ itself on sys.path: `import store` there means bench.store
SCRIPT_DIRS = {"bench"}


MODULE = "module"  # runs when the importer is imported
FUNCTION = "function"  # runs when a function of the importer is called
TYPE_CHECKING = "type_checking"  # never runs


@dataclass(frozen=True)
class Import:
    """One imported module, or one name taken from a module (`from module import name`)."""

    module: str
    name: str | None
    line: int
    when: str  # MODULE, FUNCTION or TYPE_CHECKING
    bound: str  # the local name it binds: `ss` for `from realtime import session_search as ss`

    def bound_module(self, project: Project) -> str | None:
        """The module the bound name refers to, None when it names something else."""
        if self.name is not None:  # `from m import n`: a module only when m.n is one
            target = project.target_module(self)
            return target if target != self.module else None
        top = self.module.split(".")[0]
        # `import a.b` binds a; `import a.b as x` (and bench's `import store`) bind the module
        return top if self.bound == top else self.module


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    tree: ast.Module
    imports: list[Import] = field(default_factory=list)

    @property
    def package(self) -> str:
        """The package whose namespace the module's relative imports start from."""
        if self.path.name == "__init__.py":
            return self.name
        return self.name.rpartition(".")[0]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_imports(
    body: Iterable[ast.stmt], when: str
) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with when it runs: MODULE, FUNCTION or TYPE_CHECKING."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, when
        elif isinstance(node, ast.If):
            yield from _walk_imports(node.body,
                                     TYPE_CHECKING if _is_type_checking(node.test) else when)
            yield from _walk_imports(node.orelse, when)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _walk_imports(node.body, FUNCTION if when == MODULE else when)
        else:  # class bodies, try, with, for, match: they run when the module does
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _walk_imports([child], when)
                elif isinstance(child, ast.excepthandler):
                    yield from _walk_imports(child.body, when)


class Project:
    """Every module of the project, by dotted name, with its imports resolved to full names."""

    def __init__(self, root: Path = ROOT, dirs: Iterable[str] = PROJECT_DIRS) -> None:
        self.root = root
        self.modules: dict[str, Module] = {}
        for top in dirs:
            for path in sorted((root / top).rglob("*.py")):
                text = path.read_text(encoding="utf-8")
                name = _module_name(path, root)
                self.modules[name] = Module(name, path, len(text.splitlines()),
                                            ast.parse(text, filename=str(path)))
        for module in self.modules.values():
            module.imports = list(self._imports_of(module))

    def _absolute(self, module: Module, target: str) -> str:
        """`store` inside bench/ is bench.store; anything else is already absolute."""
        top = module.name.split(".", 1)[0]
        if top in SCRIPT_DIRS and f"{top}.{target}" in self.modules:
            return f"{top}.{target}"
        return target

    def _imports_of(self, module: Module) -> Iterator[Import]:
        for node, when in _walk_imports(module.tree.body, MODULE):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    full = self._absolute(module, alias.name)
                    # `import a.b` binds the name a (to package a); `import a.b as x` binds x
                    bound = alias.asname or alias.name.split(".")[0]
                    yield Import(full, None, node.lineno, when, bound)
                continue
            if node.level:
                base = module.package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = self._absolute(module, node.module or "")
            for alias in node.names:
                yield Import(target, alias.name, node.lineno, when, alias.asname or alias.name)

    def is_project(self, name: str) -> bool:
        return name in self.modules

    def target_module(self, imp: Import) -> str:
        """The module an import loads: `from pkg import sub` loads pkg.sub when that is a module."""
        if imp.name and f"{imp.module}.{imp.name}" in self.modules:
            return f"{imp.module}.{imp.name}"
        return imp.module

    def edges(self, *, with_parents: bool = False,
              runs: frozenset[str] = frozenset({MODULE})) -> dict[str, set[str]]:
        """Import graph between project modules, from the imports that run as `runs` says
        (module level by default).

        `with_parents` adds the packages Python runs on the way (`import a.b.c` runs a and
        a.b first): right for "what gets loaded", wrong for cycles, where a package that
        re-exports its submodules would close a harmless loop with each of them.
        """
        graph: dict[str, set[str]] = {name: set() for name in self.modules}
        for module in self.modules.values():
            for imp in module.imports:
                if imp.when not in runs:
                    continue
                target = self.target_module(imp)
                targets = {target}
                if with_parents:
                    parts = target.split(".")
                    targets |= {".".join(parts[:i]) for i in range(1, len(parts))}
                graph[module.name] |= {t for t in targets if t in self.modules and
                                       t != module.name}
        return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def path_within(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One concrete loop through a component, for a readable failure message."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                loop = [node]
                while loop[-1] != start:
                    loop.append(previous[loop[-1]])
                return [*reversed(loop), start]
            if nxt not in previous:
                previous[nxt] = node
                frontier.append(nxt)
    return [*component, start]


def reachable(graph: dict[str, set[str]], starts: Iterable[str]) -> dict[str, str | None]:
    """Every module loaded from `starts`, each with the module that first loads it."""
    seen: dict[str, str | None] = {s: None for s in starts}
    frontier = list(seen)
    while frontier:
        node = frontier.pop(0)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in seen:
                seen[nxt] = node
                frontier.append(nxt)
    return seen
