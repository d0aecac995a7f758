"""The ``models`` table read as lookups: a model's name from its id and back, and what the page tells a voter
about a model after the vote (:func:`datamodel.catalog.add_model` writes it)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from datamodel.database import Database

HUB = "https://huggingface.co/"
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class ModelDetails:
    """What a voter is told about a model once they have voted: its description's first sentence and a link."""

    summary: str = ""
    link: str = ""  # its model card (the hub id of its configuration, or a ``link`` the configuration names)


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to the first ". " or the end), as the reveal shows a description."""
    text = " ".join(str(text).split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


def model_details(db: Database, names: list[str]) -> dict[str, ModelDetails]:
    """{name: :class:`ModelDetails`} of the models named (one indexed query): the registry's description
    (:mod:`generators.registry`, stored with the model), and a link to the model card at the hub id of its
    configuration, or to an https ``link`` it names; none for a model without them (imported images, the demo)."""
    if not names:
        return {}
    rows = db.execute(f"SELECT name, description, config FROM models WHERE name IN ({', '.join('?' * len(names))})",
                      list(names)).fetchall()
    details = {}
    for name, description, config in rows:
        try:
            config = json.loads(config or "{}")
        except ValueError:
            config = {}
        config = config if isinstance(config, dict) else {}
        link = str(config.get("link") or "")
        hub_id = str(config.get("hub_id") or "")
        if not link.startswith("https://"):
            link = HUB + hub_id if _HUB_ID.match(hub_id) else ""
        details[name] = ModelDetails(first_sentence(description or ""), link)
    return details


def model_ids(db: Database) -> dict[str, int]:
    """{name: id} of every model, by name."""
    return dict(db.execute("SELECT name, id FROM models ORDER BY name").fetchall())


def model_names(db: Database) -> dict[int, str]:
    """{id: name} of every model, by id."""
    return dict(db.execute("SELECT id, name FROM models ORDER BY id").fetchall())


def sorted_model_names(db: Database) -> list[str]:
    """Every model's name, sorted (the order the leaderboard and the count arrays index models in)."""
    return [name for name, in db.execute("SELECT name FROM models ORDER BY name")]
