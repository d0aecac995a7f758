"""What every rating protocol shares: the battle log it reads, the fit it returns and the result table it makes.

The battle log is the project's one vote format in integer form, :class:`ratings.votes.EncodedVotes`: ``models``
(names), ``model_a`` / ``model_b`` (indices of the models shown left and right) and ``outcome`` (0 = A, 1 = B,
2 = tie, 3 = both bad), one entry per vote **in the order the votes were cast**. Order matters to some protocols:
online Elo updates in that order, and the published bootstraps draw row numbers of the log (pandas'
``sample(frac=1, replace=True)`` picks rows by position), so a log in another order gives other intervals.

A protocol is a frozen dataclass whose fields are its settings (bootstrap rounds, seed, anchor, ...), with defaults
that reproduce its source, and whose class attributes say in words how it treats ties, its penalty, scale, anchor,
bootstrap and rounding (:meth:`RatingProtocol.choices`: the page and the docs show them). :meth:`RatingProtocol.fit`
is the math; :meth:`RatingProtocol.rate` turns it into the result table of :data:`RESULT_COLUMNS`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from ratings.ranks import board_order, rank_ranges, vote_status
from ratings.votes import EncodedVotes, count_tensor, encode_votes, model_totals

RESULT_COLUMNS: tuple[str, ...] = (
    "model", "rating", "lower", "upper", "rank", "rank_worst", "votes", "wins", "losses", "ties", "both_bad",
    "both_bad_rate", "fit_votes", "ranked", "provisional", "printed", "protocol",
)
CHOICES = ("ties", "penalty", "scale", "anchor", "bootstrap", "rounding")


@dataclass(frozen=True)
class ProtocolFit:
    """A protocol's numbers before rounding, one entry per model of the log (NaN: the model is not rated).

    ``rating`` is the fit on the whole log; ``lower`` / ``upper`` the protocol's 95% interval; ``fit_votes`` the votes
    of each model that entered the fit (a tie dropped by the protocol does not count). An unpenalised fit also says
    where it has no finite estimate (:mod:`ratings.divergence`; None where the protocol's fit always has one):
    ``runaway`` per model, its rating on the whole log runs off; ``lower_runaway`` / ``upper_runaway`` per model, the
    bound is read from a bootstrap round without a finite estimate.
    """

    rating: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    fit_votes: np.ndarray
    runaway: np.ndarray | None = None
    lower_runaway: np.ndarray | None = None
    upper_runaway: np.ndarray | None = None


def first_appearance(model_a: np.ndarray, model_b: np.ndarray) -> np.ndarray:
    """Model indices in the order ``pd.concat([model_a, model_b]).unique()`` lists them: every model of the A column
    by first appearance, then those seen only in the B column (FastChat's and the taxonomy code's column order)."""
    return pd.unique(np.concatenate([np.asarray(model_a), np.asarray(model_b)]))


def legacy_bootstrap_rows(n_rows: int, rounds: int, seed: int):
    """The row numbers of ``rounds`` pandas ``DataFrame.sample(frac=1.0, replace=True)`` draws after
    ``np.random.seed(seed)``, one array per round: pandas draws ``RandomState.randint(0, n, n)`` from numpy's global
    legacy generator, so an own ``RandomState(seed)`` gives the same numbers without touching the global state."""
    state = np.random.RandomState(seed)
    for _ in range(rounds):
        yield state.randint(0, n_rows, size=n_rows)


def apply_anchor(ratings: np.ndarray, present: np.ndarray, models: tuple[str, ...],
                 anchor: tuple[str, float] | None, required: bool) -> np.ndarray:
    """Shift ``ratings`` (one fit, or rounds × models) so the anchor model has the anchor rating.

    ``present`` marks the models rated in each row. A default anchor (``required`` False) applies only where its
    model is rated, as FastChat's code does (``if baseline in models``); one the user asked for must be in the log.
    """
    if anchor is None:
        return ratings
    name, value = anchor
    if name not in models:
        if required:
            raise ValueError(f"Cannot anchor on {name!r}: no vote mentions it. Pick one of: {', '.join(models)}.")
        return ratings
    index = models.index(name)
    ratings = np.array(ratings, dtype=np.float64)
    rows = ratings if ratings.ndim == 2 else ratings[None]
    have = np.asarray(present if np.ndim(present) == 2 else np.asarray(present)[None])[:, index]
    rows[have] += (float(value) - rows[have, index])[:, None]
    return rows if ratings.ndim == 2 else rows[0]


@dataclass(frozen=True)
class RatingProtocol:
    """One way of turning a battle log into ratings with intervals (see the module docstring).

    Subclasses set the class attributes below (one sentence each) and implement :meth:`fit`; their dataclass fields
    are the settings, with the source's values as defaults. ``anchor`` = (model, rating) pins a model;
    ``anchor_required`` says whether a missing anchor model is an error (a user's) or skipped (a source's default).
    """

    name: ClassVar[str]
    title: ClassVar[str]
    source: ClassVar[str]
    ties: ClassVar[str]
    penalty: ClassVar[str]
    scale: ClassVar[str]
    anchor_rule: ClassVar[str]
    bootstrap: ClassVar[str]
    rounding: ClassVar[str]
    when: ClassVar[str]  # when to use it
    # what it does with a flagged vote (EncodedVotes.flagged: a self-battle, or a record its file marks), as its
    # source's code did
    flagged_rule: ClassVar[str] = "counted like any vote, as its source's code counts every record"
    counts_flagged: ClassVar[bool] = True  # False: every flagged vote leaves the fit (what the robustness audit refits)

    def fit(self, votes: EncodedVotes) -> ProtocolFit:  # pragma: no cover - every protocol overrides it
        raise NotImplementedError

    def point_model(self, counts: np.ndarray):
        """The point fit of a count tensor as the robustness audit reads it (:class:`ratings.robustness.PointModel`),
        or None for a protocol the audit does not cover (one that is not a converged Bradley–Terry fit)."""
        return None

    def with_settings(self, **settings) -> RatingProtocol:
        """This protocol with some settings changed (unknown names are refused, naming the known ones)."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"The {self.name} protocol has no setting {', '.join(unknown)}; its settings are "
                             f"{', '.join(sorted(known))}.")
        return dataclasses.replace(self, **settings)

    def settings(self) -> dict:
        return dataclasses.asdict(self)

    def choices(self) -> dict[str, str]:
        """How it treats ties, its penalty, scale, anchor, intervals ("bootstrap") and rounding, in words."""
        return {"ties": self.ties, "penalty": self.penalty, "scale": self.scale, "anchor": self.anchor_rule,
                "bootstrap": self.interval_rule(), "rounding": self.rounding}

    def interval_rule(self) -> str:
        """How its 95% intervals are made, in words (the class's ``bootstrap`` sentence unless a setting changes
        it)."""
        return self.bootstrap

    def round(self, values: np.ndarray) -> np.ndarray:
        """The protocol's rounding of the rating and both bounds (none by default: the values as fitted)."""
        return np.asarray(values, dtype=np.float64)

    def printed(self, rating: float, lower: float, upper: float) -> str:
        """A rating with its interval as the source prints it (by default ``1012 (+13/-9)``, whole points)."""
        if not np.isfinite(rating):
            return ""
        if not (np.isfinite(lower) and np.isfinite(upper)):
            return f"{rating:.0f}"
        return f"{rating:.0f} (+{upper - rating:.0f}/-{rating - lower:.0f})"

    def rate(self, votes: EncodedVotes, *, min_votes: int = 0, provisional_votes: int = 0,
             order: str = "rating") -> pd.DataFrame:
        """The result table (:data:`RESULT_COLUMNS`): one row per model with a vote, best first.

        ``rating``, ``lower``, ``upper`` as the protocol publishes them (after :meth:`round`); ``votes`` ...
        ``both_bad`` count every vote of the model; ``fit_votes`` those that entered the fit; ``ranked``: rated with
        at least ``min_votes`` of them; ``provisional``: fewer than max(``min_votes``, ``provisional_votes``);
        ``rank`` .. ``rank_worst``: the ranks the intervals allow among the ranked models (:mod:`ratings.ranks`:
        ``rank`` = 1 + the ranked models whose lower bound is above this model's upper bound), missing for the
        others; ``printed``: the rating as the source prints it; ``protocol``: this protocol's name. Rows: the
        ranked models by ``order`` (``"rating"`` or ``"lower"``, the lower bound), then the others.
        """
        if len(votes) == 0:
            return empty_result()
        return self.result_table(votes, self.fit(votes), min_votes=min_votes, provisional_votes=provisional_votes,
                                 order=order)

    def result_table(self, votes: EncodedVotes, fitted: ProtocolFit, *, min_votes: int = 0,
                     provisional_votes: int = 0, order: str = "rating") -> pd.DataFrame:
        """:meth:`rate`'s table from a fit of ``votes`` the caller already has (to read its other fields too)."""
        counts = count_tensor(votes.model_a, votes.model_b, votes.outcome, votes.n_models)
        seen = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
        if len(votes) == 0 or not seen.any():
            return empty_result()
        rating, lower, upper = (self.round(v) for v in (fitted.rating, fitted.lower, fitted.upper))
        printed = [self.printed(r, lo, up) for r, lo, up in zip(rating, lower, upper)]
        return result_table(votes.models, counts, rating, lower, upper, fitted.fit_votes, printed, self.name,
                            min_votes=min_votes, provisional_votes=provisional_votes, order=order)

    def rate_frame(self, votes: pd.DataFrame, **options) -> pd.DataFrame:
        """:meth:`rate` of a vote table (columns ``model_a``, ``model_b``, ``outcome`` as in :mod:`ratings`, and an
        optional ``flag``), its rows in the order the votes were cast; self-battles are rated as the protocol's
        source rated them (:attr:`flagged_rule`); ``options`` as :meth:`rate`'s."""
        return self.rate(encode_votes(votes, self_battles=True), **options)


def result_table(models: tuple[str, ...], counts: np.ndarray, rating: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, fit_votes: np.ndarray, printed: list[str], protocol: str, *, min_votes: int = 0,
                 provisional_votes: int = 0, order: str = "rating") -> pd.DataFrame:
    """The result table (:data:`RESULT_COLUMNS`, as :meth:`RatingProtocol.rate` describes it) of ratings and
    intervals fitted on the votes counted in ``counts`` (n×n×4 over ``models``): one row per model with a vote."""
    seen = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
    if not seen.any():
        return empty_result()
    fit_votes = np.asarray(fit_votes, dtype=np.int64)
    ranked, provisional = vote_status(fit_votes, np.isfinite(rating), min_votes, provisional_votes)
    best, worst = rank_ranges(lower, upper, ranked & seen)
    between = counts.copy()
    between[np.arange(len(models)), np.arange(len(models))] = 0  # a self-battle is no win, loss or tie
    totals = model_totals(between)
    table = pd.DataFrame({
        "model": pd.Series(models, dtype=object),
        "rating": rating, "lower": lower, "upper": upper,
        "rank": pd.array(best, dtype="Float64").astype("Int64"),
        "rank_worst": pd.array(worst, dtype="Float64").astype("Int64"),
    })
    for column in ("votes", "wins", "losses", "ties", "both_bad"):
        table[column] = totals[column].to_numpy(dtype=np.int64)
    table["both_bad_rate"] = table["both_bad"] / table["votes"].where(table["votes"] > 0)
    table["fit_votes"] = fit_votes
    table["ranked"] = ranked
    table["provisional"] = provisional
    table["printed"] = printed
    table["protocol"] = protocol
    table = table[seen].reset_index(drop=True)
    rows = board_order(table["rating"].to_numpy(), table["lower"].to_numpy(), table["ranked"].to_numpy(),
                       table["votes"].to_numpy(), list(table["model"]), order)
    return table.iloc[rows].reset_index(drop=True)[list(RESULT_COLUMNS)]


def empty_result() -> pd.DataFrame:
    """The result table of no votes: no rows, the usual columns and dtypes."""
    dtypes = {"model": object, "rank": "Int64", "rank_worst": "Int64", "ranked": bool, "provisional": bool,
              "printed": object, "protocol": object,
              **{column: np.int64 for column in ("votes", "wins", "losses", "ties", "both_bad", "fit_votes")}}
    return pd.DataFrame({column: pd.Series([], dtype=dtypes.get(column, float)) for column in RESULT_COLUMNS})


def fit_votes_of(votes: EncodedVotes, kept: np.ndarray | None = None) -> np.ndarray:
    """Votes per model among those ``kept`` (all by default); a self-battle is one vote of its model."""
    keep = np.ones(len(votes), dtype=bool) if kept is None else kept
    other = keep & (votes.model_a != votes.model_b)
    return (np.bincount(votes.model_a[keep], minlength=votes.n_models)
            + np.bincount(votes.model_b[other], minlength=votes.n_models))
