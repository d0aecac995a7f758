"""A study-scale arena database: many models, prompts, annotators and votes, written with the app's own schema.

:func:`build_scale_database` fills a new database the way months of a public arena would: every prompt has an image
of every model, human battles are drawn uniformly (prompt, two distinct models, random sides), outcomes follow a
Bradley–Terry model with ties and both-bad votes, a share of battles is shown again to a second annotator (so the
inter-annotator panels have data), and judge voters re-judge human battles (so the human–judge panels have data).
Annotators are skewed as real ones are: a few vote thousands of times, most a few dozen. Rows go in with bulk
``executemany`` inserts in one transaction (the app writes one vote per transaction; the resulting tables are the
same), and the vote ids follow time, as in the app.

Everything is drawn from one seeded ``numpy`` generator, so a :class:`ScaleSpec` always gives the same database.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from datamodel.bulk import finish_bulk_load, insert_rows, start_bulk_load
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.renditions import Renditions, RenditionSpec
from datamodel.schema import OUTCOMES

TAXONOMY_SUBSETS = ("Easy", "Hypernymy", "Hyponymy", "Synset-Mixing")
VARIANTS = ("with_definition", "without_definition")
COMMONSENSE_CATEGORIES = ("Physical Laws", "Human Practices", "Biological Laws", "Daily Items", "Animal Behaviors")
SEMVAR_CATEGORIES = ("color", "counting", "spatial", "action", "comparison", "direction")
IMAGES_PER_MODEL = 8  # distinct media files per model; image rows share them (the bytes do not matter here)
DAYS = 90  # the votes are spread over this many days before the build
FIXTURE_VERSION = 3  # raise it when the schema or what is built changes: cached databases are then built again


@dataclass(frozen=True)
class ScaleSpec:
    """What the database holds. ``judge_share`` of the votes come from ``judges`` judge voters re-judging human
    battles; ``replicated_share`` of the human votes are on a battle shown again to a second annotator."""

    votes: int = 1_000_000
    annotators: int = 10_000
    models: int = 12
    prompts: int = 2_000
    judges: int = 2
    judge_share: float = 0.10
    replicated_share: float = 0.05
    skipped_share: float = 0.03  # battles served but never voted on, as a share of the votes
    tie_share: float = 0.20
    both_bad_share: float = 0.05
    excluded_share: float = 0.02
    seed: int = 0

    def key(self) -> str:
        """A short name for this spec and the schema (the cache folder of :func:`cached_scale_database`)."""
        text = json.dumps({**asdict(self), "fixture": FIXTURE_VERSION}, sort_keys=True)
        return f"v{self.votes}-m{self.models}-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def model_names(n: int) -> list[str]:
    return [f"scale-model-{i:02d}" for i in range(1, n + 1)]


def judge_names(n: int) -> list[str]:
    return [f"gpt-judge:scale-judge-{i}" for i in range(1, n + 1)]


def true_ratings(n: int) -> np.ndarray:
    """Elo ratings the outcomes are drawn from: evenly spread over 600 points, best model first."""
    return np.linspace(1300.0, 700.0, n)


def _tokens(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct 24-character URL-safe tokens (as ``secrets.token_urlsafe(18)`` makes), from ``rng``."""
    raw = rng.bytes(18 * n)
    return [base64.urlsafe_b64encode(raw[k:k + 18]).decode() for k in range(0, 18 * n, 18)]


def _outcomes(rng, rating_a, rating_b, spec: ScaleSpec, first_bias: float | np.ndarray = 0.0) -> np.ndarray:
    """Outcome codes (indices into OUTCOMES): ties and both-bad at their shares, else Bradley–Terry on the
    ratings, with ``first_bias`` Elo points added to the first position (a judge's position bias)."""
    p_a = 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a - first_bias) / 400.0))
    u = rng.random(len(p_a))
    decisive = np.where(rng.random(len(p_a)) < p_a, 0, 1)
    return np.where(u < spec.tie_share, 2, np.where(u < spec.tie_share + spec.both_bad_share, 3, decisive))


def _media(media: MediaStore, n_models: int) -> list[list[str]]:
    """``IMAGES_PER_MODEL`` small PNGs per model in the media folder, with their display renditions (default
    settings; battles draw only rendered images): [hash] per model."""
    rng = np.random.default_rng(1234)
    files = []
    for m in range(n_models):
        own = []
        for k in range(IMAGES_PER_MODEL):
            pixels = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
            pixels[:, :, m % 3] = (37 * m + 11 * k) % 256
            buffer = io.BytesIO()
            Image.fromarray(pixels).save(buffer, format="PNG")
            stored = media.put(buffer.getvalue(), f"scale image {m}/{k}")
            Renditions(media, RenditionSpec()).warm(stored.media_hash, stored.media_ext)
            own.append(stored.media_hash)
        files.append(own)
    return files


def _prompts(spec: ScaleSpec, rng: np.random.Generator) -> list[tuple]:
    rows = []
    for p in range(spec.prompts):
        kind = p % 10
        if kind < 6:
            subset, variant = TAXONOMY_SUBSETS[p % 4], VARIANTS[(p // 4) % 2]
            metadata: dict[str, Any] = {"lemma": f"concept {p}", "definition": f"the definition of concept {p}"}
            text = (f"An image of concept {p} (the definition of concept {p})" if variant == "with_definition"
                    else f"An image of concept {p}")
            rows.append(("taxonomy", subset, variant, f"concept.n.{p:05d}", "", text, metadata))
        elif kind < 8:
            category = COMMONSENSE_CATEGORIES[p % len(COMMONSENSE_CATEGORIES)]
            role = "p1" if kind == 6 else "p2"
            rows.append(("commonsense", category, "", f"pair-{p // 10}", role, f"A commonsense scene {p} ({role})",
                         {"category": category, "description": f"what scene {p} should show"}))
        else:
            picked = rng.choice(len(SEMVAR_CATEGORIES), size=1 + int(rng.random() < 0.3), replace=False)
            categories = [SEMVAR_CATEGORIES[c] for c in sorted(picked)]
            role = "anchor" if kind == 8 else "permutation"
            metadata = {"categories": categories, **({"category": categories[0]} if len(categories) == 1 else {})}
            rows.append(("semvarbench", "test", "", f"item-{p // 10}", role, f"A semantic variation {p} ({role})",
                         metadata))
    return rows


def build_scale_database(spec: ScaleSpec, db_path: str | Path, media_dir: str | Path, *, progress=print) -> dict:
    """Write the database of ``spec`` at ``db_path`` (which must not exist) and its images under ``media_dir``.

    Returns counts of what was written and the seconds it took.
    """
    db_path = Path(db_path)
    if db_path.exists():
        raise FileExistsError(f"{db_path} exists; the scale fixture writes a new database. Remove it first.")
    started = time.perf_counter()
    rng = np.random.default_rng(spec.seed)
    db = connect(db_path, synchronous="OFF")
    start_bulk_load(db)
    media = MediaStore(media_dir)
    files = _media(media, spec.models)
    n_models, n_prompts = spec.models, spec.prompts
    models = model_names(n_models)
    ratings = true_ratings(n_models)

    # --- who votes how often: a heavy-tailed share per annotator, as in public arenas
    weights = rng.lognormal(0.0, 1.2, spec.annotators)
    weights /= weights.sum()

    # --- the votes: human base battles, their replicas, judge re-judgings
    n_judge = int(round(spec.votes * spec.judge_share)) if spec.judges else 0
    n_human = spec.votes - n_judge
    n_replica = int(round(n_human * spec.replicated_share))
    n_base = n_human - n_replica
    if n_base <= 0:
        raise ValueError("The spec leaves no human battle to vote on: lower judge_share or replicated_share.")
    base_prompt = rng.integers(0, n_prompts, n_base)
    first = rng.integers(0, n_models, n_base)
    second = (first + rng.integers(1, n_models, n_base)) % n_models  # distinct, uniform over the others
    base_annotator = rng.choice(spec.annotators, size=n_base, p=weights)

    source = rng.integers(0, n_base, n_replica)  # the base battle each replica repeats
    replica_annotator = rng.choice(spec.annotators, size=n_replica, p=weights)
    clash = replica_annotator == base_annotator[source]
    replica_annotator[clash] = (replica_annotator[clash] + 1) % spec.annotators

    judged = rng.integers(0, n_base, n_judge)  # the base battle each judge vote re-judges
    judge_index = rng.integers(0, max(spec.judges, 1), n_judge)
    judge_swapped = rng.random(n_judge) < 0.5

    kind = np.concatenate([np.zeros(n_base, np.int8), np.zeros(n_replica, np.int8), np.ones(n_judge, np.int8)])
    prompt = np.concatenate([base_prompt, base_prompt[source], base_prompt[judged]])
    left = np.concatenate([first, first[source], np.where(judge_swapped, second[judged], first[judged])])
    right = np.concatenate([second, second[source], np.where(judge_swapped, first[judged], second[judged])])
    voter = np.concatenate([base_annotator, replica_annotator, judge_index])
    bias = np.where(kind == 1, 60.0, 0.0)  # judges favour the first position
    outcome = _outcomes(rng, ratings[left], ratings[right], spec, bias)

    # a vote's place in time: replicas and judge votes come after the battle they repeat
    order = np.argsort(np.concatenate([np.arange(n_base), source + rng.random(n_replica) * n_base * 0.2,
                                       judged + rng.random(n_judge) * n_base * 0.2]), kind="stable")
    kind, prompt, left, right, voter, outcome = (a[order] for a in (kind, prompt, left, right, voter, outcome))
    total = len(order)
    end = time.time() - 60.0
    served = end - DAYS * 86400 + np.sort(rng.random(total)) * DAYS * 86400
    seconds = np.where(kind == 1, rng.uniform(1.0, 6.0, total), rng.lognormal(2.1, 0.6, total))
    excluded = (kind == 0) & (rng.random(total) < spec.excluded_share)

    # --- write
    with db.conn:
        insert_rows(db, "models", ("id", "name", "source", "description"),
                    [(m + 1, name, "imported", f"scale fixture model, true rating {ratings[m]:.0f}")
                     for m, name in enumerate(models)])
        insert_rows(db, "prompts", ("id", "suite", "subset", "variant", "item_key", "role", "text", "metadata"),
                    [(p + 1, *row[:6], json.dumps(row[6])) for p, row in enumerate(_prompts(spec, rng))])
        rendition = RenditionSpec().key
        insert_rows(db, "display", ("id", "rendition", "set_at"), [(1, rendition, 0.0)])  # a new database: none yet
        insert_rows(db, "images", ("id", "prompt_id", "model_id", "idx", "seed", "media_hash", "media_ext", "width",
                                   "height", "rendition"),
                    ((p * n_models + m + 1, p + 1, m + 1, 0, p, files[m][p % IMAGES_PER_MODEL], "png", 64, 64,
                      rendition) for p in range(n_prompts) for m in range(n_models)))
        token_hash = "scrypt$" + "00" * 16 + "$" + "00" * 64  # no token matches it: these accounts cannot sign in
        insert_rows(db, "annotators", ("id", "name", "token_hash", "source"),
                    ((a + 1, f"annotator-{a:05d}", token_hash, "signup") for a in range(spec.annotators)))
        progress(f"scale fixture: {n_models} models, {n_prompts} prompts, {spec.annotators} annotators written")

        n_skipped = int(round(total * spec.skipped_share))
        ids, tokens = _tokens(rng, total + n_skipped), _tokens(rng, total + n_skipped)
        sessions = _tokens(rng, spec.annotators + spec.judges)
        judges = judge_names(spec.judges)
        image_id = lambda p, m: int(p) * n_models + int(m) + 1  # noqa: E731
        served_list, seconds_list = served.tolist(), seconds.tolist()

        def battle_rows():
            for k in range(total):
                human = kind[k] == 0
                v = int(voter[k])
                yield (ids[k], int(prompt[k]) + 1, image_id(prompt[k], left[k]), image_id(prompt[k], right[k]),
                       "human" if human else "judge", v + 1 if human else None, None if human else judges[v],
                       sessions[v if human else spec.annotators + v], tokens[k], "uniform", served_list[k])
            skipped_prompt = rng.integers(0, n_prompts, n_skipped)
            skipped_first = rng.integers(0, n_models, n_skipped)
            skipped_second = (skipped_first + rng.integers(1, n_models, n_skipped)) % n_models
            skipped_annotator = rng.integers(0, spec.annotators, n_skipped)
            skipped_time = end - rng.random(n_skipped) * DAYS * 86400
            for s in range(n_skipped):
                a = int(skipped_annotator[s])
                yield (ids[total + s], int(skipped_prompt[s]) + 1, image_id(skipped_prompt[s], skipped_first[s]),
                       image_id(skipped_prompt[s], skipped_second[s]), "human", a + 1, None, sessions[a],
                       tokens[total + s], "uniform", float(skipped_time[s]))

        insert_rows(db, "battles", ("id", "prompt_id", "left_image_id", "right_image_id", "served_to_kind",
                                    "annotator_id", "judge", "session_id", "media_token", "strategy", "served_at"),
                    battle_rows())
        progress(f"scale fixture: {total + n_skipped} battles written ({n_skipped} never voted on)")

        def vote_rows():
            for k in range(total):
                human = kind[k] == 0
                v = int(voter[k])
                at = served_list[k] + seconds_list[k]
                p, a, b = int(prompt[k]), int(left[k]), int(right[k])
                yield (k + 1, ids[k], f"annotator-{v:05d}" if human else judges[v], "human" if human else "judge",
                       v + 1 if human else None, OUTCOMES[outcome[k]], seconds_list[k], at,
                       time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at * 1000) % 1000:03d}Z",
                       int(excluded[k]), "more than 30 votes in an hour" if excluded[k] else "",
                       p + 1, image_id(p, a), image_id(p, b), a + 1, b + 1, "uniform", served_list[k])

        insert_rows(db, "votes", ("id", "battle_id", "voter", "voter_kind", "annotator_id", "outcome",
                                  "seconds_to_vote", "voted_at", "created_at", "excluded", "excluded_reason",
                                  "prompt_id", "left_image_id", "right_image_id", "left_model_id", "right_model_id",
                                  "strategy", "served_at"), vote_rows())
        progress(f"scale fixture: {total} votes written ({int(kind.sum())} by judges, {n_replica} on replicated "
                 f"battles, {int(excluded.sum())} excluded)")

        metric_rows = []
        for m in range(n_models):
            quality = (ratings[m] - 1000.0) / 600.0
            for suite in ("taxonomy", "commonsense"):
                metric_rows += [(m + 1, None, suite, "", "clip_score",
                                 0.25 + 0.05 * quality + 0.01 * rng.standard_normal(), "scale-fixture"),
                                (m + 1, None, suite, "", "fid", 40.0 - 10.0 * quality + rng.standard_normal(),
                                 "scale-fixture")]
        insert_rows(db, "metrics", ("model_id", "image_id", "suite", "subset", "name", "value", "scorer"), metric_rows)
    finish_bulk_load(db)  # back to WAL, with fresh planner statistics
    db.close()
    seconds_taken = time.perf_counter() - started
    return {"votes": total, "judge_votes": int(kind.sum()), "replicated_votes": n_replica,
            "battles": total + n_skipped, "annotators": spec.annotators, "models": n_models, "prompts": n_prompts,
            "images": n_prompts * n_models, "seconds": seconds_taken,
            "megabytes": db_path.stat().st_size / 2**20}


def cached_scale_database(spec: ScaleSpec, cache_dir: str | Path, *, progress=print) -> Path:
    """A folder holding the database of ``spec`` (``arena.db``) and its media (``media/``), built once.

    A build that did not finish leaves no ``done`` marker and is started again.
    """
    folder = Path(cache_dir) / "scale" / spec.key()
    if not (folder / "done").exists():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        built = build_scale_database(spec, folder / "arena.db", folder / "media", progress=progress)
        progress(f"scale fixture built in {built['seconds']:.0f} s: {built['megabytes']:.0f} MB at {folder}")
        (folder / "done").write_text(json.dumps(built))
    return folder

