"""Model × model matrices: battle counts, observed win fractions and Bradley–Terry predicted win rates.

All three are DataFrames with models as both index (row) and columns, in the same order.

- battle count: C[r, c] = votes between r and c in either position (all outcomes); symmetric, 0 on the diagonal.
- win fraction: F[r, c] = votes r won against c / C[r, c] (ties and both-bad stay in the denominator, as in the
  Chatbot Arena notebook's ``compute_pairwise_win_fraction``); NaN where the two never met.
- predicted win rate: P[r, c] = 1 / (1 + 10^((R_c − R_r) / scale)) from Elo-scale Bradley–Terry ratings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ratings.bradley_terry import predicted_win_rate
from ratings.votes import pair_outcomes, vote_counts


def _frame(matrix: np.ndarray, models: Sequence[str]) -> pd.DataFrame:
    index = pd.Index(list(models), name="model")
    return pd.DataFrame(matrix, index=index, columns=pd.Index(list(models), name="opponent"))


def _order(frame: pd.DataFrame, order: Sequence[str] | None) -> pd.DataFrame:
    if order is None:
        return frame
    missing = [m for m in order if m not in frame.index]
    if missing:
        raise ValueError(f"order names models without votes: {', '.join(map(str, missing[:5]))}; drop them.")
    return frame.loc[list(order), list(order)]


def battle_count_matrix(votes: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """C[r, c]: votes between r and c in either position, whatever the outcome (models sorted by name by default)."""
    return battle_counts_from_tensor(*vote_counts(votes), order)


def battle_counts_from_tensor(models: Sequence[str], counts: np.ndarray,
                              order: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`battle_count_matrix` of a count tensor (:mod:`ratings.votes`) over ``models``."""
    per_pair = np.asarray(counts).sum(axis=2)
    return _order(_frame(per_pair + per_pair.T, models), order)


def win_fraction_matrix(votes: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """F[r, c]: share of the votes between r and c that r won (module docstring).

    Without ``order`` the models are sorted by their mean win fraction, best first.
    """
    return win_fractions_from_tensor(*vote_counts(votes), order)


def win_fractions_from_tensor(models: Sequence[str], counts: np.ndarray,
                              order: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`win_fraction_matrix` of a count tensor (:mod:`ratings.votes`) over ``models``."""
    folded = pair_outcomes(np.asarray(counts))
    battles = folded[:, :, 0] + folded[:, :, 0].T + folded[:, :, 1] + folded[:, :, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(battles > 0, folded[:, :, 0] / battles, np.nan)
    frame = _frame(fraction, models)
    if order is None:
        order = frame.mean(axis=1).sort_values(ascending=False, kind="stable").index.tolist()
    return _order(frame, order)


def predicted_win_rate_matrix(ratings: Mapping[str, float] | pd.DataFrame, scale: float = 400.0) -> pd.DataFrame:
    """P[r, c] = P(r beats c) under Bradley–Terry, from {model: rating} or a :func:`ratings.fit_leaderboard` table.

    Models are in the order given (a leaderboard table is already best first); NaN ratings are left out.
    """
    if isinstance(ratings, pd.DataFrame):
        if not {"model", "rating"} <= set(ratings.columns):
            raise ValueError("Pass a table with 'model' and 'rating' columns (as fit_leaderboard returns) or a dict.")
        ratings = dict(zip(ratings["model"], ratings["rating"]))
    items = [(m, float(r)) for m, r in ratings.items() if r == r]
    models = [m for m, _ in items]
    return _frame(predicted_win_rate(np.array([r for _, r in items]), scale=scale), models)
