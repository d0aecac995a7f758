"""Pure rating math over vote tables: Bradley–Terry Elo with bootstrap CIs, online Elo, matrices, agreement and
bias statistics, and the leaderboard's plots. No database, no UI, no file I/O (except ``python -m tools.ratings_bench``).

The vote format (every function here takes it; other modules rely on it)
    A ``pandas.DataFrame`` with one row per vote and the columns

    - ``model_a`` (str): the model shown on the left (position A);
    - ``model_b`` (str): the model shown on the right (position B);
    - ``outcome`` (str): ``"A"``, ``"B"``, ``"tie"`` or ``"both_bad"``, relative to the displayed positions;
    - optional: ``battle_id``; ``voter`` (annotator or judge name); ``voter_kind`` (``"human"`` or ``"judge"``);
      ``suite``, ``subset``, ``variant``, ``category`` (for slicing); ``pair_key`` (str naming the same prompt and
      the same two images whatever their order: matches human and judge votes, and annotators, on one battle);
      ``excluded`` (bool: left out unless asked for).

    Model names become integer indices 0..n−1 (sorted names) at one edge, :func:`ratings.votes.encode_votes`;
    everything inside works on numpy count arrays (``counts[i, j, outcome]``, see :mod:`ratings.votes`).

Modules: :mod:`~ratings.votes` (format, aggregation, tie policies, slicing), :mod:`~ratings.bradley_terry` (fit and
bootstrap), :mod:`~ratings.leaderboard` (the table), :mod:`~ratings.elo` (online Elo), :mod:`~ratings.matrices`,
:mod:`~ratings.agreement`, :mod:`~ratings.bias`, :mod:`~ratings.plots` (imported on demand, needs plotly) and
:mod:`~tools.ratings_bench` (speed and agreement against peer libraries).
"""

from ratings.agreement import (
    cohen_kappa,
    fleiss_kappa,
    human_judge_agreement,
    inter_annotator_agreement,
    oriented_outcomes,
    rank_correlation,
)
from ratings.bias import position_bias
from ratings.bradley_terry import BTFit, ConvergenceError, fit_bradley_terry, newton_bt, rank_by_ci
from ratings.elo import online_elo
from ratings.leaderboard import LEADERBOARD_COLUMNS, fit_leaderboard, leaderboard_from_counts
from ratings.matrices import battle_count_matrix, predicted_win_rate_matrix, win_fraction_matrix
from ratings.votes import OUTCOMES, TIE_POLICIES, count_tensor, encode_votes, slice_votes, vote_counts

__all__ = [
    "BTFit", "ConvergenceError", "LEADERBOARD_COLUMNS", "OUTCOMES", "TIE_POLICIES",
    "battle_count_matrix", "cohen_kappa", "count_tensor", "encode_votes", "fit_bradley_terry", "fit_leaderboard",
    "leaderboard_from_counts",
    "fleiss_kappa", "human_judge_agreement", "inter_annotator_agreement", "newton_bt", "online_elo",
    "oriented_outcomes", "position_bias", "predicted_win_rate_matrix", "rank_by_ci", "rank_correlation",
    "slice_votes", "vote_counts", "win_fraction_matrix",
]
