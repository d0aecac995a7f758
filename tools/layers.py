"""``python -m tools.layers``: the project's import graph, checked against its floors.

Every ``import`` and ``from ... import`` of the project's own modules is read from the source (with :mod:`ast`,
so imports inside functions count too) and checked two ways:

- **no cycles**: between files (Tarjan's strongly connected components over the module graph) and between packages;
- **nothing imports upward**: a package imports only the packages :data:`ALLOWED` lists for it. The floors follow
  the data flow (suites → images → battles → votes → ratings → leaderboard): the data model and the pure ratings on
  the ground, the producers (suites, generators, sampling, judges and their metrics) above, the arena's web app,
  command line and demo on top, the tooling (benchmarks, load test, simulation, fake server) beside everything,
  imported by nothing but tests.

and three more:

- **the ratings draw nothing**: no plotting or UI library (:data:`FORBIDDEN_LIBRARIES`) is imported in ``ratings/``,
  the pure maths (:func:`forbidden_libraries`); the leaderboard's figures live in ``arena/leaderboard/plots.py``;
- **SQL lives in the data model**: no SQL text and no database call outside ``datamodel/``
  (:func:`sql_outside_datamodel`); the other packages call its named functions.
- **a module named by a string is imported in one place**, ``core/registry.py`` (the built-ins of each kind and
  the plug-ins' entry points; :func:`core.registry.load` for the rest): no ``importlib.import_module``,
  ``__import__`` or ``pkgutil`` anywhere else (:func:`dynamic_imports`), so the graph above is the whole graph.

Prints the package graph and every violation; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# each package and the packages it may import (its own floor and the floors below)
ALLOWED: dict[str, set[str]] = {
    "ratings": set(),
    "core": {"ratings"},
    "datamodel": {"core", "ratings"},
    "suites": {"core", "datamodel", "ratings"},
    "generators": {"core", "datamodel", "ratings", "suites"},
    "sampling": {"core", "datamodel", "ratings"},
    "judges": {"core", "datamodel", "ratings", "suites", "generators", "sampling"},
    "arena": {"core", "datamodel", "ratings", "suites", "generators", "sampling", "judges"},
    "app": {"arena"},
    "tools": {"core", "datamodel", "ratings", "suites", "generators", "sampling", "judges", "arena"},
}


@dataclass
class ImportGraph:
    modules: dict[str, Path]
    edges: dict[str, set[str]]  # module -> the project modules it imports

    def package_edges(self) -> dict[str, set[str]]:
        packages: dict[str, set[str]] = defaultdict(set)
        for source, targets in self.edges.items():
            for target in targets:
                if package_of(source) != package_of(target):
                    packages[package_of(source)].add(package_of(target))
        return packages


def package_of(module: str) -> str:
    return module.split(".")[0]


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_graph(root: Path = ROOT) -> ImportGraph:
    """The import graph of the packages in :data:`ALLOWED` under ``root``."""
    files = [root / "app.py"] + [p for package in ALLOWED if (root / package).is_dir()
                                 for p in sorted((root / package).rglob("*.py"))]
    modules = {_module_name(path, root): path for path in files if path.exists()}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                while target and target not in modules:  # ``import a.b.c`` imports a.b.c's nearest module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[name].add(target)
    return ImportGraph(modules, dict(edges))


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = set(edges) | {t for targets in edges.values() for t in targets}

    def visit(node: str) -> None:  # recursion depth is bounded by the longest import chain (tens)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


def upward_imports(graph: ImportGraph) -> list[tuple[str, str]]:
    """(module, imported module) pairs where a package imports one :data:`ALLOWED` does not list for it."""
    return sorted((source, target) for source, targets in graph.edges.items() for target in targets
                  if package_of(source) != package_of(target)
                  and package_of(target) not in ALLOWED.get(package_of(source), set()))


SQL_HOME = "datamodel"  # the one package whose modules write SQL and call the database
DATABASE_CALLS = frozenset({"execute", "executemany", "executescript", "query"})
_SQL = re.compile("|".join([  # one statement's keywords each (split so that no one string here matches)
    r"\bSELECT\b[\s\S]*\bFROM\b", r"\bINSERT\s+(OR\s+\w+\s+)?INTO\b", r"\bUPDATE\s+\w+\s+SET\b", r"\bDELETE\s+FROM\b",
    r"\bCREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER|DATABASE)\b", r"\bDROP\s+(TABLE|INDEX|VIEW|DATABASE)\b",
    r"\bALTER\s+TABLE\b", r"\bPRAGMA\s+\w+", r"\bCOPY\s+\w+\s*\("]))


def sql_outside_datamodel(graph: ImportGraph) -> list[tuple[str, int, str]]:
    """(module, line, what) of every SQL text and database call outside :data:`SQL_HOME`: every query is a named
    function of the data model, which the other packages call (``with db.conn:``, a transaction around such calls,
    is allowed). SQL is a string (or the text parts of an f-string) holding a statement's keywords in capitals (a
    ``SELECT ... FROM``, ``INSERT INTO``, ``UPDATE ... SET``, ``DELETE FROM``, DDL, ``PRAGMA``, ...); a database
    call is a method call named ``execute``, ``executemany``, ``executescript`` or ``query``."""
    found = []
    for name, path in sorted(graph.modules.items()):
        if package_of(name) == SQL_HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
        for node in ast.walk(tree):
            if id(node) in prose:
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DATABASE_CALLS:
                found.append((name, node.lineno, f"database call .{node.func.attr}()"))
            elif isinstance(node, ast.JoinedStr):
                text = "".join(part.value for part in node.values
                               if isinstance(part, ast.Constant) and isinstance(part.value, str))
                if _SQL.search(text):
                    found.append((name, node.lineno, f"SQL {text.strip()[:60]!r}"))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.search(node.value):
                found.append((name, node.lineno, f"SQL {node.value.strip()[:60]!r}"))
    return sorted(set(found))


DYNAMIC_HOME = "core.registry"  # the one module that imports modules named by strings
_DYNAMIC_CALLS = frozenset({"import_module", "__import__", "spec_from_file_location", "module_from_spec"})
_DYNAMIC_MODULES = frozenset({"pkgutil"})


def dynamic_imports(graph: ImportGraph) -> list[tuple[str, int, str]]:
    """(module, line, what) of every import of a module named by a string outside :data:`DYNAMIC_HOME`: a call of
    ``importlib.import_module``, ``__import__`` (or ``importlib.util``'s loaders), an import of ``import_module``
    itself, or of ``pkgutil`` (whose walks find modules no reader can list). ``importlib.util.find_spec``, which
    asks whether a package is installed without importing it, is not one."""
    found = []
    for name, path in sorted(graph.modules.items()):
        if name == DYNAMIC_HOME:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found += [(name, node.lineno, f"import {alias.name}") for alias in node.names
                          if alias.name in _DYNAMIC_MODULES]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module in _DYNAMIC_MODULES:
                    found.append((name, node.lineno, f"from {node.module} import ..."))
                elif node.module == "importlib" and any(alias.name in _DYNAMIC_CALLS for alias in node.names):
                    found.append((name, node.lineno, "from importlib import " +
                                  ", ".join(alias.name for alias in node.names)))
            elif isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if called in _DYNAMIC_CALLS:
                    found.append((name, node.lineno, f"{called}()"))
    return sorted(set(found))


# each package and the third-party libraries it may not import
FORBIDDEN_LIBRARIES: dict[str, frozenset[str]] = {
    "ratings": frozenset({"plotly", "matplotlib", "gradio"}),  # pure maths: no figure, no UI
}


def forbidden_libraries(graph: ImportGraph) -> list[tuple[str, int, str]]:
    """(module, line, what) of every import of a library :data:`FORBIDDEN_LIBRARIES` keeps out of the module's
    package (inside functions too)."""
    found = []
    for name, path in sorted(graph.modules.items()):
        banned = FORBIDDEN_LIBRARIES.get(package_of(name))
        if not banned:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported = [node.module]
            else:
                continue
            found += [(name, node.lineno, f"import {module}") for module in imported
                      if module.split(".")[0] in banned]
    return sorted(set(found))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m tools.layers", description=(
        "The import graph of the project's own modules, checked against its floors: no cycles between files or "
        "packages, no import up a floor, no plotting or UI library in ratings/, no SQL outside datamodel/, no import "
        "of a module named by a string outside core/registry.py (exit 1 if there is one).")).parse_args(argv)
    graph = read_graph()
    print(f"{len(graph.modules)} modules, {sum(map(len, graph.edges.values()))} imports between them")
    for package, targets in sorted(graph.package_edges().items()):
        print(f"  {package:10} -> {', '.join(sorted(targets))}")
    file_cycles = cycles(graph.edges)
    package_cycles = cycles(graph.package_edges())
    upward = upward_imports(graph)
    print(f"import cycles between files: {len(file_cycles)}")
    for component in file_cycles:
        print("  " + " <-> ".join(component))
    print(f"import cycles between packages: {len(package_cycles)}")
    for component in package_cycles:
        print("  " + " <-> ".join(component))
    print(f"upward imports: {len(upward)}")
    for source, target in upward:
        print(f"  {source} -> {target}")
    libraries = forbidden_libraries(graph)
    print(f"forbidden libraries (plotting, UI) in {', '.join(sorted(FORBIDDEN_LIBRARIES))}/: {len(libraries)}")
    for module, line, what in libraries:
        print(f"  {module}:{line}: {what}")
    sql = sql_outside_datamodel(graph)
    print(f"SQL outside {SQL_HOME}/: {len(sql)}")
    for module, line, what in sql:
        print(f"  {module}:{line}: {what}")
    dynamic = dynamic_imports(graph)
    print(f"dynamic imports outside {DYNAMIC_HOME}: {len(dynamic)}")
    for module, line, what in dynamic:
        print(f"  {module}:{line}: {what}")
    return 1 if file_cycles or package_cycles or upward or libraries or sql or dynamic else 0


if __name__ == "__main__":
    sys.exit(main())
