"""The ``models`` table read as lookups: a model's name from its id and back (:func:`datamodel.catalog.add_model`
writes it)."""

from __future__ import annotations

import sqlite_utils


def model_ids(db: sqlite_utils.Database) -> dict[str, int]:
    """{name: id} of every model, by name."""
    return dict(db.execute("SELECT name, id FROM models ORDER BY name").fetchall())


def model_names(db: sqlite_utils.Database) -> dict[int, str]:
    """{id: name} of every model, by id."""
    return dict(db.execute("SELECT id, name FROM models ORDER BY id").fetchall())


def sorted_model_names(db: sqlite_utils.Database) -> list[str]:
    """Every model's name, sorted (the order the leaderboard and the count arrays index models in)."""
    return [name for name, in db.execute("SELECT name FROM models ORDER BY name")]
