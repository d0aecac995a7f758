"""Write transactions by scope: the whole database's turn, or one annotator's (PostgreSQL; SQLite has one writer).

Every writer of the arena takes ``with db.conn:`` (:mod:`datamodel.connection`, :mod:`datamodel.postgres`): one
write transaction at a time across all processes. On PostgreSQL a transaction that touches only what belongs to one
scope (one annotator's vote, one throttle's counts) may take that scope's lock instead, so other scopes' writes go on
meanwhile. Here so that any data-model module can open one without importing the connection module (which imports
the schema and its migrations).
"""

from __future__ import annotations

import contextlib

from datamodel.dialect import is_postgres


def transaction(db, scope: str | None = None):
    """A write transaction (``with transaction(db, scope):``): ``db.conn``'s, which every writer takes in turn; with a
    ``scope`` on PostgreSQL, one that only the transactions of the same scope take in turn (one annotator's votes:
    :mod:`datamodel.postgres`). SQLite has one writer at a time whatever the scope."""
    if scope is not None and is_postgres(db):
        return db.conn.scoped(scope)
    return db.conn


def annotator_transaction(db, annotator_id: int):
    """The write transaction of what belongs to one annotator alone (their vote and its flags, the battles served
    to them, their stay-signed-in tokens, their first sight of the guidelines, their sign-out): on PostgreSQL it
    holds that annotator's lock only (:func:`transaction` with their scope), so other annotators' writes go on.
    No rule that spans annotators (one account per name, raters per item) may be checked in it: those take the
    whole database's turn, ``with db.conn``."""
    return transaction(db, scope=f"annotator:{int(annotator_id)}")


def annotator_writes(db, annotator_id: int):
    """Groups one annotator's own writes that each open their own transaction (``with db.conn``) under that
    annotator's lock on PostgreSQL (:func:`annotator_transaction`), instead of each taking the whole database's turn;
    on SQLite, where every transaction takes the one write lock anyway, nothing: the writes take their turns as
    they did, and what runs between them holds no lock."""
    return annotator_transaction(db, annotator_id) if is_postgres(db) else contextlib.nullcontext()
