"""Models, prompts and images: the rows battles are drawn from.

Suites describe prompts as :class:`PromptSpec` values and write them with :func:`add_prompts`; generators and
importers store image bytes in the media folder and register them with :func:`add_image`. Every function takes the
database first; every write that belongs together runs in one transaction.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from datamodel.database import Database
from datamodel.dialect import json_text_items, pick
from datamodel.media import StoredImage


class CatalogError(ValueError):
    """A prompt, model or image cannot be written; the message says which and what to do."""


@dataclass(frozen=True)
class PromptSpec:
    """One prompt as a suite describes it. ``(suite, subset, item_key, variant, role)`` identifies it."""

    suite: str
    item_key: str
    text: str
    subset: str = ""
    variant: str = ""
    role: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # where it came from, e.g. "data.json line 12", for error messages

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.suite, self.subset, self.item_key, self.variant, self.role)


@dataclass
class PromptImport:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    ids: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the import did beyond writing, e.g. rows it merged


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def add_model(
    db: Database, name: str, *, source: str = "imported", description: str = "", config: dict | None = None
) -> int:
    """Insert a model if its name is new; return its id either way."""
    name = name.strip()
    if not name:
        raise CatalogError("a model needs a non-empty name.")
    with db.conn:
        db.execute(
            "INSERT INTO models (name, source, description, config) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            [name, source, description, _dumps(config or {})],
        )
        return db.execute("SELECT id FROM models WHERE name = ?", [name]).fetchone()[0]


def add_prompts(db: Database, specs: Iterable[PromptSpec]) -> PromptImport:
    """Write prompts in one transaction: new ones are inserted, known ones with new metadata updated.

    Re-adding the same prompts changes nothing. A spec repeated in ``specs``, or a known key whose text differs,
    raises :class:`CatalogError` and writes nothing.
    """
    specs = list(specs)
    seen: dict[tuple, PromptSpec] = {}
    for spec in specs:
        if not spec.text.strip() or not spec.item_key.strip() or not spec.suite.strip():
            raise CatalogError(f"{spec.source or spec.key}: a prompt needs a suite, an item key and a text.")
        if spec.key in seen:
            first = seen[spec.key]
            raise CatalogError(
                f"{spec.source or 'input'}: duplicate prompt key {spec.key} (first at {first.source or 'an earlier row'}). "
                "Give each prompt its own item key, or role/variant."
            )
        seen[spec.key] = spec
    result = PromptImport()
    with db.conn:
        for spec in specs:
            row = db.execute(
                "SELECT id, text, metadata FROM prompts WHERE suite = ? AND subset = ? AND item_key = ? "
                "AND variant = ? AND role = ?",
                list(spec.key),
            ).fetchone()
            metadata = _dumps(spec.metadata)
            if row is None:
                prompt_id = db.execute(
                    "INSERT INTO prompts (suite, subset, variant, item_key, role, text, metadata) VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING id", [spec.suite, spec.subset, spec.variant, spec.item_key, spec.role, spec.text, metadata],
                ).fetchone()[0]
                result.inserted += 1
                result.ids.append(prompt_id)
                continue
            prompt_id, text, old_metadata = row
            if text != spec.text:
                raise CatalogError(
                    f"{spec.source or spec.key}: prompt {spec.key} already exists with the text {text!r}, "
                    f"not {spec.text!r}. Images were made for the old text: import it under a new item key."
                )
            if old_metadata != metadata:
                db.execute("UPDATE prompts SET metadata = ? WHERE id = ?", [metadata, prompt_id])
                result.updated += 1
            else:
                result.unchanged += 1
            result.ids.append(prompt_id)
    return result


def add_image(
    db: Database,
    *,
    prompt_id: int,
    model_id: int,
    stored: StoredImage,
    idx: int = 0,
    seed: int | None = None,
    params: dict | None = None,
) -> int:
    """Register a stored image as ``model``'s ``idx``-th image for ``prompt``; an existing row is kept."""
    with db.conn:
        db.execute(
            "INSERT INTO images (prompt_id, model_id, idx, seed, media_hash, media_ext, width, height, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (prompt_id, model_id, idx) DO NOTHING",
            [prompt_id, model_id, idx, seed, stored.media_hash, stored.media_ext, stored.width, stored.height,
             _dumps(params or {})],
        )
        return db.execute(
            "SELECT id FROM images WHERE prompt_id = ? AND model_id = ? AND idx = ?", [prompt_id, model_id, idx]
        ).fetchone()[0]


def add_image_once(db: Database, *, prompt_id: int, model_id: int, stored: StoredImage,
                   params: dict | None = None) -> tuple[int, bool]:
    """``model``'s image ``stored`` for ``prompt``: the id of an image of theirs with the same content, else a new
    row at the next generation index; (id, whether it is new)."""
    row = db.execute("SELECT id FROM images WHERE prompt_id = ? AND model_id = ? AND media_hash = ? ORDER BY idx "
                     "LIMIT 1", [prompt_id, model_id, stored.media_hash]).fetchone()
    if row is not None:
        return row[0], False
    idx = db.execute("SELECT coalesce(max(idx) + 1, 0) FROM images WHERE prompt_id = ? AND model_id = ?",
                     [prompt_id, model_id]).fetchone()[0]
    return add_image(db, prompt_id=prompt_id, model_id=model_id, stored=stored, idx=idx, params=params), True


def prompt_row(db: Database, prompt_id: int) -> dict:
    row = next(db.query("SELECT * FROM prompts WHERE id = ?", [prompt_id]), None)
    if row is None:
        raise CatalogError(f"no prompt with id {prompt_id}.")
    row["metadata"] = json.loads(row["metadata"])
    return row


def suite_prompts(db: Database, suite: str) -> list[dict]:
    """Every prompt of ``suite`` (its columns, ``metadata`` decoded), in id order."""
    rows = list(db.query("SELECT * FROM prompts WHERE suite = ? ORDER BY id", [suite]))
    for row in rows:
        row["metadata"] = json.loads(row["metadata"])
    return rows


def suites_summary(db: Database) -> list[dict]:
    """Prompt and image counts per (suite, subset, variant)."""
    return list(
        db.query(
            """
            SELECT p.suite, p.subset, p.variant, COUNT(DISTINCT p.id) AS prompts,
                   COUNT(i.id) AS images, COUNT(DISTINCT i.model_id) AS models
            FROM prompts p LEFT JOIN images i ON i.prompt_id = p.id
            GROUP BY p.suite, p.subset, p.variant ORDER BY p.suite, p.subset, p.variant
            """
        )
    )


def partner_texts(db: Database, prompt_ids: Iterable[int]) -> dict[int, str | None]:
    """{prompt id: its partner prompt's text, or None}: the partner is the prompt of the same suite, subset, item
    and variant whose role is the prompt's ``metadata["partner_role"]`` (Commonsense-T2I's P1 for P2 and P2 for P1)."""
    ids = sorted({int(i) for i in prompt_ids})
    found: dict[int, str | None] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = db.execute(
            f"""
            SELECT p.id, partner.text FROM prompts p
            LEFT JOIN prompts partner
              ON partner.suite = p.suite AND partner.subset = p.subset AND partner.item_key = p.item_key
             AND partner.variant = p.variant AND partner.role = json_extract(p.metadata, '$.partner_role')
             AND partner.id != p.id
            WHERE p.id IN ({','.join('?' * len(chunk))})
            """, chunk).fetchall()
        found.update({prompt_id: text for prompt_id, text in rows})
    return found


def items_per_subset(db: Database, suite: str) -> dict[str, int]:
    """{subset: number of distinct items} of ``suite`` (Commonsense-T2I: items per category)."""
    return dict(db.execute("SELECT subset, COUNT(DISTINCT item_key) FROM prompts WHERE suite = ? GROUP BY subset "
                           "ORDER BY subset", [suite]).fetchall())


def models_with_images(db: Database, suite: str | None) -> list[str]:
    """Names of the models with images of ``suite``'s prompts (None: of any prompt), in the order they were added."""
    where, args = ("AND p.suite = ?", [suite]) if suite is not None else ("", [])
    return [name for name, in db.execute(
        "SELECT m.name FROM models m WHERE EXISTS (SELECT 1 FROM images i JOIN prompts p ON p.id = i.prompt_id "
        f"WHERE i.model_id = m.id {where}) ORDER BY m.id", args)]


def image_provenance(db: Database, suite: str) -> list[dict]:
    """Per model of ``suite``'s images: its source (diffusers, demo, imported), how many images, and the presets
    recorded in their generation parameters (an imported image records none)."""
    preset = "coalesce(json_extract(i.params, '$.preset'), CASE m.source WHEN 'imported' THEN '' ELSE 'arena' END)"
    presets = pick(db, sqlite=f"group_concat(DISTINCT {preset})", postgresql=f"string_agg(DISTINCT {preset}, ',')")
    return list(db.query(
        f"""
        SELECT m.name AS model, m.source, COUNT(i.id) AS images, {presets} AS presets
        FROM images i JOIN prompts p ON p.id = i.prompt_id JOIN models m ON m.id = i.model_id
        WHERE p.suite = ? GROUP BY m.name, m.source ORDER BY m.name
        """, [suite]))


def prompts_of(db: Database, suite: str, *, subset: str | None = None, variant: str | None = None,
               limit: int | None = None) -> list[dict]:
    """A suite's prompt rows (metadata decoded), in item order; ``limit`` 0 or None means all."""
    where, params = ["suite = ?"], [suite]
    for column, value in (("subset", subset), ("variant", variant)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT * FROM prompts WHERE {' AND '.join(where)} ORDER BY subset, item_key, variant, role, id"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [{**row, "metadata": json.loads(row["metadata"])} for row in db.query(sql, params)]


def suites_of(db: Database, prompt_ids) -> list[str]:
    """The suites the given prompts belong to, sorted."""
    prompt_ids = list(prompt_ids)
    suites: set[str] = set()
    for start in range(0, len(prompt_ids), 500):
        chunk = prompt_ids[start:start + 500]
        suites.update(row[0] for row in db.execute(
            f"SELECT DISTINCT suite FROM prompts WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
    return sorted(suites)


def item_keys(db: Database, suite: str, subsets) -> list[tuple[str, str]]:
    """The distinct (subset, item key) of ``suite``'s prompts in ``subsets``."""
    subsets = list(subsets)
    return db.execute(f"SELECT DISTINCT subset, item_key FROM prompts WHERE suite = ? AND subset IN "
                      f"({', '.join('?' * len(subsets)) or 'NULL'})", [suite, *subsets]).fetchall()


def item_metadata(db: Database, suite: str, variant: str, subsets) -> list[tuple[str, str, dict]]:
    """(subset, item key, metadata decoded) of ``suite``'s prompts of ``variant`` in ``subsets``."""
    subsets = list(subsets)
    rows = db.execute(f"SELECT subset, item_key, metadata FROM prompts WHERE suite = ? AND variant = ? AND subset IN "
                      f"({', '.join('?' * len(subsets)) or 'NULL'})", [suite, variant, *subsets]).fetchall()
    return [(subset, key, json.loads(metadata)) for subset, key, metadata in rows]


def subsets_with_metadata(db: Database, suite: str, *, present: str, absent: str) -> list[str]:
    """The subsets of ``suite`` with a prompt whose metadata has a non-empty ``present`` key and no ``absent`` key
    (the taxonomy suite's concepts built from WordNet, not imported: ``present="synset", absent="published"``)."""
    return [subset for subset, in db.execute(
        f"SELECT DISTINCT subset FROM prompts WHERE suite = ? AND json_extract(metadata, '$.{absent}') IS NULL "
        f"AND json_extract(metadata, '$.{present}') != ''", [suite])]


def published_prompt_count(db: Database, suite: str) -> int:
    """How many of ``suite``'s prompts come from a published file (metadata ``published`` set)."""
    return db.execute("SELECT COUNT(*) FROM prompts WHERE suite = ? AND json_extract(metadata, '$.published') "
                      "IS NOT NULL", [suite]).fetchone()[0]


def prompts_by_id(db: Database, prompt_ids) -> list[dict]:
    """The rows (id, suite, subset, item_key, variant, role, text) of the given prompts that exist, by id."""
    ids = sorted({int(i) for i in prompt_ids})
    rows: list[dict] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows += list(db.query("SELECT id, suite, subset, item_key, variant, role, text FROM prompts WHERE id IN "
                              f"({','.join('?' * len(chunk))})", chunk))
    return sorted(rows, key=lambda row: row["id"])


def suite_prompt_ids(db: Database, suite: str, subset: str | None = None, variant: str | None = None,
                     limit: int | None = None) -> list[int]:
    """Ids of a suite's prompts (optionally one subset / variant), in id order; ``limit`` 0 or None means all."""
    sql, args = "SELECT id FROM prompts WHERE suite = ?", [suite]
    for column, value in (("subset", subset), ("variant", variant)):
        if value is not None:
            sql += f" AND {column} = ?"
            args.append(value)
    sql += " ORDER BY id" + (f" LIMIT {int(limit)}" if limit else "")
    return [row[0] for row in db.execute(sql, args)]


def suite_names(db: Database) -> list[str]:
    """Every suite with prompts, sorted."""
    return [row[0] for row in db.execute("SELECT DISTINCT suite FROM prompts ORDER BY suite")]


def subsets_of(db: Database, suite: str) -> list[str]:
    """The distinct subsets of ``suite``'s prompts, sorted."""
    return [row[0] for row in db.execute("SELECT DISTINCT subset FROM prompts WHERE suite = ? ORDER BY subset",
                                         [suite])]


def image_keys(db: Database, model_ids) -> list[tuple[int, int, int]]:
    """(model id, prompt id, index) of every image of the given models."""
    model_ids = list(model_ids)
    return db.execute(f"SELECT model_id, prompt_id, idx FROM images WHERE model_id IN "
                      f"({','.join('?' * len(model_ids)) or 'NULL'})", model_ids).fetchall()


def image_id_keys(db: Database) -> dict[tuple[int, int, int], int]:
    """{(prompt id, model id, index): image id} of every image."""
    return {(prompt, model, idx): image for prompt, model, idx, image in
            db.execute("SELECT prompt_id, model_id, idx, id FROM images")}


def image_count(db: Database) -> int:
    return db.execute("SELECT COUNT(*) FROM images").fetchone()[0]


def generation_params(db: Database, model_id: int) -> list[dict]:
    """The generation parameters (``images.params``, decoded) of every image of a model."""
    return [json.loads(params or "{}") for params, in
            db.execute("SELECT params FROM images WHERE model_id = ?", [model_id])]


def model_config(db: Database, model_id: int) -> tuple[dict, int]:
    """(the model's stored config, decoded; how many images it has)."""
    row = db.execute("SELECT config, (SELECT COUNT(*) FROM images WHERE model_id = ?) FROM models WHERE id = ?",
                     [model_id, model_id]).fetchone()
    return json.loads(row[0] or "{}"), row[1]


def image_size(db: Database, model: str) -> tuple[int, int] | None:
    """(width, height) of a stored image of the model named ``model``, or None."""
    row = db.execute("SELECT i.width, i.height FROM images i JOIN models m ON m.id = i.model_id WHERE m.name = ?",
                     [model]).fetchone()
    return tuple(row) if row is not None else None


def prompt_clause(suite: str | None = None, subset: str | None = None, variant: str | None = None,
                  alias: str = "p") -> tuple[str, list]:
    """A SQL condition on prompts ``alias`` (suite, subset, variant: each a value or None for any) and its
    parameters; ``1 = 1`` for no filter."""
    clauses, params = [], []
    for column, value in (("suite", suite), ("subset", subset), ("variant", variant)):
        if value:
            clauses.append(f"{alias}.{column} = ?")
            params.append(value)
    return (" AND ".join(clauses) or "1 = 1"), params


def selected_images(db: Database, *, suite: str | None = None, subset: str | None = None,
                    variant: str | None = None, model_ids=None, shown_only: bool = False) -> list[tuple]:
    """(image id, prompt id, model id, model name, index, media hash, media ext, width, height, suite, subset,
    variant, item key, role, text, metadata text) of the images of the selected prompts and models (None: every
    model), by prompt, model name and index."""
    where, params = prompt_clause(suite, subset, variant)
    model_ids = None if model_ids is None else list(model_ids)
    model_clause = f"AND i.model_id IN ({','.join('?' * len(model_ids)) or 'NULL'})" if model_ids is not None else ""
    if shown_only:  # only images a battle may show (rendered for the display, not withheld)
        model_clause += " AND i.id IN (SELECT id FROM battle_images)"
    return db.execute(
        f"""
        SELECT i.id, i.prompt_id, i.model_id, m.name, i.idx, i.media_hash, i.media_ext, i.width, i.height,
               p.suite, p.subset, p.variant, p.item_key, p.role, p.text, p.metadata
        FROM images i JOIN prompts p ON p.id = i.prompt_id JOIN models m ON m.id = i.model_id
        WHERE {where} {model_clause}
        ORDER BY i.prompt_id, m.name, i.idx
        """,
        [*params, *(model_ids or [])],
    ).fetchall()


def image_suites(db: Database) -> list[tuple[int, str]]:
    """(image id, its prompt's suite) of every image."""
    return db.execute("SELECT i.id, p.suite FROM images i JOIN prompts p ON p.id = i.prompt_id").fetchall()


def suites_with_images(db: Database) -> set[str]:
    """The suites with at least one image."""
    return {row[0] for row in db.execute("SELECT DISTINCT p.suite FROM images i JOIN prompts p ON p.id = i.prompt_id")}


def has_prompts(db: Database) -> bool:
    return db.execute("SELECT 1 FROM prompts LIMIT 1").fetchone() is not None


def prompt_keys(db: Database, suites) -> list[tuple[int, tuple[str, str, str, str, str]]]:
    """(id, (suite, subset, item key, variant, role)) of the prompts of ``suites``."""
    suites = list(suites)
    rows = db.execute(f"SELECT id, suite, subset, item_key, variant, role FROM prompts WHERE suite IN "
                      f"({','.join('?' * len(suites)) or 'NULL'})", suites).fetchall()
    return [(row[0], tuple(row[1:])) for row in rows]


def model_suites(db: Database, source: str) -> list[tuple[str, str]]:
    """Distinct (model name, suite) of the images of the models of ``source`` (demo, diffusers, ...)."""
    return db.execute("SELECT DISTINCT m.name, p.suite FROM images i JOIN models m ON m.id = i.model_id "
                      "JOIN prompts p ON p.id = i.prompt_id WHERE m.source = ?", [source]).fetchall()


def all_image_keys(db: Database) -> set[tuple[int, int, int]]:
    """(prompt id, model id, index) of every image."""
    return set(db.execute("SELECT prompt_id, model_id, idx FROM images").fetchall())


def prompts_with_images_of(db: Database, model_names, prompt_ids) -> int:
    """How many (prompt, model) of ``prompt_ids`` × ``model_names`` have at least one image."""
    model_names, prompt_ids = list(model_names), list(prompt_ids)
    return db.execute(
        "SELECT COUNT(*) FROM (SELECT DISTINCT i.prompt_id, i.model_id FROM images i JOIN models m ON m.id = "
        f"i.model_id WHERE m.name IN ({','.join('?' * len(model_names)) or 'NULL'}) AND i.prompt_id IN "
        f"({','.join('?' * len(prompt_ids)) or 'NULL'})) made", [*model_names, *prompt_ids]).fetchone()[0]


def prompt_items(db: Database, suite: str, variant: str | None = None) -> list[tuple[str, str, int]]:
    """(item key, subset, prompt id) of the prompts of ``suite`` (of ``variant``, or every variant), by id."""
    sql, args = "SELECT item_key, subset, id FROM prompts WHERE suite = ?", [suite]
    if variant is not None:
        sql += " AND variant = ?"
        args.append(variant)
    return db.execute(sql + " ORDER BY id", args).fetchall()


PROMPT_COLUMNS = ("suite", "subset", "variant")


def prompt_column_values(db: Database, column: str) -> list[str]:
    """The distinct non-empty values of the prompts' ``column`` (one of :data:`PROMPT_COLUMNS`), sorted."""
    if column not in PROMPT_COLUMNS:
        raise ValueError(f"prompt_column_values reads {', '.join(PROMPT_COLUMNS)}, not {column!r}.")
    rows = db.execute(f"SELECT DISTINCT {column} FROM prompts WHERE {column} IS NOT NULL AND {column} != '' ORDER BY 1")
    return [str(row[0]) for row in rows]


def suite_slices(db: Database) -> list[tuple]:
    """(suite, subset, variant, category) of every prompt, and (suite, None, None, category) for each entry of a
    prompt's ``categories`` list: what the leaderboard's menus offer per suite."""
    items, item = json_text_items(db, "p.metadata", "categories", "c")
    return db.execute(
        "SELECT suite, subset, variant, json_extract(metadata, '$.category') FROM prompts WHERE suite IS NOT NULL "
        f"UNION SELECT p.suite, NULL, NULL, {item} FROM prompts p, {items} WHERE p.suite IS NOT NULL").fetchall()


def models_of_source(db: Database, source: str) -> list[dict]:
    """The models of ``source`` (demo, diffusers, imported, ...), by id: name, source, description, config
    (decoded)."""
    return [{"name": name, "source": model_source, "description": description, "config": json.loads(config)}
            for name, model_source, description, config in db.execute(
                "SELECT name, source, description, config FROM models WHERE source = ? ORDER BY id", [source])]


def images_of_source(db: Database, source: str) -> list[tuple]:
    """(image id, suite, subset, item key, variant, role, model name, index, seed, media hash, media ext, params
    text) of every image of the models of ``source``, by model id, prompt id and index."""
    return db.execute(
        "SELECT i.id, p.suite, p.subset, p.item_key, p.variant, p.role, m.name, i.idx, i.seed, i.media_hash, "
        "i.media_ext, i.params FROM images i JOIN prompts p ON p.id = i.prompt_id JOIN models m ON m.id = i.model_id "
        "WHERE m.source = ? ORDER BY m.id, i.prompt_id, i.idx", [source]).fetchall()


def publish_images(db: Database, through_vote: int, *, withhold: bool = True,
                   now: float | None = None) -> int:
    """Record that the images of the counted votes up to ``through_vote`` were published with their models' names
    (``images.published_at``; a Hugging Face export) and, unless ``withhold`` is false, leave them out of battles
    (``images.withheld = 'published'``): anyone holding the export can render them as the arena does and name them in a
    battle before the vote. Returns the images newly withheld."""
    shown = ("SELECT left_image_id FROM votes WHERE excluded = 0 AND id <= :through UNION "
             "SELECT right_image_id FROM votes WHERE excluded = 0 AND id <= :through")
    return _publish(db, shown, through_vote, withhold, now)


def publish_rated_images(db: Database, through_rating: int, *, withhold: bool = True,
                         now: float | None = None) -> int:
    """:func:`publish_images` for the images of the counted human ratings up to ``through_rating`` (the ratings'
    Hugging Face export holds each rated image with its model's name, as the votes' does)."""
    return _publish(db, "SELECT image_id FROM ratings WHERE excluded = 0 AND id <= :through", through_rating,
                    withhold, now)


def _publish(db: Database, image_ids_sql: str, through: int, withhold: bool, now: float | None) -> int:
    now = time.time() if now is None else now
    with db.conn:
        db.execute(f"UPDATE images SET published_at = :now WHERE published_at IS NULL AND id IN ({image_ids_sql})",
                   {"now": now, "through": through})
        if not withhold:
            return 0
        return db.execute(f"UPDATE images SET withheld = 'published' WHERE withheld IS NULL AND id IN ({image_ids_sql})",
                          {"through": through}).rowcount


def withheld_images(db: Database) -> dict[str, int]:
    """{reason: images} of the images left out of battles (``images.withheld``)."""
    return dict(db.execute("SELECT withheld, COUNT(*) FROM images WHERE withheld IS NOT NULL GROUP BY withheld"))


def release_withheld(db: Database, reason: str = "published") -> int:
    """Let battles draw the images withheld for ``reason`` again (the admin's decision); returns how many."""
    with db.conn:
        return db.execute("UPDATE images SET withheld = NULL WHERE withheld = ?", [reason]).rowcount
