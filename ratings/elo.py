"""Online Elo: one sequential update per vote, in vote order (for comparison with the Bradley–Terry fit).

Update (Elo 1978, "The Rating of Chessplayers"; the Chatbot Arena notebook's ``compute_elo``):
    E_a = 1 / (1 + 10^((R_b − R_a) / scale)),   R_a ← R_a + K (S_a − E_a),   R_b ← R_b + K ((1 − S_a) − (1 − E_a))
with S_a = 1 for a win of a, 0 for a loss and 0.5 for a tie. Unlike the Bradley–Terry MLE the result depends on
the order of the votes and on K; with a small K and many votes it approaches the MLE.

The tie policy decides what a tie or a both-bad vote does, as for the fit (see :mod:`ratings.votes`): ``"drop"``
skips it, ``"half"`` scores it S_a = 0.5, ``"half_ties_drop_both_bad"`` scores ties 0.5 and skips both-bad.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ratings.votes import check_tie_policy, encode_votes

_SCORE = {"drop": (1.0, 0.0, np.nan, np.nan), "half": (1.0, 0.0, 0.5, 0.5),
          "half_ties_drop_both_bad": (1.0, 0.0, 0.5, np.nan)}


def elo_sequence(
    model_a: np.ndarray,
    model_b: np.ndarray,
    score_a: np.ndarray,
    n_models: int,
    *,
    k: float = 4.0,
    start: float = 1000.0,
    scale: float = 400.0,
) -> np.ndarray:
    """Ratings after applying the updates in order; ``score_a`` is S_a per vote (NaN = skip the vote)."""
    ratings = [float(start)] * n_models
    for a, b, s in zip(model_a.tolist(), model_b.tolist(), score_a.tolist()):
        if s != s:  # NaN: the tie policy skips this vote
            continue
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[b] - ratings[a]) / scale))
        delta = k * (s - expected)
        ratings[a] += delta
        ratings[b] -= delta
    return np.array(ratings)


def online_elo(
    votes: pd.DataFrame,
    *,
    k: float = 4.0,
    start: float = 1000.0,
    scale: float = 400.0,
    tie_policy: str = "half",
) -> pd.Series:
    """Online Elo of every model after the votes in row order (module docstring), as a Series sorted best first."""
    check_tie_policy(tie_policy)
    if k <= 0:
        raise ValueError(f"k must be a positive update size (Chatbot Arena uses 4, chess 10 to 40), got {k}.")
    if len(votes) == 0:
        return pd.Series([], dtype=float, name="elo")
    encoded = encode_votes(votes)
    score = np.asarray(_SCORE[tie_policy])[encoded.outcome]
    ratings = elo_sequence(encoded.model_a, encoded.model_b, score, encoded.n_models, k=k, start=start, scale=scale)
    series = pd.Series(ratings, index=pd.Index(encoded.models, name="model"), name="elo")
    return series.sort_values(ascending=False, kind="stable")


__all__ = ["online_elo", "elo_sequence"]
