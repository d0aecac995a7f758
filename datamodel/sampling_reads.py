"""What the sampler reads (:mod:`sampling`): the vote counts per battle, the changes since, an annotator's prompts,
the prompts and images a draw picks from. Plain reads, each one query (the counts one read transaction).

The queries are the ones the sampler tuned at a million votes (:mod:`sampling.counts`, :mod:`sampling.sampler`,
:mod:`sampling.prompt_pool`, :mod:`sampling.draws`): a draw finds its rows by key and never scans the votes. Where
the engines differ, each has its text: SQLite's ``INDEXED BY`` hint, which keeps an annotator's newest votes one seek
away, and scalar ``min``/``max`` (PostgreSQL's ``LEAST``/``GREATEST``; its ``SUM`` of booleans is a ``FILTER``
count).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from datamodel.change_logs import missed_changes, pruned_mark_sql
from datamodel.connection import read_snapshot
from datamodel.database import Database
from datamodel.dialect import is_postgres, pick
from datamodel.schema import OUTCOMES

VOTE_FACTS = "id, voter_kind, annotator_id, prompt_id, left_image_id, right_image_id, left_model_id, right_model_id, " \
             "outcome"
_CHUNK = 50_000


def votes_by_id(db: Database, vote_ids) -> list[tuple]:
    """The facts a sampler counts of the given votes (:data:`VOTE_FACTS`), by primary key, 500 ids a query."""
    ids = list(dict.fromkeys(int(vote_id) for vote_id in vote_ids))
    rows: list[tuple] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows += db.execute(f"SELECT {VOTE_FACTS} FROM votes WHERE id IN ({', '.join('?' * len(chunk))})",
                           chunk).fetchall()
    return rows


def vote_pairing(db: Database, vote_id: int) -> tuple[int, int, int] | None:
    """(prompt id, left image id, right image id) of a vote whose two images battles may still show, or None."""
    row = db.execute("SELECT prompt_id, left_image_id, right_image_id FROM votes WHERE id = ? AND (SELECT COUNT(*) "
                     "FROM battle_images WHERE id IN (left_image_id, right_image_id)) = 2", [vote_id]).fetchone()
    return tuple(row) if row is not None else None


def vote_changes_since(db: Database, seq: int) -> list[tuple]:
    """The rows of ``vote_changes`` after ``seq``, oldest first: (seq, sign, vote id, then the facts of
    :data:`VOTE_FACTS` but the id). One range read of the primary key, the pruning's mark with it: raises
    :class:`datamodel.change_logs.ChangesMissed` if rows after ``seq`` were pruned (read everything again)."""
    facts = VOTE_FACTS.removeprefix("id, ")
    rows = db.execute(f"SELECT seq, sign, vote_id, {facts}, {pruned_mark_sql('vote_changes')} FROM vote_changes "
                      "WHERE seq > ? ORDER BY seq", [seq]).fetchall()
    if rows:
        missed_changes("vote_changes", seq, rows[0][-1])
    return [row[:-1] for row in rows]


def catalog_version(db: Database) -> int | None:
    """The ``catalog`` counter of ``data_versions`` (models, prompts, images): it moves whenever they change, but
    for an open prompt's prompt and images, which battles never draw (they move ``open_prompts``)."""
    row = db.execute("SELECT version FROM data_versions WHERE name = 'catalog'").fetchone()
    return None if row is None else row[0]


@dataclass
class CountRows:
    """One read of what the sampler's count tables are built from (:func:`read_count_rows`)."""

    versions: dict[str, int]
    model_ids: tuple[int, ...]
    prompts: list[tuple[int, str]]  # (prompt id, suite) of the prompts with images, by id
    images: list[tuple[int, int]]  # distinct (prompt id, model id) of the images
    battles: np.ndarray  # one row per battle: low, high, prompt, model_low, model_high, count, id sum, annotator sum,
    # then per outcome: votes with the lower image on the left, votes with it on the right
    change_seq: int = 0  # the last row of vote_changes the read includes
    columns: int = field(default=8 + 2 * len(OUTCOMES))


def _battle_counts_sql(db) -> str:
    """Votes of one voter kind, not excluded, per battle (the unordered pair of images), with the outcomes split by
    which image was on the left: one pass over the votes table (about 2 s per million on SQLite)."""
    if not is_postgres(db):
        low, high = "min(left_image_id, right_image_id)", "max(left_image_id, right_image_id)"
        by_outcome = ", ".join(f"SUM(outcome = '{o}' AND left_image_id < right_image_id), "
                               f"SUM(outcome = '{o}' AND left_image_id > right_image_id)" for o in OUTCOMES)
        sums = "SUM(id), coalesce(SUM(annotator_id), 0)"
    else:
        low, high = "LEAST(left_image_id, right_image_id)", "GREATEST(left_image_id, right_image_id)"
        by_outcome = ", ".join(f"COUNT(*) FILTER (WHERE outcome = '{o}' AND left_image_id < right_image_id), "
                               f"COUNT(*) FILTER (WHERE outcome = '{o}' AND left_image_id > right_image_id)"
                               for o in OUTCOMES)
        sums = "SUM(id)::bigint, coalesce(SUM(annotator_id), 0)::bigint"
    return f"""
        SELECT {low} AS low, {high} AS high, coalesce(min(prompt_id), 0),
               coalesce(min(CASE WHEN left_image_id < right_image_id THEN left_model_id ELSE right_model_id END), 0),
               coalesce(min(CASE WHEN left_image_id < right_image_id THEN right_model_id ELSE left_model_id END), 0),
               COUNT(*), {sums}, {by_outcome}
        FROM votes WHERE voter_kind = ? AND excluded = 0 GROUP BY low, high"""


def read_count_rows(db: Database, voter_kind: str = "human") -> CountRows:
    """Models, prompts with images, their images and the votes per battle, in one read transaction (the battles
    converted to integers a slice at a time: a server's other threads get the interpreter in between)."""
    with read_snapshot(db):
        versions = dict(db.execute("SELECT name, version FROM data_versions").fetchall())
        change_seq = db.execute("SELECT coalesce(max(seq), 0) FROM vote_changes").fetchone()[0]
        model_ids = tuple(row[0] for row in db.execute("SELECT id FROM models ORDER BY id"))
        prompts = db.execute(
            "SELECT p.id, p.suite FROM prompts p WHERE p.id IN (SELECT prompt_id FROM battle_images) ORDER BY p.id"
        ).fetchall()
        images = db.execute("SELECT DISTINCT prompt_id, model_id FROM battle_images").fetchall()
        cursor = db.execute(_battle_counts_sql(db), [voter_kind])
        chunks = []
        while rows := cursor.fetchmany(_CHUNK):
            chunks.append(np.array(rows, dtype=np.int64))
    columns = 8 + 2 * len(OUTCOMES)
    battles = np.concatenate(chunks) if chunks else np.zeros((0, columns), dtype=np.int64)
    return CountRows(versions, model_ids, prompts, images, battles, int(change_seq))


def pair_images(db: Database, prompt_id: int, model_a: int, model_b: int) -> list[tuple[int, int]]:
    """(image id, model id) of the two models' images of a prompt, by model and index."""
    return db.execute("SELECT id, model_id FROM battle_images WHERE prompt_id = ? AND model_id IN (?, ?) "
                      "ORDER BY model_id, idx", [prompt_id, model_a, model_b]).fetchall()


def prompt_images(db: Database, prompt_id: int) -> list[tuple[int, int]]:
    """(image id, model id) of every image of a prompt that battles may show (``battle_images``), by model and
    index."""
    return db.execute("SELECT id, model_id FROM battle_images WHERE prompt_id = ? ORDER BY model_id, idx",
                      [prompt_id]).fetchall()


def annotator_prompts(db: Database, annotator_id: int,
                      after_vote: int | None = None) -> list[tuple[int, int, int]]:
    """(prompt id, votes, latest vote id) of an annotator's votes, by prompt; only the votes after ``after_vote``
    when given. All of them come from the covering index ``votes_annotator_prompt``; the newer ones from one seek
    in ``votes_annotator``, whose entries follow the vote ids (SQLite is told which index: its statistics, stale
    after a bulk load, may pick the other)."""
    if after_vote is None:
        return db.execute("SELECT prompt_id, COUNT(*), MAX(id) FROM votes WHERE annotator_id = ? AND prompt_id IS NOT "
                          "NULL GROUP BY prompt_id ORDER BY prompt_id", [annotator_id]).fetchall()
    hint = pick(db, sqlite=" INDEXED BY votes_annotator", postgresql="")
    return db.execute(f"SELECT prompt_id, COUNT(*), MAX(id) FROM votes{hint} WHERE annotator_id = ? AND id > ? AND "
                      "prompt_id IS NOT NULL GROUP BY prompt_id ORDER BY prompt_id",
                      [annotator_id, after_vote]).fetchall()


def eligible_prompts(db: Database, suite: str | None = None) -> list[int]:
    """Ids of prompts (of ``suite``, if given) with images from at least two models that battles may show (the view
    ``battle_images``: rendered for the arena's display settings, not withheld; :mod:`datamodel.renditions`)."""
    where, params = ("WHERE p.suite = ?", [suite]) if suite else ("", [])
    rows = db.execute(
        f"""
        SELECT i.prompt_id FROM battle_images i JOIN prompts p ON p.id = i.prompt_id {where}
        GROUP BY i.prompt_id HAVING COUNT(DISTINCT i.model_id) >= 2 ORDER BY i.prompt_id
        """,
        params,
    ).fetchall()
    return [row[0] for row in rows]


def not_shown(db: Database) -> str:
    """Why images of the catalog are not in ``battle_images``, as a sentence to add to a refusal ("" if all are)."""
    differs = pick(db, sqlite="IS NOT", postgresql="IS DISTINCT FROM")
    waiting, unshowable, withheld = db.execute(
        "SELECT COUNT(*) FILTER (WHERE unshowable IS NULL AND withheld IS NULL AND (rendition IS NULL OR rendition "
        f"{differs} (SELECT rendition FROM display WHERE id = 1))), COUNT(*) FILTER (WHERE unshowable IS NOT NULL), "
        "COUNT(*) FILTER (WHERE withheld IS NOT NULL) FROM images").fetchone()
    parts = [f"{waiting} wait for their display rendition (the server makes them at start; or run "
             "python -m arena renditions)" if waiting else "",
             f"{unshowable} cannot be read (re-import them)" if unshowable else "",
             f"{withheld} were published with their model names and are withheld from battles (python -m arena "
             "withheld --release to draw them again)" if withheld else ""]
    parts = [part for part in parts if part]
    return f" Of the images stored, {'; '.join(parts)}." if parts else ""


def suites_with_battles(db: Database) -> list[str]:
    """Suites that have at least one prompt with images from two models (the arena's suite filter)."""
    rows = db.execute(
        """
        SELECT DISTINCT p.suite FROM prompts p WHERE p.id IN (
            SELECT prompt_id FROM battle_images GROUP BY prompt_id HAVING COUNT(DISTINCT model_id) >= 2)
        ORDER BY p.suite
        """
    ).fetchall()
    return [row[0] for row in rows]
