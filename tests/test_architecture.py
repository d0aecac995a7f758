"""The floors hold: no import cycles between files or packages, and no package imports one above it."""

from __future__ import annotations

from tools.layers import cycles, read_graph, upward_imports


def test_the_project_has_no_import_cycles_and_no_upward_imports():
    graph = read_graph()
    assert len(graph.modules) > 80  # the whole project was read
    assert cycles(graph.edges) == []
    assert cycles(graph.package_edges()) == []
    assert upward_imports(graph) == []


def test_the_check_finds_a_cycle_and_an_upward_import(tmp_path):
    for package in ("ratings", "datamodel"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "app.py").write_text("")
    (tmp_path / "datamodel" / "a.py").write_text("from datamodel.b import thing\n")
    (tmp_path / "datamodel" / "b.py").write_text("def f():\n    import datamodel.a\n")  # a lazy import counts
    (tmp_path / "ratings" / "pure.py").write_text("from datamodel import a\n")
    graph = read_graph(tmp_path)
    assert cycles(graph.edges) == [["datamodel.a", "datamodel.b"]]
    assert upward_imports(graph) == [("ratings.pure", "datamodel"), ("ratings.pure", "datamodel.a")]
    assert cycles(graph.package_edges()) == []
