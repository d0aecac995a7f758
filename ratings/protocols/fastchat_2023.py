"""``fastchat-2023``: the Bradley–Terry fit FastChat's leaderboard script published with from December 2023 to March
2024 (``fastchat/serve/monitor/elo_analysis.py``, ``compute_elo_mle_with_tie``), also run by GenAI-Arena and
WildVision on their logs (``../shared/reference/protocols.md``, "Peer rating protocols").

- Ties: the battle table is duplicated; an A win is a row won by A in both copies, a tie **and** a "tie (bothbad)"
  one row won by A (first copy) and one by B (second copy): half a win each way.
- Penalty: scikit-learn ``LogisticRegression(fit_intercept=False)`` with its defaults, so an L2 penalty with C = 1,
  lbfgs, ``tol=1e-4``, ``max_iter=100``. That early stop is not a converged fit (it moves ratings by several points);
  this protocol stops where the library stopped (:func:`ratings.protocols.logistic.sklearn_logistic_bt`).
- Scale: x = ±ln 10 per battle, R = 400·w + 1000 (mean 1000).
- Anchor: the script of that period pins ``llama-13b`` at 800 when the log has it, and nothing otherwise; pass
  ``anchor=None`` to leave it out or another (model, rating).
- Bootstrap: ``np.random.seed(42)`` once, then 100 rounds of ``battles.sample(frac=1.0, replace=True)`` over the log
  in time order (the script sorts by ``tstamp`` and keeps the anonymous battles first: ``--anonymous-only``), each
  refitted the same way; bounds = pandas ``quantile(0.025)`` / ``quantile(0.975)`` (linear, NaN rounds skipped).
- Rounding: none in the table (FastChat's ``rating`` column is the full fit, unrounded); printed with whole points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ratings.protocols.duplicated_table import DuplicatedTableProtocol


@dataclass(frozen=True)
class FastChat2023(DuplicatedTableProtocol):
    name: ClassVar[str] = "fastchat-2023"
    title: ClassVar[str] = "FastChat / Chatbot Arena 2023 (also GenAI-Arena, WildVision)"
    source: ClassVar[str] = ("FastChat elo_analysis.py compute_elo_mle_with_tie (Dec 2023 – Mar 2024): scikit-learn "
                             "LogisticRegression with its defaults")
    ties: ClassVar[str] = "battles duplicated; a tie or both-bad is one win for each side (half a win each way)"
    penalty: ClassVar[str] = ("scikit-learn's default L2 penalty, C = 1, stopped where lbfgs stops at tol 1e-4 and "
                              "100 iterations (not a converged fit)")
    scale: ClassVar[str] = "400·w + 1000 with x = ±ln 10 (400 points per factor 10 of odds, mean 1000)"
    anchor_rule: ClassVar[str] = "llama-13b at 800 when the votes have it (as the script of that period); else none"
    bootstrap: ClassVar[str] = ("100 rounds of pandas sample(frac=1, replace=True) after np.random.seed(42), over the "
                                "votes in time order; 2.5% and 97.5% quantiles")
    rounding: ClassVar[str] = "none (printed in whole points)"
    when: ClassVar[str] = ("checking an imported FastChat, GenAI-Arena or WildVision log against a board published "
                           "with this code; comparing numbers with those boards")
    flagged_rule: ClassVar[str] = ("a self-battle as compute_elo_mle_with_tie's design matrix leaves it: X[i, a] = "
                                   "+ln 10 then X[i, b] = −ln 10, so one −ln 10 column, a game against a rating of 0; "
                                   "any other flagged record counted like any vote")

    C: float = 1.0
    tol: float = 1e-4
    max_iter: int = 100
    rounds: int = 100
    seed: int = 42
    anchor: tuple[str, float] | None = ("llama-13b", 800.0)
