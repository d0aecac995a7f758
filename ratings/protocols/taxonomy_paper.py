"""``taxonomy-paper``: the ELO of the taxonomy benchmark's printed Tables 3–6 (the authors' ``arena_elo.py``;
``../shared/reference/protocols.md``, T1 "ELO"). The paper's §4.1 text says ties are omitted; the printed tables come
from the code, which this protocol follows.

- Ties: the battle table is duplicated; result 0 (A better) is a row won by A in both copies, 1 (B better) by B, and
  2 (tie) **and** 3 (both bad) one row won by A in the first copy and one by B in the second.
- Penalty: none: ``LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8)`` (``max_iter`` 100, lbfgs).
- Scale: x = ±ln 10, R = 400·w + 1000; no anchor model (their ``BASELINE_MODEL_NAME`` is "None").
- Bootstrap: ``np.random.seed(42)`` once, 100 rounds of ``battles.sample(frac=1.0, replace=True)`` over the battles
  in file order; bounds ``np.percentile`` 2.5 and 97.5 (NaN for a model missing from any round, where their script
  would fail).
- Rounding: score, lower and upper each cast with ``astype(int)``: truncated towards zero, not rounded; printed as
  ``score (+(upper − score)/−(score − lower))``, e.g. ``1125 (+61/-59)`` (Table 5's Easy column averages 999.5, as
  truncation predicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.protocols.duplicated_table import NO_PENALTY, DuplicatedTableProtocol


@dataclass(frozen=True)
class TaxonomyPaper(DuplicatedTableProtocol):
    name: ClassVar[str] = "taxonomy-paper"
    title: ClassVar[str] = "Taxonomy image generation paper, Tables 3–6"
    source: ClassVar[str] = "the authors' arena_elo.py (repository VityaVitalich/BIGT)"
    ties: ClassVar[str] = "battles duplicated; a tie and a both-bad are each one win for each side"
    penalty: ClassVar[str] = "none (penalty=None), lbfgs to tol 1e-8 or 100 iterations"
    scale: ClassVar[str] = "400·w + 1000 with x = ±ln 10 (mean 1000)"
    anchor_rule: ClassVar[str] = "none"
    bootstrap: ClassVar[str] = ("100 rounds of pandas sample(frac=1, replace=True) after np.random.seed(42), over the "
                                "battles in order; np.percentile 2.5 and 97.5")
    rounding: ClassVar[str] = ("score, lower and upper truncated to integers (astype(int)); printed as "
                               "score (+upper−score/-score−lower)")
    when: ClassVar[str] = "the taxonomy benchmark's published ELO tables, number for number"
    flagged_rule: ClassVar[str] = ("a self-battle as subset_elo.py's design matrix leaves it (the same code as "
                                   "FastChat's: one −ln 10 column, a game against a rating of 0); any other flagged "
                                   "record counted like any vote")

    C: float = NO_PENALTY
    tol: float = 1e-8
    max_iter: int = 100
    rounds: int = 100
    seed: int = 42
    anchor: tuple[str, float] | None = None

    def quantiles(self, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``np.percentile`` 2.5 and 97.5 per model: NaN when the model is missing from a round."""
        if samples.shape[0] == 0:
            return np.full(samples.shape[1], np.nan), np.full(samples.shape[1], np.nan)
        return np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)

    def round(self, values: np.ndarray) -> np.ndarray:
        """``astype(int)``: truncation towards zero (NaN stays NaN)."""
        return np.trunc(np.asarray(values, dtype=np.float64))
