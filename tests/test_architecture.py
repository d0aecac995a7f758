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


def test_no_sql_outside_the_data_model():
    """Every query is a named function of datamodel/: the other packages call it, and write no SQL of their own."""
    from tools.layers import sql_outside_datamodel

    assert sql_outside_datamodel(read_graph()) == []


def test_the_sql_check_finds_sql_and_database_calls_outside_the_data_model(tmp_path):
    from tools.layers import sql_outside_datamodel

    for package in ("datamodel", "arena"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "app.py").write_text("")
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
