"""SQLite's database object (datamodel.sqlite.SqliteDatabase): the Database protocol over one sqlite3 connection,
with no library between (issue 39: sqlite-utils was a runtime dependency whose table API the project never calls)."""

from __future__ import annotations

import subprocess
import sys

from datamodel.connection import connect, open_reader
from datamodel.schema import database_file


def test_opening_a_database_imports_no_sqlite_utils(tmp_path):
    """The core install opens, migrates and reads an arena without sqlite-utils."""
    code = ("import sys; from datamodel.connection import connect; db = connect(sys.argv[1]); "
            "assert db.query('select count(*) as n from votes').__next__() == {'n': 0}; "
            "print(sorted(m for m in sys.modules if m.startswith('sqlite_utils')))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "arena.db")], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_execute_and_query_answer_as_the_protocol_says(tmp_path):
    db = connect(tmp_path / "arena.db")
    assert db.execute("PRAGMA recursive_triggers").fetchone() == (1,)  # REPLACE fires the delete triggers (FTS)
    assert db.execute("PRAGMA foreign_keys").fetchone() == (1,)
    db.execute("create table t (a integer, b text)")
    db.execute("insert into t values (?, ?)", [1, "x"])
    assert not db.conn.in_transaction  # autocommit outside `with db.conn:`
    rows = db.query("select a, b as name from t where a = ?", [1])
    assert list(rows) == [{"a": 1, "name": "x"}]
    assert list(db.query("select * from t where a = 2")) == []
    with db.conn:
        db.execute("insert into t values (2, 'y')")
        assert db.conn.in_transaction
    assert database_file(db) == str(tmp_path / "arena.db")
    reader = open_reader(str(tmp_path / "arena.db"))
    assert [row["a"] for row in reader.query("select a from t order by a")] == [1, 2]
    reader.close()
    db.close()

