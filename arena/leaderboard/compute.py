"""The leaderboard: votes and metrics from the database through the pure functions of :mod:`ratings`.

Human and judge votes are fitted separately (Bradley–Terry, 400 per factor 10 of odds, mean 1000, bootstrap 95%
CIs) and shown side by side with the automatic metrics (the ``metrics`` table: CLIP similarities, FID/IS, reward,
commonsense accuracy, SemVarEffect, SANEval, ...). Every model in the database gets a row, with blanks where it has
no votes or scores yet. Beside the table: rank correlations of the judge and of each metric with the human ELO,
human–judge agreement on shared battles, position bias, inter-annotator agreement and the strategies that drew the
battles.

The judge column is one judge voter (a ``voter`` name such as ``gpt-judge:gpt-4o-mini``), never several pooled:
``LeaderboardOptions.judge``, by default the judge voter with the most votes in the slice (ties: the first name).
Its votes give the judge ELO, the judge's rank correlation and the human–judge agreement; the summary names it.

Agreement statistics (formulas in :mod:`ratings.agreement`): human–judge raw agreement p_o and Cohen's κ on
every (human vote, judge vote) pair of the same battle; inter-annotator mean pairwise agreement P̄ and Fleiss' κ
over battles seen by at least two annotators, Cohen's κ per pair of annotators who share at least
``pair_min_shared`` battles (the ``max_pairs`` sharing the most), and the mean Spearman ρ between each annotator's
own ratings and those fitted on everyone else's votes.

The ratings come from a rating protocol (:mod:`ratings.protocols`; ``LeaderboardOptions.protocol``, default
``arena``, this arena's own fit; the published ones reproduce FastChat's and the taxonomy paper's boards). The votes
are the arena's own and the imported ones (:mod:`datamodel.imported_votes`), or one source's
(``LeaderboardOptions.source``: ``arena`` or an import source), optionally only those cast without the model names
shown (``anonymous_only``, as FastChat's published boards). Inter-annotator agreement counts the arena's own
annotators only (an imported human vote has no annotator).

Everything is computed from the slice's votes as integer arrays (:mod:`datamodel.vote_arrays`), with work and memory
linear in the votes: a million votes take a few seconds and a few hundred MB, whatever the number of annotators.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

import ratings
from arena.leaderboard.fits import board_audit, check_mode, ppi_table
from arena.leaderboard.labels import format_ci, metric_base, rank_range_text
from arena.study_plan import in_play, main_strategy, plan_line, warming_up
from core.protocols import get_protocol
from core.settings import Settings
from datamodel.annotators import annotator_names
from datamodel.catalog import models_with_images
from datamodel.database import Database
from datamodel.imported_votes import import_sources
from datamodel.kwise import kwise_vote_rows
from datamodel.metrics import metric_directions, model_metric_table
from datamodel.models import sorted_model_names
from datamodel.snapshots import data_version
from datamodel.vote_arrays import ARENA_SOURCE, SLICE_FILTERS, VoteArrays, VoteArraysCache, read_vote_arrays
from datamodel.votes import judge_voter_names
from ratings.agreement import agreement_summary, consensus_spearman, inter_annotator_from_codes, paired_confusion
from ratings.bias import position_bias_from_counts
from ratings.kwise import KwiseVotes
from ratings.leaderboard import prior_ridge
from ratings.protocols import DEFAULT_PROTOCOL, RatingProtocol
from ratings.ranks import check_order
from ratings.votes import OUTCOMES
from sampling.strategies import STRATEGIES
from suites.registry import suite_title

PROVISIONAL_BATTLES = 200  # a model added to a running arena is provisional until it has this many (sampling.warmup)
# a worker's first board of a slice with at least this many of the arena's own human votes is shown before the
# inter-annotator statistics (compute_leaderboard's ``staged``): at a million votes they are 0.9 s of its 2 s
STAGED_FROM = 100_000


@dataclass(frozen=True)
class LeaderboardOptions:
    suite: str | None = None
    subset: str | None = None
    variant: str | None = None
    category: str | None = None
    voter: str | None = None
    judge: str | None = None  # the judge voter of the judge column; None: the judge voter with the most votes
    rounds: int = 1000
    seed: int = 0
    tie_policy: str = "drop"
    min_votes: int = 100  # votes in the fit to be ranked (ratings.ranks)
    provisional_votes: int = 300  # ... and to be ranked without the provisional mark
    order: str = "rating"  # the ranked models by rating, or by the lower bound ("lower")
    intervals: str = "bootstrap"  # the arena protocol's intervals: bootstrap or sandwich
    robustness_top: int = 3  # the robustness audit of this many top places (0: none)
    mode: str = "human"  # "human": human votes; "ppi": human and judge votes (arena.leaderboard.fits)
    prior_sd: float = 0.0  # Elo spread of the weak normal prior on each rating (ratings.leaderboard.prior_ridge)
    include_excluded: bool = False
    pair_min_shared: int = 5  # Cohen's κ per pair of annotators who share at least this many battles
    max_pairs: int = 50  # ... and only for the pairs sharing the most
    protocol: str = DEFAULT_PROTOCOL  # the rating protocol (ratings.protocols)
    anchor: str = ""  # "": the protocol's own anchor; "none": no anchor; "MODEL=RATING": pin MODEL at RATING
    source: str | None = None  # None: every vote; "arena": the arena's own; else one import source
    anonymous_only: bool = False  # only votes cast without the model names shown
    until: float | None = None  # only votes cast by then (unix time): the board as of a date, from the votes


def parse_anchor(text: str) -> tuple[str, float] | None:
    """``MODEL=RATING`` as (model, rating); "none" as None (the error says the form)."""
    if text.strip().lower() == "none":
        return None
    model, sep, value = text.rpartition("=")
    try:
        rating = float(value)
    except ValueError:
        rating = float("nan")
    if not sep or not model.strip() or rating != rating:
        raise ValueError(f"Anchor {text!r}: write MODEL=RATING (e.g. mixtral-8x7b-instruct-v0.1=1114) or none.")
    return model.strip(), rating


def rating_protocol(options: LeaderboardOptions) -> RatingProtocol:
    """The protocol of ``options``: ``arena`` with the options' tie policy, rounds, seed and prior, and
    ``kwise-rank-breaking`` with its rounds, seed and prior; a published one with its source's settings (and the
    options' anchor, if one is given)."""
    settings: dict = {}
    if options.protocol == DEFAULT_PROTOCOL:
        settings = dict(tie_policy=options.tie_policy, rounds=options.rounds, seed=options.seed,
                        ridge=prior_ridge(options.prior_sd), intervals=options.intervals)
    elif getattr(get_protocol(options.protocol), "reads_four_image", False):  # this arena's fit too: its prior
        settings = dict(rounds=options.rounds, seed=options.seed, ridge=prior_ridge(options.prior_sd))
    if options.anchor:
        if "anchor" not in {f for f in get_protocol(options.protocol).settings()}:
            raise ValueError(f"The {options.protocol} protocol has no anchor: leave out --anchor.")
        settings["anchor"] = parse_anchor(options.anchor)
        if "anchor_required" in get_protocol(options.protocol).settings():
            settings["anchor_required"] = settings["anchor"] is not None
    return get_protocol(options.protocol, **settings)


def leaderboard_options(settings: Settings, **filters) -> LeaderboardOptions:
    """Leaderboard options with the fit and agreement settings; ``filters`` (None: the setting) set the slice, the
    judge, the tie policy and the bootstrap rounds."""
    defaults = dict(rounds=settings.bootstrap_rounds, seed=settings.seed, tie_policy=settings.tie_policy,
                    min_votes=settings.min_votes, provisional_votes=settings.provisional_votes,
                    order=settings.leaderboard_order, intervals=settings.intervals,
                    robustness_top=settings.robustness_top, prior_sd=settings.rating_prior_sd,
                    pair_min_shared=settings.agreement_min_shared, max_pairs=settings.agreement_max_pairs)
    return LeaderboardOptions(**{**defaults, **{k: v for k, v in filters.items() if v is not None}})


@dataclass(frozen=True)
class Leaderboard:
    table: pd.DataFrame  # one row per model: human and judge columns side by side, then metric columns
    fits: dict[str, pd.DataFrame]  # {"human": ..., "judge": ...} as returned by ratings.fit_leaderboard
    models: tuple[str, ...]  # every model with a vote in the slice, by name: the axes of ``counts``
    counts: np.ndarray  # counts[i, j, outcome] of every vote in the slice, human and judge (ratings.votes)
    outcomes: pd.DataFrame  # votes per voter kind, subset and outcome (ratings.bias.outcome_counts)
    votes: dict[str, int]  # votes in the slice per voter kind
    correlations: pd.DataFrame  # rank correlation with the human ELO: the judge ELO and every metric
    agreement: dict  # ratings.human_judge_agreement on battles both voted on
    inter_annotator: dict | None  # ratings.inter_annotator_agreement; None: still being computed (STAGED_FROM)
    position_bias: pd.DataFrame  # ratings.position_bias per voter kind and subset
    strategies: dict[str, int] = field(default_factory=dict)  # votes per sampling strategy
    judge: str | None = None  # the judge voter of the judge column (None: no judge vote in the slice)
    judge_chosen: bool = False  # True: named by LeaderboardOptions.judge; False: the judge with the most votes
    judges: dict[str, int] = field(default_factory=dict)  # votes per judge voter in the slice, most first
    protocol: str = DEFAULT_PROTOCOL  # the rating protocol of the fits
    sources: dict[str, int] = field(default_factory=dict)  # votes per source (arena, then each import source)
    metric_slice: str = "every prompt"  # which prompts the metric columns cover (they follow suite, subset, variant)
    directions: dict[str, str] = field(default_factory=dict)  # metric column: higher | lower | none, where recorded
    flagged: dict[str, int] = field(default_factory=dict)  # imported votes flagged, per reason (self_battle, ...)
    mode: str = "human"  # the human column from human votes, or from human and judge votes (ppi)
    ppi: dict = field(default_factory=dict)  # mode ppi: lambda and the votes used (arena.leaderboard.fits.ppi_table)
    audit: dict | None = None  # the robustness audit of the human board's top places (ratings.robustness)
    plan: str = ""  # the study planner's line for a live board (arena.study_plan.plan_line); "" for a past day's
    warming: dict[str, int] = field(default_factory=dict)  # models still warming up: their battles so far


def _rating_columns(models: list[str], fits: dict[str, pd.DataFrame]) -> pd.DataFrame:
    table = pd.DataFrame({"model": models})
    for kind, fit in fits.items():
        label = kind.capitalize()
        part = fit.set_index("model")
        table[f"{label} rank"] = table["model"].map(part["rank"])
        table[f"{label} rank range"] = table["model"].map(
            {model: rank_range_text(best, worst) for model, best, worst in
             zip(part.index, part["rank"], part["rank_worst"])}).fillna("")
        table[f"{label} ELO"] = table["model"].map(part["rating"]).round(0)
        table[f"{label} 95% CI"] = table["model"].map(part.apply(format_ci, axis=1) if len(part) else {}).fillna("")
        table[f"{label} votes"] = table["model"].map(part["votes"]).fillna(0).astype(int)
        table[f"{label} both-bad rate"] = table["model"].map(part["both_bad_rate"]).round(3)
        table[f"{label} provisional"] = table["model"].map(part["provisional"]).fillna(True).astype(bool)
    return table


def _correlations(table: pd.DataFrame, metric_columns: list[str], lower_is_better: list[str]) -> pd.DataFrame:
    """Spearman and Kendall of the judge ELO and of each metric against the human ELO (sign-aligned)."""
    human = dict(zip(table["model"], table["Human ELO"]))
    rows = []
    for column in ["Judge ELO", *metric_columns]:
        sign = -1.0 if column in lower_is_better else 1.0
        scores = {m: sign * v for m, v in zip(table["model"], table[column]) if pd.notna(v)}
        result = ratings.rank_correlation(human, scores)
        rows.append({"against human ELO": column, **{k: result[k] for k in ("spearman", "spearman_p", "kendall",
                                                                           "kendall_p", "n")}})
    return pd.DataFrame(rows, columns=["against human ELO", "spearman", "spearman_p", "kendall", "kendall_p", "n"])


def judge_voters(db: Database) -> list[str]:
    """Every judge voter of the database, most votes first (ties by name)."""
    return judge_voter_names(db)


def judge_vote_counts(arrays: VoteArrays) -> dict[str, int]:
    """Votes per judge voter of the slice, most first (ties by name)."""
    counts = np.bincount(-1 - arrays.voter[~arrays.human], minlength=len(arrays.judges))
    return dict(sorted(((name, int(n)) for name, n in zip(arrays.judges, counts) if n),
                       key=lambda item: (-item[1], item[0])))


def pick_judge(db: Database, arrays: VoteArrays, judge: str | None) -> str | None:
    """``judge`` if it is a judge voter of the database, else the judge voter with the most votes of the slice."""
    if judge is None:
        return next(iter(judge_vote_counts(arrays)), None)
    known = judge_voters(db)
    if judge not in known:
        raise LookupError(f"No judge votes from {judge!r}. Judges with votes: {', '.join(known) or 'none'}; pass one "
                          "of them (--judge), or run python -m judges pairwise first.")
    return judge


def _outcome_counts(arrays: VoteArrays) -> pd.DataFrame:
    """Votes per (voter kind, subset) and outcome, groups sorted, empty groups left out."""
    kinds = ("human", "judge")
    group = (~arrays.human).astype(np.int64) * len(arrays.subsets) + arrays.subset
    flat = np.bincount(group * len(OUTCOMES) + arrays.outcome, minlength=len(kinds) * len(arrays.subsets) * 4)
    counts = flat.reshape(-1, len(OUTCOMES))
    rows = [(kinds[g // len(arrays.subsets)], arrays.subsets[g % len(arrays.subsets)], *map(int, counts[g]))
            for g in np.flatnonzero(counts.sum(axis=1))]
    return pd.DataFrame(rows, columns=["voter_kind", "subset", *OUTCOMES])


@dataclass
class BoardCache:
    """What a leaderboard worker keeps between snapshots of one database (:mod:`arena.leaderboard.service`), so a
    refresh after new votes costs what changed rather than the whole slice: the vote arrays of the last slices read
    (extended by the new votes: :class:`datamodel.vote_arrays.VoteArraysCache`), the annotators' own fits of the
    consensus Spearman by their win matrix (refitted only for annotators who voted since), and the inter-annotator
    statistics of a slice whose votes did not change at all (another protocol, interval method, tie policy, judge
    or order on the same votes), and a staged board (:func:`compute_leaderboard`), whose completion adds the
    inter-annotator statistics to it while the data is as it was. Every figure is the one a computation without it
    gives, to the last bit."""

    slices: int = 2  # slices kept (each holds its vote arrays: about 100 MB per million votes)
    votes: VoteArraysCache = field(default_factory=VoteArraysCache)
    own_fits: OrderedDict = field(default_factory=OrderedDict)  # per slice: consensus_spearman's own fits
    inter: OrderedDict = field(default_factory=OrderedDict)  # per slice and settings: (arrays, names, statistics)
    # per options: a staged board (data version, its slice's arrays, the board, its clean human votes), completed next
    staged: OrderedDict = field(default_factory=OrderedDict)

    def __post_init__(self):
        self.votes.slices = self.slices

    def keep(self, kept: OrderedDict, key, value) -> None:
        """``kept[key] = value``, the least recently kept dropped beyond :attr:`slices`."""
        kept.pop(key, None)
        kept[key] = value
        while len(kept) > self.slices:
            kept.popitem(last=False)


def _inter_annotator(db: Database, human: VoteArrays, options: LeaderboardOptions,
                     cache: BoardCache | None = None, read: tuple = (), arrays: VoteArrays | None = None) -> dict:
    """The inter-annotator statistics of ``human`` (the arena's own human votes of the slice); with a ``cache``,
    taken from it when the slice's vote arrays (``arrays``, read with the arguments ``read``) and the annotators'
    names are the ones they were computed from."""
    names = np.array([""] * (int(human.voter.max()) + 1 if len(human) else 0), dtype=object)
    for annotator_id, name in annotator_names(db).items():
        if annotator_id < len(names):
            names[annotator_id] = name
    key = (read, options.pair_min_shared, options.max_pairs)
    if cache is not None:
        known = cache.inter.get(key)
        if known is not None and known[0] is arrays and known[1] == tuple(names):
            return known[2]
    items, _ = pd.factorize(human.battle_keys())
    inter = inter_annotator_from_codes(items, human.voter, human.oriented_outcomes(), names,
                                       min_shared=options.pair_min_shared, max_pairs=options.max_pairs)
    own_fits = None if cache is None else cache.own_fits.get(read, {})
    consensus = consensus_spearman(human.voter, human.model_a, human.model_b, human.outcome, human.n_models,
                                   own_fits=own_fits)
    result = {**inter, "consensus_spearman": consensus["consensus_spearman"],
              "consensus_annotators": consensus["n_annotators"]}
    if cache is not None:
        cache.keep(cache.own_fits, read, own_fits)
        cache.keep(cache.inter, key, (arrays, tuple(names), result))
    return result


def _read_key(options: LeaderboardOptions) -> tuple:
    """The slice's read arguments as a key of :class:`BoardCache`'s dicts."""
    return tuple(sorted(slice_read(options).items()))


def _stage(human: VoteArrays, options: LeaderboardOptions, cache: BoardCache | None) -> bool:
    """Whether a staged computation leaves the inter-annotator statistics of ``human`` for later: many of the
    arena's own votes, and no annotator's fit of this slice kept yet (with them, a refit costs what changed)."""
    return int(human.own.sum()) >= STAGED_FROM and (cache is None or _read_key(options) not in cache.own_fits)


def slice_read(options: LeaderboardOptions) -> dict:
    """The arguments of :func:`datamodel.vote_arrays.read_vote_arrays` that read the slice ``options`` chooses:
    excluded votes and a date left out in SQL, no vote times (nothing after the read needs them)."""
    return dict(source=options.source, anonymous_only=options.anonymous_only, include_excluded=options.include_excluded,
                until=options.until, times=False, **{key: getattr(options, key) for key in SLICE_FILTERS})


def read_slice(db: Database, options: LeaderboardOptions, cache: BoardCache | None = None) -> VoteArrays:
    """The votes of the slice ``options`` chooses (excluded ones left out unless included, none after ``until``);
    ``cache``: a worker's, whose vote arrays are brought up to date rather than read afresh."""
    # the slice is taken in SQL: a category matches an item's own category or any of its categories (SemVarBench)
    if options.source not in (None, ARENA_SOURCE):
        known = import_sources(db)
        if options.source not in known:
            raise LookupError(f"No votes from source {options.source!r}. Sources: {', '.join([ARENA_SOURCE, *known])}; "
                              "import a log with python -m arena import-votes --source NAME.")
    read = slice_read(options)
    strategies = STRATEGIES.names()
    return read_vote_arrays(db, strategies, **read) if cache is None else cache.votes.read(db, strategies, **read)


def four_image_votes(db: Database, options: LeaderboardOptions) -> KwiseVotes:
    """The four-image votes of the slice ``options`` chooses (:mod:`datamodel.kwise`): the arena's own, by the
    prompts' suite, subset, variant and category, voter, time and exclusion; none for an imported source (a
    four-image vote is always the arena's own)."""
    imported = options.source not in (None, ARENA_SOURCE)
    rows = [] if imported else kwise_vote_rows(db, suite=options.suite, subset=options.subset, variant=options.variant,
                                               category=options.category, include_excluded=options.include_excluded)
    rows = [row for row in rows if (options.voter is None or row["annotator"] == options.voter)
            and (options.until is None or row["voted_at"] <= options.until)]
    return KwiseVotes.from_rows(rows)


def compute_leaderboard(db: Database, options: LeaderboardOptions = LeaderboardOptions(),
                        cache: BoardCache | None = None, staged: bool = False) -> Leaderboard:
    """The leaderboard of ``options``; ``cache``: what a worker keeps between snapshots (:class:`BoardCache`).

    ``staged`` (a worker's first board of these filters: :mod:`arena.leaderboard.service`): when the slice holds at
    least :data:`STAGED_FROM` of the arena's own human votes and ``cache`` does not hold their annotators' fits yet,
    the inter-annotator statistics are left out (``inter_annotator`` None, "being computed" on the page), so the
    board is shown without waiting for them; the worker computes them next. Every other figure is the one the full
    computation gives."""
    protocol = rating_protocol(options)
    check_order(options.order)
    check_mode(options.mode, protocol)
    version = None if cache is None else data_version(db)  # read before the votes, as the snapshot's
    arrays = read_slice(db, options, cache)
    slice_arrays = arrays
    held = None if cache is None else cache.staged.pop(options, None)
    if held is not None and held[0] == version and held[1] is arrays:  # a staged board of these very data: complete it
        board, human = held[2:]
        return replace(board, inter_annotator=_inter_annotator(db, human.take(human.own), options, cache,
                                                               _read_key(options), arrays))
    judge = pick_judge(db, arrays, options.judge)
    # flagged votes (a self-battle, ...) go to the protocol, which treats them as its source did; every other
    # statistic reads the clean votes only
    flagged = arrays.flag_counts()
    vote_totals = {"human": int(arrays.human.sum()), "judge": int((~arrays.human).sum())}
    sources = source_counts(arrays)
    strategies = np.bincount(arrays.strategy, minlength=len(arrays.strategies))
    shown: dict[str, Any] = dict(min_votes=options.min_votes, provisional_votes=options.provisional_votes,
                                 order=options.order)
    rated = {"human": arrays.take(arrays.human), "judge": arrays.take(arrays.judge(judge))}
    encoded = {kind: part.encoded() for kind, part in rated.items()}
    if getattr(protocol, "reads_four_image", False):  # the four-image votes beside the human pairwise ones
        encoded["human"] = replace(encoded["human"], kwise=four_image_votes(db, options))
    results = {kind: protocol.rate(votes, **shown) for kind, votes in encoded.items()}
    arrays = arrays.take(~arrays.flagged)
    human, judged = (part.take(~part.flagged) for part in rated.values())
    ppi: dict = {}
    audit = None
    if options.mode == "ppi":
        results["human"], ppi = ppi_table(protocol, human, judged, **shown)
    else:  # the audit refits the votes the protocol fitted
        audited = rated["human"] if protocol.counts_flagged else human
        audit = board_audit(protocol, audited, results["human"], options.robustness_top)
    fits = {kind: fit_table(result) for kind, result in results.items()}
    models = sorted_model_names(db)
    table = _rating_columns(models, fits)
    metrics = model_metric_table(db, suite=options.suite, subset=options.subset, variant=options.variant)
    metric_columns = [c for c in metrics.columns if c != "model"]
    recorded = metric_directions(db)
    directions = {c: recorded[metric_base(c)] for c in metric_columns if metric_base(c) in recorded}
    table = table.merge(metrics, on="model", how="left")
    # the human column's board order (ranked by the chosen order, then unranked, then unrated), then the judge's
    position = {model: index for index, model in enumerate(fits["human"]["model"])}
    table = table.assign(board_row=table["model"].map(position))
    table = table.sort_values(["board_row", "Judge ELO", "model"], ascending=[True, False, True], na_position="last")
    table = table.drop(columns="board_row").reset_index(drop=True)
    counts = arrays.counts()
    seen = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
    outcomes = _outcome_counts(arrays)
    plan, warming = _study_plan(db, arrays, human, options)
    board = Leaderboard(
        table=table,
        fits=fits,
        models=tuple(m for m, keep in zip(arrays.models, seen) if keep),
        counts=counts[np.ix_(seen, seen)],
        outcomes=outcomes,
        votes=vote_totals,
        correlations=_correlations(table, metric_columns, list(metrics.attrs.get("lower_is_better", []))),
        agreement=agreement_summary(paired_confusion(human.battle_keys(), human.oriented_outcomes(),
                                                     judged.battle_keys(), judged.oriented_outcomes())),
        inter_annotator=None if staged and _stage(human, options, cache) else
        _inter_annotator(db, human.take(human.own), options, cache, _read_key(options), slice_arrays),
        position_bias=position_bias_from_counts(outcomes),
        strategies=dict(sorted(((name, int(n)) for name, n in zip(arrays.strategies, strategies) if n),
                               key=lambda item: -item[1])),
        judge=judge,
        judge_chosen=options.judge is not None,
        judges=judge_vote_counts(arrays),
        protocol=protocol.name,
        sources=sources,
        metric_slice=", ".join(part for part in (f"suite {suite_title(options.suite)}" if options.suite else "",
                                                 metrics.attrs.get("slice", "")) if part and part != "every prompt")
        or "every prompt",
        directions=directions,
        flagged=flagged,
        mode=options.mode,
        ppi=ppi,
        audit=audit,
        plan=plan,
        warming=warming,
    )
    if cache is not None and board.inter_annotator is None:
        cache.keep(cache.staged, options, (version, slice_arrays, board, human))
    return board


def _study_plan(db: Database, arrays: VoteArrays, human: VoteArrays,
                options: LeaderboardOptions) -> tuple[str, dict[str, int]]:
    """The planner's line (a live board only) and the models warming up, from the slice's human votes."""
    models, counts = in_play(arrays.models, human.counts(), models_with_images(db, options.suite))
    drawn = np.bincount(human.strategy, minlength=len(human.strategies))
    strategy = main_strategy(dict(zip(human.strategies, drawn.tolist())))
    line = plan_line(models, counts, strategy, options) if options.until is None else ""
    return line, warming_up(models, counts, PROVISIONAL_BATTLES)


def fit_table(result: pd.DataFrame) -> pd.DataFrame:
    """A protocol's result table (:data:`ratings.protocols.RESULT_COLUMNS`) cut to the leaderboard's columns
    (:data:`ratings.leaderboard.LEADERBOARD_COLUMNS`, the same names), its ranks and ``printed`` text kept."""
    return result[[*ratings.LEADERBOARD_COLUMNS, "rank_worst", "fit_votes", "ranked", "printed"]]


def source_counts(arrays: VoteArrays) -> dict[str, int]:
    """Votes per source of the slice: the arena's own first, then each import source (only those with votes)."""
    counts = np.bincount(arrays.source, minlength=len(arrays.sources) + 1)
    return {name: int(n) for name, n in zip((ARENA_SOURCE, *arrays.sources), counts) if n}
