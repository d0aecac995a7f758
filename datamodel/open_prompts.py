"""Open prompts: a prompt an annotator typed, the images two models made of it live, and each generation's record.

An open prompt is stored like a suite's prompt, in the suite ``open`` (:data:`OPEN_SUITE`, titled "Open prompts"):
one ``prompts`` row per prompt sent (its ``item_key`` a random token, ``metadata`` saying it came from the open
prompts), the images as ``images`` rows of the models that made them, and the battle and vote as any other, so the
leaderboard (its suite filter), the exports, the judges and the metrics read them like the rest. The images are
withheld from the stored battles (``images.withheld = 'open prompt'``): a visitor's prompt is shown to that visitor
only; ``python -m arena withheld`` counts them. Since battles never draw them, they move the ``open_prompts`` counter
of ``data_versions``, not ``catalog``: the sampler's counts and the prompt pool take an open prompt without reading
everything again.

Every image asked for is a ``generations`` row (:func:`datamodel.schema._open_prompts`), made or not: the model, the
status (``ok``, ``failed``, ``timeout``, ``flagged``) and why, the model's own seconds, the seconds it waited in the
serving layer, the API price where known. Each model's median generation time over its images made is kept as the
model-level metric ``median_latency_s`` of the suite ``open`` (lower is better), so the leaderboard shows it as a
column beside the ratings.
"""

from __future__ import annotations

import json
import secrets
import statistics
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from datamodel.database import Database
from datamodel.media import StoredImage
from datamodel.metrics import MetricRow, record_directions, write_metrics

OPEN_SUITE = "open"
OPEN_SOURCE = "open prompts"
WITHHELD = "open prompt"  # images.withheld of an open prompt's images
LATENCY_METRIC = "median_latency_s"
COST_METRIC = "cost_per_image_usd"
SCORER = "open prompts"
STATUSES = ("ok", "failed", "timeout", "flagged")


class PromptRefused(ValueError):
    """An open prompt that cannot be sent as typed; the message says why and what to change."""


def normalise_prompt(text: object, max_chars: int) -> str:
    """``text`` as an open prompt: Unicode NFC, surrounding space removed, inner runs of white space kept as one
    space, control characters refused; any language and script. Raises :class:`PromptRefused` for an empty prompt,
    one longer than ``max_chars`` characters (code points, after normalisation) or one with control characters."""
    if not isinstance(text, str):
        raise PromptRefused("Type a prompt first.")
    text = " ".join(unicodedata.normalize("NFC", text).split())
    if not text:
        raise PromptRefused("Type a prompt first.")
    if len(text) > max_chars:
        raise PromptRefused(f"Your prompt has {len(text)} characters; the limit is {max_chars}. Shorten it.")
    if any(unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn") for ch in text):
        raise PromptRefused("Your prompt holds control or unassigned characters; type it as plain text.")
    return text


@dataclass(frozen=True)
class Generation:
    """One model's answer to an open prompt as the serving layer gave it: its image in the media folder when
    ``status`` is ``ok``, else why not (``reason``)."""

    model: str
    status: str
    stored: StoredImage | None = None
    seed: int | None = None
    seconds: float | None = None  # the model's own generation time
    wait_seconds: float | None = None  # queueing and transport in the serving layer
    cost_usd: float | None = None
    reason: str = ""
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"generation status must be one of {', '.join(STATUSES)}, got {self.status!r}.")
        if (self.status == "ok") != (self.stored is not None):
            raise ValueError("a generation has a stored image exactly when its status is ok.")


def add_open_prompt(db: Database, text: str, *, now: float | None = None) -> int:
    """Store ``text`` as a new prompt of the suite ``open`` and return its id (each prompt sent is its own row)."""
    metadata = json.dumps({"source": OPEN_SOURCE, "sent_at": time.time() if now is None else now}, sort_keys=True)
    with db.conn:
        return db.execute(
            "INSERT INTO prompts (suite, subset, variant, item_key, role, text, metadata) VALUES (?, '', '', ?, '', ?, ?) "
            "RETURNING id", [OPEN_SUITE, secrets.token_urlsafe(12), text, metadata]).fetchone()[0]


def record_generations(db: Database, prompt_id: int, generations: list[Generation], *,
                       model_ids: dict[str, int], annotator_id: int | None, serving: str, rendition: str | None,
                       now: float | None = None) -> list[int | None]:
    """Record each of ``generations`` of prompt ``prompt_id`` (one transaction): the images made (their files are in
    the media folder, their display renditions made for the key ``rendition``), withheld from the stored battles, and
    a ``generations`` row each; then the models' median latency (and price per image, where known). Returns the image
    id of each generation, None where none was made."""
    now = time.time() if now is None else now
    image_ids: list[int | None] = []
    with db.conn:
        for index, made in enumerate(generations):
            image_id = None
            if made.stored is not None:
                stored = made.stored
                image_id = db.execute(
                    "INSERT INTO images (prompt_id, model_id, idx, seed, media_hash, media_ext, width, height, params, "
                    "rendition, withheld) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    [prompt_id, model_ids[made.model], index, made.seed, stored.media_hash, stored.media_ext,
                     stored.width, stored.height, json.dumps(made.params, sort_keys=True), rendition, WITHHELD],
                ).fetchone()[0]
            db.execute(
                "INSERT INTO generations (prompt_id, model_id, image_id, annotator_id, status, reason, seconds, "
                "wait_seconds, cost_usd, serving, requested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [prompt_id, model_ids[made.model], image_id, annotator_id, made.status, made.reason[:1000],
                 made.seconds, made.wait_seconds, made.cost_usd, serving, now])
            image_ids.append(image_id)
    update_latency_metrics(db, sorted({model_ids[made.model] for made in generations if made.status == "ok"}))
    return image_ids


def update_latency_metrics(db: Database, model_ids: list[int]) -> None:
    """Write each model's median generation time over its images made (and its mean API price per image, where
    known) as model-level metrics of the suite ``open``."""
    rows = []
    for model_id in model_ids:
        made = db.execute("SELECT seconds, cost_usd FROM generations WHERE model_id = ? AND status = 'ok' "
                          "AND seconds IS NOT NULL", [model_id]).fetchall()
        if not made:
            continue
        seconds = [row[0] for row in made]
        rows.append(MetricRow(model_id=model_id, name=LATENCY_METRIC, value=statistics.median(seconds), scorer=SCORER,
                              suite=OPEN_SUITE, details={"generations": len(seconds)}))
        costs = [row[1] for row in made if row[1] is not None]
        if costs:
            rows.append(MetricRow(model_id=model_id, name=COST_METRIC, value=statistics.fmean(costs), scorer=SCORER,
                                  suite=OPEN_SUITE, details={"generations": len(costs)}))
    if rows:
        write_metrics(db, rows)
        record_directions(db, {LATENCY_METRIC: "lower", COST_METRIC: "lower"})


def generation_rows(db: Database, prompt_id: int | None = None) -> list[dict]:
    """The ``generations`` rows (of one prompt, or all), oldest first, with the model's name."""
    where, args = ("WHERE g.prompt_id = ?", [prompt_id]) if prompt_id is not None else ("", [])
    cursor = db.execute(
        "SELECT g.id, g.prompt_id, m.name AS model, g.image_id, g.annotator_id, g.status, g.reason, g.seconds, "
        f"g.wait_seconds, g.cost_usd, g.serving, g.requested_at FROM generations g JOIN models m ON m.id = g.model_id "
        f"{where} ORDER BY g.id", args)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def median_latencies(db: Database) -> dict[str, float]:
    """{model name: median seconds of its open-prompt images made}, as the leaderboard shows it."""
    return dict(db.execute(
        "SELECT m.name, x.value FROM metrics x JOIN models m ON m.id = x.model_id WHERE x.name = ? AND x.scorer = ? "
        "AND x.image_id IS NULL", [LATENCY_METRIC, SCORER]).fetchall())


def open_prompt_count(db: Database) -> int:
    """How many open prompts were sent."""
    return db.execute("SELECT COUNT(*) FROM prompts WHERE suite = ?", [OPEN_SUITE]).fetchone()[0]


def battle_prompt(db: Database, media_token: str) -> tuple[str, str] | None:
    """(prompt text, annotator name) of the battle served with ``media_token``, or None."""
    row = db.execute("SELECT p.text, a.name FROM battles b JOIN prompts p ON p.id = b.prompt_id JOIN annotators a "
                     "ON a.id = b.annotator_id WHERE b.media_token = ?", [media_token]).fetchone()
    return (row[0], row[1]) if row else None


def made_image_params(db: Database) -> list[tuple[str, float, dict]]:
    """(model, seconds, the image's recorded parameters) of every open-prompt image made."""
    rows = db.execute("SELECT m.name, g.seconds, i.params FROM generations g JOIN models m ON m.id = g.model_id "
                      "JOIN images i ON i.id = g.image_id WHERE g.status = 'ok'").fetchall()
    return [(model, seconds, json.loads(params)) for model, seconds, params in rows]
