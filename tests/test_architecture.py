"""The floors hold: no import cycles between files or packages, and no package imports one above it; no test module
imports another test module."""

from __future__ import annotations

import ast
from pathlib import Path

from tools.layers import cycles, read_graph, upward_imports


def project_tree(root: Path, packages: tuple[str, ...]) -> None:
    """An empty project under ``root`` for the checks to read: app.py and the ``packages``, each with its __init__."""
    (root / "app.py").write_text("")
    for package in packages:
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("")


def test_the_project_has_no_import_cycles_and_no_upward_imports():
    graph = read_graph()
    assert len(graph.modules) > 80  # the whole project was read
    assert cycles(graph.edges) == []
    assert cycles(graph.package_edges()) == []
    assert upward_imports(graph) == []


def test_the_check_finds_a_cycle_and_an_upward_import(tmp_path):
    project_tree(tmp_path, ("ratings", "datamodel"))
    (tmp_path / "datamodel" / "a.py").write_text("from datamodel.b import thing\n")
    (tmp_path / "datamodel" / "b.py").write_text("def f():\n    import datamodel.a\n")  # a lazy import counts
    (tmp_path / "ratings" / "pure.py").write_text("from datamodel import a\n")
    graph = read_graph(tmp_path)
    assert cycles(graph.edges) == [["datamodel.a", "datamodel.b"]]
    assert upward_imports(graph) == [("ratings.pure", "datamodel"), ("ratings.pure", "datamodel.a")]
    assert cycles(graph.package_edges()) == []


def test_no_sql_outside_the_data_model():
    """Every query is a named function of datamodel/: the other packages call it, and write no SQL of their own."""
    from tools.layers import sql_outside_datamodel

    assert sql_outside_datamodel(read_graph()) == []


def test_the_sql_check_finds_sql_and_database_calls_outside_the_data_model(tmp_path):
    from tools.layers import sql_outside_datamodel

    project_tree(tmp_path, ("datamodel", "arena"))
    (tmp_path / "datamodel" / "reads.py").write_text(  # the data model may
        'def names(db):\n    return db.execute("SELECT name FROM models").fetchall()\n')
    (tmp_path / "arena" / "tab.py").write_text(
        '"""A docstring may say SELECT name FROM models."""\n'
        'def names(db, table):\n'
        '    rows = db.execute(f"SELECT name FROM {table} WHERE id = ?", [1])\n'
        '    sql = "UPDATE votes SET excluded = 1"\n'
        '    menu = "target.tagName === \'SELECT\'"\n'
        '    return db.query("...")\n')
    found = sql_outside_datamodel(read_graph(tmp_path))
    assert sorted({(line, what.split()[0]) for _, line, what in found}) == [
        (3, "SQL"), (3, "database"), (4, "SQL"), (6, "database")]  # the f-string, .execute(), the UPDATE, .query()


TESTS = Path(__file__).resolve().parent


def imports_of_test_modules(folder: Path) -> list[tuple[str, str]]:
    """(file, imported module) for every import, anywhere in a file under ``folder``, of one of its test modules
    (``test_*.py``): shared test code belongs in ``support/``, not in another test module."""
    test_modules = {path.stem for path in folder.glob("test_*.py")}
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            found += [(str(path.relative_to(folder)), name) for name in names if name.split(".")[0] in test_modules]
    return found


def test_no_test_module_imports_another_test_module():
    assert imports_of_test_modules(TESTS) == [], "move what they share into tests/support/"


def test_the_check_finds_a_test_module_imported_by_another(tmp_path):
    (tmp_path / "test_a.py").write_text("def helper():\n    pass\n")
    (tmp_path / "test_b.py").write_text("def test_x():\n    from test_a import helper\n")  # inside a function too
    (tmp_path / "support").mkdir()
    (tmp_path / "support" / "x.py").write_text("import test_a\nimport testing_tools\n")
    assert imports_of_test_modules(tmp_path) == [("support/x.py", "test_a"), ("test_b.py", "test_a")]


def test_core_imports_nothing_of_the_project_but_ratings(tmp_path):
    """core/ is the ground floor beside ratings/: settings, presets, install hints, the registry; every package may
    import it, so it may import none of them."""
    project_tree(tmp_path, ("ratings", "core", "datamodel"))
    (tmp_path / "core" / "fine.py").write_text("from ratings import votes\nimport numpy\n")
    (tmp_path / "core" / "settings.py").write_text("def quality():\n    from datamodel import quality\n")
    assert upward_imports(read_graph(tmp_path)) == [("core.settings", "datamodel")]


def test_dynamic_imports_live_only_in_the_registry():
    """A module named by a string is imported in one place, core/registry.py (its built-ins and the plug-ins' entry
    points): no importlib.import_module, __import__ or pkgutil walk elsewhere, which neither a reader nor the import
    graph above could follow."""
    from tools.layers import dynamic_imports

    assert dynamic_imports(read_graph()) == []


def test_the_check_finds_dynamic_imports_outside_the_registry(tmp_path):
    from tools.layers import dynamic_imports

    project_tree(tmp_path, ("core", "suites"))
    (tmp_path / "core" / "registry.py").write_text("import importlib\nimportlib.import_module('suites.x')\n")
    (tmp_path / "suites" / "__init__.py").write_text(
        '"""importlib.import_module in a docstring is prose."""\n'
        "import importlib, pkgutil\n"
        "from importlib import import_module\n"
        "for found in pkgutil.iter_modules(__path__):\n"
        "    importlib.import_module(found.name)\n"
        "    import_module(found.name)\n"
        "    __import__(found.name)\n")
    assert [(module, line) for module, line, _ in dynamic_imports(read_graph(tmp_path))] == [
        ("suites", 2), ("suites", 3), ("suites", 5), ("suites", 6), ("suites", 7)]


def test_shared_test_code_lives_in_support():
    """Beside the test modules, tests/ holds only conftest.py: a helper module there (or an alias of one of
    support/'s) is one more place to look."""
    assert sorted(path.name for path in TESTS.glob("*.py")
                  if not path.name.startswith("test_") and path.name != "conftest.py") == []
