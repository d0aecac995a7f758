"""Position bias: how often the first (left, position A) image wins, per group of votes.

The taxonomy benchmark (protocol T1) found GPT-4 strongly prefers the first image while humans do not. Per group:

- ``first_wins``, ``second_wins``, ``ties``, ``both_bad``: shares of the group's votes (they add up to 1);
- ``first_win_rate``: A / (A + B), the share of decisive votes won by the first position (0.5 = no bias);
- ``p_value``: two-sided exact binomial test of A against B among decisive votes under H0: rate = 0.5
  (``scipy.stats.binomtest``). Battles are drawn with random positions, so without bias A and B are exchangeable.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.stats

from ratings.votes import OUTCOMES, check_votes

POSITION_BIAS_COLUMNS = ("votes", "first_wins", "second_wins", "ties", "both_bad", "first_win_rate", "p_value")


def position_bias(votes: pd.DataFrame, by: Sequence[str] | str = ("voter_kind", "subset")) -> pd.DataFrame:
    """Shares of first-position wins, second-position wins, ties and both-bad per group (module docstring).

    ``by`` names the grouping columns (e.g. ``("voter_kind", "subset")``; ``()`` for all votes together). Missing
    values in a grouping column form their own group.
    """
    return position_bias_from_counts(outcome_counts(votes, by))


def outcome_counts(votes: pd.DataFrame, by: Sequence[str] | str = ("voter_kind", "subset")) -> pd.DataFrame:
    """Votes per group and outcome: the ``by`` columns, then one count column per outcome in OUTCOMES order."""
    check_votes(votes)
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in votes.columns]
    if missing:
        raise ValueError(
            f"Cannot group by {', '.join(missing)}: the vote table has no such column. Add it or leave it out of by=."
        )
    bad = set(votes["outcome"].dropna().unique()) - set(OUTCOMES)
    if bad or votes["outcome"].isna().any():
        raise ValueError("Every outcome must be one of 'A', 'B', 'tie', 'both_bad'; map or drop the other rows.")
    frame = pd.DataFrame({c: votes[c].to_numpy() for c in by}, index=votes.index)
    for outcome in OUTCOMES:
        frame[outcome] = (votes["outcome"] == outcome).to_numpy(dtype=np.int64)
    if not by:
        return frame[list(OUTCOMES)].sum().to_frame().T
    return frame.groupby(by, dropna=False, sort=True)[list(OUTCOMES)].sum().reset_index()


def position_bias_from_counts(counts: pd.DataFrame) -> pd.DataFrame:
    """:func:`position_bias` of grouped outcome counts: a table with one row per group, its grouping columns and
    one count column per outcome (as :func:`outcome_counts` returns); the groups keep their order."""
    by = [c for c in counts.columns if c not in OUTCOMES]
    grouped = counts[list(OUTCOMES)].astype(np.int64)
    total = grouped.sum(axis=1)
    table = counts[by].copy()
    table["votes"] = total.astype(np.int64)
    table["first_wins"] = grouped["A"] / total
    table["second_wins"] = grouped["B"] / total
    table["ties"] = grouped["tie"] / total
    table["both_bad"] = grouped["both_bad"] / total
    decisive = grouped["A"] + grouped["B"]
    table["first_win_rate"] = grouped["A"] / decisive.where(decisive > 0)
    table["p_value"] = [
        scipy.stats.binomtest(int(a), int(d), 0.5).pvalue if d > 0 else np.nan
        for a, d in zip(grouped["A"], decisive)
    ]
    return table.reset_index(drop=True)[[*by, *POSITION_BIAS_COLUMNS]]
