"""Pure rating math over vote tables: Bradley–Terry Elo with bootstrap CIs, online Elo, matrices, agreement and
bias statistics, and the leaderboard's plots. No database, no UI, no file I/O: the benchmark against peer libraries
is ``python -m tools.ratings_bench``, outside this package.

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
:mod:`~ratings.agreement`, :mod:`~ratings.bias`, :mod:`~ratings.judge_agreement` (which judge to trust: a judge
voter against the humans, from integer codes) and :mod:`~ratings.plots` (imported on demand, needs plotly).
"""

import sys

# name -> the module that defines it; the modules are imported on the first use of one of these names (PEP 562), so
# ``from ratings.votes import OUTCOMES`` in the data model does not pull in scipy
_EXPORTS = {
    "ratings.agreement": ("cohen_kappa", "fleiss_kappa", "human_judge_agreement", "inter_annotator_agreement",
                          "oriented_outcomes", "rank_correlation"),
    "ratings.bias": ("position_bias",),
    "ratings.bradley_terry": ("BTFit", "ConvergenceError", "fit_bradley_terry", "newton_bt", "rank_by_ci"),
    "ratings.elo": ("online_elo",),
    "ratings.leaderboard": ("LEADERBOARD_COLUMNS", "fit_leaderboard", "leaderboard_from_counts"),
    "ratings.matrices": ("battle_count_matrix", "predicted_win_rate_matrix", "win_fraction_matrix"),
    "ratings.votes": ("OUTCOMES", "TIE_POLICIES", "count_tensor", "encode_votes", "slice_votes", "vote_counts"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'ratings' has no attribute {name!r}")
    from ratings import agreement, bias, bradley_terry, elo, leaderboard, matrices, votes  # noqa: F401 (_EXPORTS')

    return getattr(sys.modules[_MODULE_OF[name]], name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
