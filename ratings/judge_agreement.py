"""Which judge to trust: one judge voter's votes against the human votes on the same battles, from integer codes.

Votes come as :class:`VoteCodes` (one entry per vote: the battle key naming the prompt and the two images whatever
their sides, the models as displayed as indices ``0..n-1`` sorted by name, the outcome code into OUTCOMES). Every
judge vote is paired with every human vote on the same battle, outcomes re-oriented so that "A" means the model
whose name sorts first won (:mod:`ratings.agreement`), giving the 4×4 confusion matrix C (rows: human, columns:
judge, OUTCOMES order). From it:

accuracy (decisive)
    The share of pairs with a decisive human vote (A or B) where the judge picked the same image:
    ``acc = (C[A,A] + C[B,B]) / Σ_{h∈{A,B}} Σ_j C[h,j]``; a judge tie or both-bad on such a battle counts as wrong.
accuracy with ties (GenAI-Bench)
    Jiang et al. 2024 (GenAI-Arena / GenAI-Bench) score a judge over three classes, left, right and tie, with a
    both-bad vote counted as a tie: ``acc_tie = (C[A,A] + C[B,B] + Σ_{h,j∈{tie,both_bad}} C[h,j]) / Σ C``.
Cohen's κ
    Over the four outcomes, κ = (p_o − p_e) / (1 − p_e) of C (:func:`ratings.agreement.cohen_kappa`).
position bias
    The judge's first-position win rate A / (A + B) over its decisive votes as displayed, with the two-sided exact
    binomial p-value under rate = 0.5 (:mod:`ratings.bias`); battles are drawn with random sides, so an unbiased
    judge is at 0.5. The share of both-order disagreements (asked in both orders, the two verdicts differed) comes
    from the judgments and is passed in.
tie and both-bad rates
    The judge's shares of ties and both-bad votes on the shared battles, beside the humans' on the same battles.
rank agreement
    Bradley–Terry strengths (ties and both-bad dropped, ridge 10⁻⁶) fitted on the judge's votes on the shared
    battles and on every human vote of the slice; Spearman ρ and Kendall τ-b over the models both rated
    (:func:`ratings.agreement.rank_correlation`), and the 95% percentile bootstrap interval of ρ from ``rounds``
    multinomial redraws of both sides' win counts (:func:`ratings.bradley_terry.bootstrap_counts`).

Below ``min_shared`` shared battles every figure is NaN and the row says ``insufficient``: never a misleading
figure. The human ceiling (:func:`human_ceiling`) uses the same formulas on pairs of different annotators' votes on
replicated battles: C = Σ_battle (n nᵀ − diag n), n the battle's oriented outcome counts (last vote per annotator).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd
import scipy.stats

from ratings.agreement import _masked_spearman, cohen_kappa, rank_correlation
from ratings.bradley_terry import bootstrap_counts, newton_bt
from ratings.votes import OUTCOMES

_SWAP = np.array([1, 0, 2, 3])
RIDGE = 1e-6
FIGURES = ("shared_battles", "votes", "accuracy", "accuracy_ties", "kappa", "first_win_rate", "first_win_p",
           "both_order_disagreement", "tie_rate", "human_tie_rate", "both_bad_rate", "human_both_bad_rate",
           "spearman", "spearman_low", "spearman_high", "kendall", "insufficient")


@dataclass(frozen=True)
class VoteCodes:
    """One entry per vote: ``keys`` (battle), ``model_a``/``model_b`` (indices as displayed), ``outcome`` (code)."""

    keys: np.ndarray
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray

    def __len__(self) -> int:
        return len(self.outcome)

    def take(self, mask: np.ndarray) -> VoteCodes:
        return replace(self, **{f.name: getattr(self, f.name)[mask] for f in fields(self)})

    def oriented(self) -> np.ndarray:
        """Outcome codes with A meaning the model with the smaller index (the name sorting first) won."""
        return np.where(self.model_a > self.model_b, _SWAP[self.outcome], self.outcome)

    def win_matrix(self, n_models: int) -> np.ndarray:
        """W[i, j]: decisive votes where model i beat model j."""
        decisive = self.outcome < 2
        winner = np.where(self.outcome == 0, self.model_a, self.model_b)[decisive].astype(np.int64)
        loser = np.where(self.outcome == 0, self.model_b, self.model_a)[decisive].astype(np.int64)
        return np.bincount(winner * n_models + loser, minlength=n_models * n_models).reshape(n_models, n_models)


def confusion_figures(confusion: np.ndarray) -> dict:
    """Accuracy (decisive), accuracy with ties (GenAI-Bench) and Cohen's κ of a human × judge confusion matrix."""
    c = np.asarray(confusion, dtype=np.float64)
    decisive = c[:2].sum()
    total = c.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = (c[0, 0] + c[1, 1]) / decisive if decisive else np.nan
        accuracy_ties = (c[0, 0] + c[1, 1] + c[2:, 2:].sum()) / total if total else np.nan
    return {"accuracy": float(accuracy), "accuracy_ties": float(accuracy_ties), "kappa": cohen_kappa(c)}


def _first_position(outcome: np.ndarray) -> tuple[float, float]:
    a, b = int((outcome == 0).sum()), int((outcome == 1).sum())
    if a + b == 0:
        return float("nan"), float("nan")
    return a / (a + b), float(scipy.stats.binomtest(a, a + b, 0.5).pvalue)


def _rated(wins: np.ndarray) -> np.ndarray:
    """Models with at least one decisive comparison (per fit when batched)."""
    return (wins + np.swapaxes(wins, -1, -2)).sum(axis=-1) > 0


def rank_agreement(human_wins: np.ndarray, judge_wins: np.ndarray, *, rounds: int = 200,
                   rng: np.random.Generator | None = None) -> dict:
    """Spearman ρ and Kendall τ-b of the two Bradley–Terry rankings over the models both rated, and the bootstrap
    95% interval of ρ (module docstring). NaN where fewer than three models are shared."""
    human_wins, judge_wins = np.asarray(human_wins, float), np.asarray(judge_wins, float)
    n = len(human_wins)
    both = _rated(human_wins) & _rated(judge_wins)
    result = {"spearman": np.nan, "kendall": np.nan, "spearman_low": np.nan, "spearman_high": np.nan,
              "models": int(both.sum())}
    if both.sum() < 3:
        return result
    human_theta, _ = newton_bt(human_wins, ridge=RIDGE, max_iter=50)
    judge_theta, _ = newton_bt(judge_wins, ridge=RIDGE, max_iter=50)
    index = np.flatnonzero(both)
    correlation = rank_correlation(dict(zip(index, human_theta[index])), dict(zip(index, judge_theta[index])))
    result.update(spearman=correlation["spearman"], kendall=correlation["kendall"])
    if rounds > 0:
        rng = rng if rng is not None else np.random.default_rng(0)
        redrawn = [bootstrap_counts(w.ravel(), rounds, rng).reshape(rounds, n, n) for w in (human_wins, judge_wins)]
        thetas = [newton_bt(w, ridge=RIDGE, theta0=t, max_iter=20)[0]
                  for w, t in zip(redrawn, (human_theta, judge_theta))]
        mask = _rated(redrawn[0]) & _rated(redrawn[1])
        rho = _masked_spearman(thetas[0], thetas[1], mask)
        rho = rho[np.isfinite(rho)]
        if len(rho):
            result.update(spearman_low=float(np.quantile(rho, 0.025)), spearman_high=float(np.quantile(rho, 0.975)))
    return result


@dataclass(frozen=True)
class HumanBattles:
    """The human votes of a slice, per battle: built once, then every judge is compared against it in time linear
    in the judge's votes. ``keys`` sorted battle keys, ``counts[k, o]`` human votes on battle k with oriented
    outcome o, ``wins`` the humans' decisive win matrix."""

    keys: np.ndarray
    counts: np.ndarray
    wins: np.ndarray

    @classmethod
    def of(cls, human: VoteCodes, n_models: int) -> HumanBattles:
        keys, index = np.unique(human.keys, return_inverse=True)
        counts = np.bincount(index * 4 + human.oriented(), minlength=len(keys) * 4).reshape(len(keys), 4)
        return cls(keys, counts, human.win_matrix(n_models))

    def locate(self, keys: np.ndarray) -> np.ndarray:
        """The row of each key in ``counts``, −1 for a battle no human voted on."""
        at = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        found = (self.keys[at] == keys) if len(self.keys) else np.zeros(len(keys), dtype=bool)
        return np.where(found, at, -1)


def judge_vs_humans(human: VoteCodes | HumanBattles, judge: VoteCodes, n_models: int, *, min_shared: int = 30,
                    rounds: int = 200, seed: int = 0, both_order_disagreement: float = float("nan"),
                    positions: bool = True) -> dict:
    """Every figure of one judge voter against the human votes of a slice (module docstring), as a dict of FIGURES
    plus ``confusion`` (4×4 DataFrame, rows human, columns judge, oriented). ``human`` is the slice's human votes
    or, to compare several judges, their :class:`HumanBattles` built once. ``positions`` False for a virtual judge
    whose votes carry no display order (an ensemble): no first-position figures."""
    humans = human if isinstance(human, HumanBattles) else HumanBattles.of(human, n_models)
    rows = humans.locate(judge.keys)
    on_shared = rows >= 0
    judge, rows = judge.take(on_shared), rows[on_shared]
    battles = np.unique(rows)
    shared = int(len(battles))
    result = dict.fromkeys(FIGURES, float("nan"))
    result.update(shared_battles=shared, votes=len(judge), insufficient=shared < min_shared,
                  confusion=_confusion_frame(np.zeros((4, 4), np.int64)))
    if shared < min_shared:
        return result
    oriented = judge.oriented()
    # C[h, j] = Σ over judge votes with outcome j of the human votes with outcome h on the same battle
    confusion = np.stack([humans.counts[rows[oriented == j]].sum(axis=0) for j in range(4)], axis=1)
    result["confusion"] = _confusion_frame(confusion)
    result.update(confusion_figures(confusion))
    if positions:
        result["first_win_rate"], result["first_win_p"] = _first_position(judge.outcome)
    result["both_order_disagreement"] = both_order_disagreement
    humans_there = humans.counts[battles].sum(axis=0)
    for name, code in (("tie_rate", 2), ("both_bad_rate", 3)):
        result[name] = float((judge.outcome == code).mean())
        result[f"human_{name}"] = float(humans_there[code] / humans_there.sum())
    ranks = rank_agreement(humans.wins, judge.win_matrix(n_models), rounds=rounds, rng=np.random.default_rng(seed))
    result.update({k: ranks[k] for k in ("spearman", "kendall", "spearman_low", "spearman_high")})
    return result


def _confusion_frame(confusion: np.ndarray, judge: str = "judge") -> pd.DataFrame:
    return pd.DataFrame(np.asarray(confusion, dtype=np.int64), index=pd.Index(OUTCOMES, name="human"),
                        columns=pd.Index(OUTCOMES, name=judge))


def _last_per_voter(codes: VoteCodes, voters: np.ndarray) -> np.ndarray:
    """Row indices keeping each (battle, voter)'s last vote (rows in vote order)."""
    frame = pd.DataFrame({"k": codes.keys, "v": voters})
    return np.flatnonzero(~frame.duplicated(keep="last").to_numpy())


def human_ceiling(human: VoteCodes, voters: np.ndarray, *, min_shared: int = 30) -> dict:
    """The same figures for pairs of different annotators on replicated battles (module docstring): what a judge
    that votes like another human would reach. Rank and position figures are left NaN (they describe a voter)."""
    keep = _last_per_voter(human, np.asarray(voters))
    human = human.take(keep)
    items, _ = pd.factorize(human.keys)
    n_items = int(items.max()) + 1 if len(items) else 0
    per_item = np.bincount(items * 4 + human.oriented(), minlength=n_items * 4).reshape(n_items, 4)
    replicated = per_item[per_item.sum(axis=1) >= 2]
    result = dict.fromkeys(FIGURES, float("nan"))
    result.update(shared_battles=int(len(replicated)), votes=int(replicated.sum()),
                  insufficient=len(replicated) < min_shared,
                  confusion=_confusion_frame(np.zeros((4, 4), np.int64), "other human"))
    if len(replicated) < min_shared:
        return result
    confusion = replicated.T @ replicated - np.diag(replicated.sum(axis=0))
    result["confusion"] = _confusion_frame(confusion, "other human")
    result.update(confusion_figures(confusion))
    shares = replicated.sum(axis=0) / replicated.sum()
    result.update(tie_rate=float(shares[2]), human_tie_rate=float(shares[2]), both_bad_rate=float(shares[3]),
                  human_both_bad_rate=float(shares[3]))
    return result


def ensemble_votes(judges: list[VoteCodes], weights=None) -> VoteCodes:
    """A virtual judge: on every battle that the judges voted on, the outcome with the largest (weighted) sum of
    their votes (oriented; a judge's several votes on a battle each count); equal sums give a tie. ``weights``: one
    per judge, or per judge an array with one weight per vote; None is the plain majority. The votes come oriented
    (model_a the smaller index), so they carry no display order."""
    weights = [1.0] * len(judges) if weights is None else weights
    keys = np.concatenate([j.keys for j in judges]) if judges else np.zeros(0, np.int64)
    items, uniques = pd.factorize(keys)
    low = np.concatenate([np.minimum(j.model_a, j.model_b) for j in judges]) if judges else keys
    high = np.concatenate([np.maximum(j.model_a, j.model_b) for j in judges]) if judges else keys
    outcome = np.concatenate([j.oriented() for j in judges]) if judges else keys
    weight = (np.concatenate([np.broadcast_to(np.asarray(w, float), len(j)) for j, w in zip(judges, weights)])
              if judges else keys.astype(float))
    n = len(uniques)
    score = np.bincount(items * 4 + outcome, weights=weight, minlength=n * 4).reshape(n, 4)
    best = score.argmax(axis=1)
    top = score.max(axis=1, keepdims=True)
    split = ((score == top) & (top > 0)).sum(axis=1) > 1
    best = np.where(split, 2, best)
    first = np.zeros(n, dtype=np.int64)
    first[items[::-1]] = np.arange(len(items))[::-1]
    return VoteCodes(np.asarray(uniques), low[first], high[first], best)


def _fold_confusions(humans: HumanBattles, judge: VoteCodes, rows: np.ndarray, fold_of: np.ndarray, folds: int):
    """(C, shared): C[f] the human × judge confusion matrix of ``judge``'s votes on the human battles of fold f,
    ``shared[f]`` how many of fold f's battles it voted on (``rows``: each vote's battle in ``humans``, or −1)."""
    on_shared = rows >= 0
    rows, oriented = rows[on_shared], judge.oriented()[on_shared]
    fold = fold_of[rows]
    confusion = np.stack([np.bincount(fold * 4 + oriented, weights=humans.counts[rows, h], minlength=folds * 4)
                          .reshape(folds, 4) for h in range(4)], axis=1)
    shared = np.bincount(fold_of[np.unique(rows)], minlength=folds)
    return confusion, shared


def _kappa_weights(confusions: np.ndarray, shared: np.ndarray, min_shared: int) -> np.ndarray | None:
    """max(κ, 0) per judge (0 below ``min_shared`` shared battles or where κ is undefined); None when every weight
    is 0 (the plain majority then)."""
    kappas = np.array([cohen_kappa(c) if n >= min_shared else np.nan for c, n in zip(confusions, shared)])
    weights = np.where(np.isfinite(kappas), np.maximum(kappas, 0.0), 0.0)
    return weights if weights.sum() > 0 else None


def cross_fitted_ensemble(human: VoteCodes | HumanBattles, judges: list[VoteCodes], n_models: int, *,
                          folds: int = 5, seed: int = 0, min_shared: int = 30) -> VoteCodes:
    """The agreement-weighted virtual judge, its weights estimated out of sample (cross-fitting).

    The battles humans voted on are dealt into ``folds`` folds at random (a permutation seeded by ``seed``, battle
    k in fold ``perm[k] mod folds``). On a battle of fold f the ensemble votes :func:`ensemble_votes` with judge i
    weighted by ``w_i^(−f) = max(κ_i^(−f), 0)``: Cohen's κ of judge i with the humans on the battles of the *other*
    folds only (0 where judge i shares fewer than ``min_shared`` of them with the humans or κ is undefined; all 0:
    the plain majority). So no human vote the ensemble is scored against has shaped its weights; weights fitted on
    the same votes would favour the judges that happen to agree with those very votes, and rate even an ensemble of
    coin flips above chance. A battle no human voted on (never scored) gets the weights from every fold.
    """
    humans = human if isinstance(human, HumanBattles) else HumanBattles.of(human, n_models)
    if not len(humans.keys):
        return ensemble_votes(judges)  # nothing to weigh by, and nothing it could be scored on
    folds = max(folds, 1)
    fold_of = np.random.default_rng(seed).permutation(len(humans.keys)) % folds
    located = [humans.locate(judge.keys) for judge in judges]
    per_judge = [_fold_confusions(humans, judge, rows, fold_of, folds) for judge, rows in zip(judges, located)]
    confusion = np.stack([c for c, _ in per_judge]) if judges else np.zeros((0, folds, 4, 4))  # judge, fold, h, j
    shared = np.stack([n for _, n in per_judge]) if judges else np.zeros((0, folds), np.int64)
    vote_folds = [np.where(rows >= 0, fold_of[np.maximum(rows, 0)], -1) for rows in located]
    # weights[f + 1, i]: judge i's weight on the battles of fold f (row 0: battles no human voted on)
    weights = np.ones((folds + 1, len(judges)))
    for fold in range(-1, folds):
        if fold < 0:
            fitted = _kappa_weights(confusion.sum(axis=1), shared.sum(axis=1), min_shared)
        else:
            fitted = _kappa_weights(confusion.sum(axis=1) - confusion[:, fold],
                                    shared.sum(axis=1) - shared[:, fold], min_shared)
        if fitted is not None:
            weights[fold + 1] = fitted
    return ensemble_votes(judges, [weights[f + 1, i] for i, f in enumerate(vote_folds)])
