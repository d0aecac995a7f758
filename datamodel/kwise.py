"""Four-image battles and their votes (the four-image mode): one prompt, four images from four models in slots 1-4,
the annotator's best (and optionally worst) slot.

Anonymity is the pairwise battles' (:mod:`datamodel.battles`): a battle's id and its media token are unguessable
tokens; the page gets only the media token, and loads the four images as display renditions through it
(``kwise-media/<token>/<slot>``, :func:`kwise_image`), so the four images are served alike, one size, format and
padded length (:mod:`datamodel.renditions`); the images are drawn only from ``battle_images`` (rendered, not
withheld). The models' names leave the server only in the receipt of the vote (:class:`KwiseReceipt`).

A vote is stored with its slots and the image ids they name (``kwise_votes``); :func:`kwise_vote_rows` reads them back
with the four models in slot order, for the ratings (:mod:`ratings.kwise`) and the exports.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.settings import QualityRules
from datamodel.battles import ShownImage
from datamodel.change_logs import ChangesMissed, missed_changes, pruned_mark_sql
from datamodel.connection import read_snapshot
from datamodel.database import Database

if TYPE_CHECKING:  # the media store is only passed through
    from datamodel.media import MediaStore
from datamodel.quality import update_four_image_flags

K = 4  # images per four-image battle
SLOTS = tuple(range(1, K + 1))


class KwiseRejected(ValueError):
    """A four-image vote the arena refuses; the message says what to do."""


@dataclass(frozen=True)
class KwiseBattle:
    id: str
    prompt_id: int
    suite: str
    text: str
    metadata: dict[str, Any]
    image_ids: tuple[int, ...]  # slots 1-4
    media_token: str  # the images are served at /kwise-media/<media_token>/1 .. /4
    served_at: float


@dataclass(frozen=True)
class KwiseReceipt:
    """A recorded four-image vote: the models of slots 1-4 (told after the vote), the slots picked."""

    vote_id: int
    battle_id: str
    models: tuple[str, ...]
    best: int
    worst: int | None
    seconds_to_vote: float | None
    excluded: bool = False  # the quality rules set this vote aside (it does not count)
    reason: str = ""  # why it is excluded, or noted for the admin (a trusted account's vote that still counts)


def record_kwise_battle(db: Database, prompt_id: int, image_ids, *, session_id: str, annotator_id: int,
                        strategy: str, now: float | None = None) -> KwiseBattle:
    """Record four images of ``prompt_id`` (slots 1-4 in the order given) as a battle served to ``annotator_id``'s
    session ``session_id``, drawn by ``strategy``; return it."""
    image_ids = tuple(int(i) for i in image_ids)
    if len(image_ids) != K or len(set(image_ids)) != K:
        raise ValueError(f"a four-image battle shows {K} different images, got {image_ids}")
    battle_id, media_token = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    served_at = time.time() if now is None else now
    with db.conn:
        db.execute("INSERT INTO kwise_battles (id, prompt_id, slot_1_image_id, slot_2_image_id, slot_3_image_id, "
                   "slot_4_image_id, annotator_id, "
                   "session_id, media_token, strategy, served_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [battle_id, prompt_id, *image_ids, annotator_id, session_id, media_token, strategy, served_at])
    return load_kwise_battle(db, battle_id)


def load_kwise_battle(db: Database, battle_id: str) -> KwiseBattle:
    row = db.execute("SELECT b.id, b.prompt_id, p.suite, p.text, p.metadata, b.slot_1_image_id, "
                     "b.slot_2_image_id, b.slot_3_image_id, b.slot_4_image_id, b.media_token, b.served_at "
                     "FROM kwise_battles b JOIN prompts p ON p.id = b.prompt_id "
                     "WHERE b.id = ?", [battle_id]).fetchone()
    if row is None:
        raise LookupError(f"no four-image battle {battle_id!r}")
    return KwiseBattle(row[0], row[1], row[2], row[3], json.loads(row[4]), tuple(row[5:9]), row[9], row[10])


def kwise_image(db: Database, media_token: str, slot: str) -> ShownImage | None:
    """The image in ``slot`` ("1" .. "4") of the four-image battle with ``media_token``, or None."""
    if slot not in {str(s) for s in SLOTS}:
        return None
    row = db.execute(f"SELECT i.id, i.media_hash, i.media_ext FROM kwise_battles b JOIN images i ON i.id = "
                     f"b.slot_{int(slot)}_image_id WHERE b.media_token = ?", [media_token]).fetchone()
    return ShownImage(*row) if row else None


def record_kwise_vote(db: Database, battle: KwiseBattle, *, session_id: str, annotator_id: int,
                      best: int, worst: int | None = None, shown_at: float | None = None,
                      now: float | None = None, rules: QualityRules | None = QualityRules()) -> KwiseReceipt:
    """Store the annotator's pick on ``battle`` (served to ``session_id``): ``best`` and optionally ``worst``, slots
    1-4, checked against the quality ``rules`` in the same transaction
    (:func:`datamodel.quality.update_four_image_flags`; ``None`` skips them): a vote that breaks one is stored,
    flagged ``excluded`` with the reason, which the receipt carries. Refused (:class:`KwiseRejected`) when the battle
    is another session's, already voted on, or the slots are not two different ones of 1-4."""
    if best not in SLOTS or (worst is not None and (worst not in SLOTS or worst == best)):
        raise KwiseRejected(f"Pick the best image (1-{K}) and, if you like, a different worst one.")
    now = time.time() if now is None else now
    with db.conn:
        owner = db.execute("SELECT session_id, annotator_id FROM kwise_battles WHERE id = ?", [battle.id]).fetchone()
        if owner is None or owner[0] != session_id or owner[1] != annotator_id:
            raise KwiseRejected("This set of images is no longer on your screen. Load the next one and vote on it.")
        if db.execute("SELECT 1 FROM kwise_votes WHERE battle_id = ?", [battle.id]).fetchone():
            raise KwiseRejected("These images already have your vote. Press Next.")
        seconds = None if shown_at is None else max(0.0, now - shown_at)
        worst_image = None if worst is None else battle.image_ids[worst - 1]
        vote_id = db.execute(
            "INSERT INTO kwise_votes (battle_id, annotator_id, best, worst, best_image_id, worst_image_id, "
            "seconds_to_vote, voted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [battle.id, annotator_id, best, worst, battle.image_ids[best - 1], worst_image, seconds, now]).fetchone()[0]
        if rules is not None:
            update_four_image_flags(db, annotator_id, rules)
        excluded, reason = db.execute("SELECT excluded, excluded_reason FROM kwise_votes WHERE id = ?",
                                      [vote_id]).fetchone()
    return KwiseReceipt(vote_id, battle.id, slot_models(db, battle.image_ids), best, worst, seconds, bool(excluded),
                        reason)


def slot_models(db: Database, image_ids) -> tuple[str, ...]:
    """The model names of ``image_ids``, in their order."""
    marks = ",".join("?" * len(image_ids))
    names = dict(db.execute(f"SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id WHERE i.id IN "
                            f"({marks})", list(image_ids)).fetchall())
    return tuple(names[i] for i in image_ids)


KWISE_COLUMNS = ("vote_id", "battle_id", "annotator", "suite", "item_key", "prompt", "model_1", "model_2", "model_3",
                 "model_4", "image_id_1", "image_id_2", "image_id_3", "image_id_4", "best", "worst", "best_model",
                 "worst_model", "seconds_to_vote", "voted_at", "strategy", "excluded", "excluded_reason", "reviewed")
"""The columns of a four-image vote as the exports write it (docs/running-a-study.md#exports-other-tools-read);
``excluded``, ``excluded_reason`` and ``reviewed`` as the pairwise export's (:data:`datamodel.vote_table.COLUMNS`)."""


def has_kwise_votes(db: Database) -> bool:
    """Whether ``db`` holds a four-image vote, counted or not (the Admin tab then offers their export)."""
    return db.execute("SELECT 1 FROM kwise_votes LIMIT 1").fetchone() is not None


def kwise_vote_rows(db: Database, *, suite: str | None = None, subset: str | None = None,
                    variant: str | None = None, category: str | None = None,
                    include_excluded: bool = False) -> list[dict]:
    """The four-image votes (on the prompts of ``suite``, ``subset``, ``variant`` and ``category`` when given, as the
    leaderboard slices pairwise votes: :func:`datamodel.vote_arrays.prompt_slice_sql`; counted ones unless
    ``include_excluded``), in the order cast, as dicts of :data:`KWISE_COLUMNS`."""
    from datamodel.vote_arrays import prompt_slice_sql

    sliced, params = prompt_slice_sql(db, dict(suite=suite, subset=subset, variant=variant, category=category), "b")
    models, joins = slot_models_sql(names=True)
    where = [sliced.removeprefix(" WHERE ") or "1 = 1"]
    if not include_excluded:
        where.append("v.excluded = 0")
    rows = db.execute(
        f"""SELECT v.id, b.id, a.name, p.suite, p.item_key, p.text, {models}, b.slot_1_image_id, b.slot_2_image_id,
                   b.slot_3_image_id, b.slot_4_image_id, v.best, v.worst, v.seconds_to_vote, v.voted_at, b.strategy,
                   v.excluded, v.excluded_reason, v.reviewed
            FROM kwise_votes v JOIN kwise_battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id
            JOIN annotators a ON a.id = v.annotator_id {joins}
            WHERE {' AND '.join(where)} ORDER BY v.voted_at, v.id""", params).fetchall()
    out = []
    for row in rows:
        names = row[6:10]
        best, worst = row[14], row[15]
        out.append(dict(zip(KWISE_COLUMNS, (*row[:14], best, worst, names[best - 1],
                                            None if worst is None else names[worst - 1], *row[16:]))))
    return out


def slot_models_sql(*, names: bool = False, join: str = "JOIN") -> tuple[str, str]:
    """(the models of slots 1-4 as columns, the joins from ``kwise_battles b`` that give them): their ids, or with
    ``names`` their names; ``join`` "LEFT JOIN" keeps a row whose battle or images are gone (its models NULL)."""
    if not names:
        return (", ".join(f"i{s}.model_id" for s in SLOTS),
                " ".join(f"{join} images i{s} ON i{s}.id = b.slot_{s}_image_id" for s in SLOTS))
    return (", ".join(f"m{s}.name" for s in SLOTS),
            " ".join(f"{join} images i{s} ON i{s}.id = b.slot_{s}_image_id {join} models m{s} ON m{s}.id = "
                     f"i{s}.model_id" for s in SLOTS))


def kwise_model_counts(db: Database) -> tuple[dict[int, int], list[tuple[tuple[int, ...], int, int | None]]]:
    """What the four-image sampler reads (:mod:`sampling.kwise`): {model id: four-image votes it was in}, and per
    counted vote (model ids of slots 1-4, best slot, worst slot or None)."""
    models, joins = slot_models_sql()
    rows = db.execute(f"SELECT {models}, v.best, v.worst FROM kwise_votes v JOIN kwise_battles b ON b.id = v.battle_id "
                      f"{joins} WHERE v.excluded = 0 ORDER BY v.id").fetchall()
    appearances: dict[int, int] = {}
    votes = []
    for row in rows:
        for model in row[:K]:
            appearances[model] = appearances.get(model, 0) + 1
        votes.append((tuple(row[:K]), row[K], row[K + 1]))
    return appearances, votes


def kwise_counts_read(db: Database) -> tuple[int, dict[int, int], list[tuple[tuple[int, ...], int, int | None]]]:
    """(the last row of ``kwise_vote_changes`` included, then :func:`kwise_model_counts`), in one read transaction:
    what :class:`sampling.kwise_stats.KwiseStats` reads once, then follows with :func:`kwise_changes_since`."""
    with read_snapshot(db):
        seq = int(db.execute("SELECT coalesce(max(seq), 0) FROM kwise_vote_changes").fetchone()[0])
        return (seq, *kwise_model_counts(db))


def kwise_changes_since(db: Database, seq: int) -> list[tuple[int, int, tuple[int, ...], int, int | None]]:
    """The rows of ``kwise_vote_changes`` after ``seq``, oldest first: (seq, sign +1/−1, model ids of slots 1-4, best
    slot, worst slot or None). A range read of the primary key, each row's battle and images by theirs.

    Raises :class:`datamodel.change_logs.ChangesMissed` where the log cannot give every change after ``seq``: rows of
    it were pruned (the pruning's mark, read with the rows: :func:`datamodel.change_logs.missed_changes`), or a row's
    battle or one of its images is gone (a vote deleted with its battle: its −1 cannot be counted by model); the
    reader reads everything again."""
    models, joins = slot_models_sql(join="LEFT JOIN")
    rows = db.execute(f"SELECT c.seq, c.sign, {models}, c.best, c.worst, {pruned_mark_sql('kwise_vote_changes')} "
                      f"FROM kwise_vote_changes c LEFT JOIN kwise_battles b ON b.id = c.battle_id {joins} "
                      "WHERE c.seq > ? ORDER BY c.seq", [seq]).fetchall()
    if rows:
        missed_changes("kwise_vote_changes", seq, rows[0][-1])
    gone = next((row[0] for row in rows if None in row[2:2 + K]), None)
    if gone is not None:
        raise ChangesMissed("kwise_vote_changes", seq, f"include row {gone}, whose battle or images are gone")
    return [(row[0], row[1], tuple(row[2:2 + K]), row[2 + K], row[3 + K]) for row in rows]


def four_image_prompts(db: Database, suites, annotator_id: int) -> list[tuple[int, int]]:
    """(prompt id, four-image votes the annotator cast on it) of the prompts of ``suites`` with images from at least
    four models that battles may show (``battle_images``). The annotator's votes are read once, grouped by prompt
    (not counted again for each prompt: an annotator with thousands of votes cost a draw 175 ms that way)."""
    suites = list(suites)
    if not suites:
        return []
    marks = ",".join("?" * len(suites))
    prompts = db.execute(
        f"""SELECT i.prompt_id FROM battle_images i JOIN prompts p ON p.id = i.prompt_id WHERE p.suite IN ({marks})
            GROUP BY i.prompt_id HAVING COUNT(DISTINCT i.model_id) >= {K} ORDER BY i.prompt_id""", suites).fetchall()
    seen = dict(db.execute("SELECT b.prompt_id, COUNT(*) FROM kwise_votes v JOIN kwise_battles b ON b.id = v.battle_id "
                           "WHERE v.annotator_id = ? GROUP BY b.prompt_id", [annotator_id]).fetchall())
    return [(prompt_id, seen.get(prompt_id, 0)) for (prompt_id,) in prompts]


def write_kwise_jsonl(db: Database, path, chunk_rows: int = 50_000, media: MediaStore | None = None) -> int:
    """The four-image votes as JSON Lines, one object per vote with the keys of :data:`KWISE_COLUMNS` (excluded ones
    too, marked ``excluded``); the export format ``four-image`` (docs/running-a-study.md#exports-other-tools-read).
    Returns the votes written."""
    rows = kwise_vote_rows(db, include_excluded=True)
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, len(rows), chunk_rows):
            handle.write("".join(json.dumps({**row, "excluded": bool(row["excluded"])}, ensure_ascii=False) + "\n"
                                 for row in rows[start:start + chunk_rows]))
    return len(rows)
