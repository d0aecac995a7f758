"""A write the database refuses is told in words on every tab that writes, on both engines: "cannot save ... right
now" on the page, one line in the server log with the database's reason, no traceback.

The database refuses through a trigger on the table the event writes, raising what a PostgreSQL server raises where
it cannot be written (a standby, a database set read-only: SQLSTATE 25006, which psycopg reports as an
``InternalError``) or, on SQLite, an ``OperationalError`` as a full disk or a read-only file gives (the trigger writes
into a table that does not exist). Before, the tabs caught ``sqlite3.OperationalError`` alone:
on PostgreSQL every such write answered Gradio's bare "Error" and the log got a traceback.
"""

from __future__ import annotations

import logging
import sqlite3

import psycopg
import pytest
from support.ratings import build_rating_arena
from support.webapp import TEST_TOKEN, Page, running_app, sign_in

from datamodel.human_ratings import set_assignment

ADMIN_PASSWORD = "the admin password"
REASON = "cannot execute the write: the database is read-only"


def refuse_writes(arena, table: str, engine: str) -> None:
    """From now on the database refuses every INSERT into ``table``."""
    if engine == "sqlite":
        with sqlite3.connect(arena.settings.db_path) as conn:
            conn.execute(f'CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} BEGIN '
                         f'INSERT INTO "{REASON}" VALUES (1); END')
        return
    with psycopg.connect(arena.settings.database_url, autocommit=True) as conn:
        conn.execute("CREATE OR REPLACE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     f"RAISE EXCEPTION '{REASON}' USING ERRCODE = 'read_only_sql_transaction'; END $$")
        conn.execute(f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} FOR EACH STATEMENT "
                     "EXECUTE FUNCTION refuse_writes()")


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
def test_a_write_the_database_refuses_is_told_in_words_on_every_tab(tmp_path, engine, request, capfd, caplog):
    settings = {} if engine == "sqlite" else {"database_url": request.getfixturevalue("database_url")}
    arena = build_rating_arena(tmp_path, admin_password=ADMIN_PASSWORD, **settings)
    set_assignment(arena.db, "commonsense_fit", raters_per_item=1, active=True)
    arena.db.close()
    told = {}
    with caplog.at_level(logging.INFO), running_app(arena.settings) as url:
        voter, earlier, rater, admin = Page(url), Page(url), Page(url), Page(url)
        sign_in(voter, "voter")
        sign_in(earlier, "earlier")
        assert earlier.direct("vote_a", [None, "All suites", False, None]).status_code == 200  # a vote, saved
        ok, outputs = rater.queued("rating_sign_in", ["rater", TEST_TOKEN])
        assert ok, outputs
        shown = outputs[6 + 4]  # the sign-in's outputs: six of the form and box, then the question's
        ok, unlocked = admin.queued("admin_unlock", [ADMIN_PASSWORD, None])
        assert ok, unlocked

        refuse_writes(arena, "votes", engine)
        told["vote"] = voter.direct("vote_a", [None, "All suites", False, None]).text
        refuse_writes(arena, "battles", engine)
        told["next battle"] = voter.direct("next_battle", [None, "All suites", False]).text
        refuse_writes(arena, "ratings", engine)
        told["answer"] = rater.direct("rate_commonsense_fit_1", [None, "commonsense_fit", shown]).text
        refuse_writes(arena, "admin_actions", engine)
        told["review"] = str(admin.queued("admin_bulk_exclude", [unlocked[0], "earlier", "", "spam"]))
        refuse_writes(arena, "rating_assignments", engine)
        told["assignment"] = str(admin.queued("do_save", [unlocked[0], "semvar_alignment", 2, [], True]))
    err = capfd.readouterr().err
    said = {what: "cannot save" in text and "right now" in text and REASON not in text for what, text in told.items()}
    assert said == dict.fromkeys(told, True), told
    assert "Traceback" not in err, err[err.index("Traceback"):][:3000]
    logged = [r for r in caplog.records if REASON in r.getMessage()]
    assert len(logged) == len(told) and all(r.exc_info is None for r in logged), [r.getMessage() for r in logged]
