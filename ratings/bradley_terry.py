"""Bradley–Terry maximum likelihood on aggregated win matrices, with a batched multinomial bootstrap.

Model (Bradley & Terry 1952, Biometrika 39:324; Zermelo 1929)
    P(i beats j) = π_i / (π_i + π_j) = σ(θ_i − θ_j),   θ_i = log π_i,   σ(x) = 1 / (1 + e^(−x)).

Likelihood on a win matrix ``W`` (``W[i, j]`` = wins of i over j; a tie under the "half" rules is 0.5 each way)
    ℓ(θ) = Σ_{i≠j} W_ij log σ(θ_i − θ_j) − (ridge / 2) ‖θ‖²
    g_i  = ∂ℓ/∂θ_i = Σ_j [W_ij − N_ij p_ij] − ridge θ_i,                 N = W + Wᵀ,  p_ij = σ(θ_i − θ_j)
    H    = −∂²ℓ = L + ridge I,  L_ii = Σ_j N_ij p_ij p_ji,  L_ij = −N_ij p_ij p_ji   (a weighted graph Laplacian)

Fit: Newton's method θ ← θ + H⁻¹ g (the IRLS of a logistic regression without intercept, as in Chatbot Arena's
fit; Chiang et al. 2024, "Chatbot Arena", §4 and App. A). The likelihood only sees differences θ_i − θ_j, so
``H`` is singular along the all-ones vector when ``ridge = 0``; each step solves with ``H + c·11ᵀ`` instead, which
leaves the step orthogonal to 11ᵀ unchanged, and θ is re-centred to mean 0 after every step (the ridge optimum
has mean 0 as well, since Σ_i g_i = −ridge Σ_i θ_i). Steps are capped at ``MAX_STEP`` nats per model so that a
model whose MLE is infinite drifts instead of overflowing.

Existence (Ford 1957, Amer. Math. Monthly 64:28; Hunter 2004, Ann. Statist. 32:384, Assumption 1): the MLE is
finite iff, for every split of the models into two groups, some model of each group beat some model of the other,
i.e. the directed graph with an edge i → j when W_ij > 0 is strongly connected. ``ridge > 0`` (a Gaussian prior
θ_i ~ N(0, 1/ridge)) always gives finite ratings.

Elo scale (Elo 1978; Chatbot Arena): R_i = base + scale · θ_i / ln 10, so ``scale`` points are a factor 10 of odds:
P(i beats j) = 1 / (1 + 10^((R_j − R_i) / scale)).

Bootstrap (Efron & Tibshirani 1993, ch. 13, percentile interval): resampling the N votes of the fit with
replacement is the same as redrawing the cell counts of :class:`ratings.votes.FitCells` from
Multinomial(N, counts / N), because only those counts enter ℓ. All rounds are redrawn with one
``Generator.multinomial`` call and fitted together by a batched Newton started at the full-data fit.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from ratings.votes import FitCells, fit_cells

MAX_STEP = 4.0
LN10 = math.log(10.0)


class ConvergenceError(RuntimeError):
    """The Bradley–Terry Newton iteration did not converge (its message says what to change)."""


def newton_bt(
    wins: np.ndarray,
    *,
    ridge: float = 0.0,
    theta0: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
    independent_rows: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximise ℓ(θ) (module docstring) for one win matrix (n×n) or a batch (B×n×n).

    Returns ``(theta, converged)``: natural-log strengths with mean 0 per fit (shape n or B×n) and a boolean per fit.
    A fit is converged when its Newton step is below ``tol`` nats for every model. Fits whose MLE does not exist
    (see the module docstring) do not converge when ``ridge = 0``: their θ keeps growing by up to MAX_STEP per step.

    ``independent_rows``: each fit of a batch comes out the same to the last bit whatever other fits share the batch
    (so fits can be kept and reused one by one, :func:`ratings.agreement.consensus_spearman`). numpy sums one fit's
    Hessian diagonal in another order when it is the only fit still iterating than when others are (a batch's
    diagonal is a strided view); with this flag a lone fit iterates beside a copy of itself.
    """
    wins = np.asarray(wins, dtype=np.float64)
    single = wins.ndim == 2
    batch = wins[None] if single else wins
    rounds, n, _ = batch.shape
    theta = np.zeros((rounds, n)) if theta0 is None else np.array(np.broadcast_to(theta0, (rounds, n)), dtype=float)
    converged = np.zeros(rounds, dtype=bool)
    if n <= 1 or rounds == 0:
        converged[:] = True
        return (theta[0], converged[0]) if single else (theta, converged)
    totals = batch + batch.transpose(0, 2, 1)
    row_wins = batch.sum(axis=2)
    diag = np.arange(n)
    active = np.arange(rounds)
    for _ in range(max_iter):
        rows = np.repeat(active, 2) if independent_rows and len(active) == 1 else active
        t = theta[rows]
        tot = totals[rows]
        p = expit(t[:, :, None] - t[:, None, :])
        grad = row_wins[rows] - np.einsum("bij,bij->bi", tot, p) - ridge * t
        weight = tot * p * p.transpose(0, 2, 1)
        hess = -weight
        hess[:, diag, diag] = weight.sum(axis=2) + ridge
        shift = hess[:, diag, diag].mean(axis=1) / n + 1e-300
        hess += shift[:, None, None]  # + c·11ᵀ: the step orthogonal to 11ᵀ is unchanged
        hess[:, diag, diag] *= 1.0 + 1e-12
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        size = np.abs(step).max(axis=1)
        step *= np.minimum(1.0, MAX_STEP / np.maximum(size, 1e-300))[:, None]
        t = t + step
        t -= t.mean(axis=1, keepdims=True)
        t, size = t[:len(active)], size[:len(active)]
        theta[active] = t
        done = size < tol
        converged[active[done]] = True
        active = active[~done]
        if len(active) == 0:
            break
    return (theta[0], converged[0]) if single else (theta, converged)


def elo_scale(
    theta: np.ndarray,
    *,
    scale: float = 400.0,
    base: float = 1000.0,
    anchor_index: int | None = None,
    anchor_rating: float | None = None,
) -> np.ndarray:
    """R = base + scale·θ/ln 10 with mean ``base``; or, with an anchor, shifted so that R[anchor_index] = rating.

    Works on one fit (n) or a batch (B×n), anchoring each row separately.
    """
    ratings = base + scale * (theta - np.mean(theta, axis=-1, keepdims=True)) / LN10
    if anchor_index is not None:
        ratings = ratings + (anchor_rating - ratings[..., [anchor_index]])
    return ratings


def bootstrap_counts(count: np.ndarray, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """``rounds`` redraws of the cell counts from Multinomial(N, count / N), N = count.sum() (rounds × K)."""
    count = np.asarray(count, dtype=np.int64)
    total = int(count.sum())
    if rounds <= 0 or total == 0:
        return np.zeros((max(rounds, 0), len(count)), dtype=np.int64)
    return rng.multinomial(total, count / total, size=rounds)


def batched_win_matrices(cells: FitCells, n_models: int, counts: np.ndarray) -> np.ndarray:
    """Win matrices (B×n×n) of a batch of redrawn cell counts (B×K), through one sparse product."""
    k = len(cells.i)
    rows = np.concatenate([np.arange(k), np.arange(k)])
    cols = np.concatenate([cells.i * n_models + cells.j, cells.j * n_models + cells.i])
    vals = np.concatenate([cells.score, 1.0 - cells.score])
    mapping = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(k, n_models * n_models))
    flat = (mapping.T @ np.asarray(counts, dtype=np.float64).T).T
    return np.asarray(flat).reshape(len(counts), n_models, n_models)


def components(wins: np.ndarray, strong: bool) -> tuple[int, np.ndarray]:
    """Connected components of the comparison graph (``strong``: of the directed graph i → j when i beat j)."""
    graph = scipy.sparse.csr_matrix(np.asarray(wins) > 0)
    return connected_components(graph, directed=strong, connection="strong" if strong else "weak")


@dataclass(frozen=True)
class BTFit:
    """A Bradley–Terry fit on the Elo scale.

    ``ratings[i]`` is the fit on all data (not the bootstrap median); ``samples[r, i]`` the fit of bootstrap round r
    (NaN where that round had no finite MLE, only possible with ridge = 0). ``fitted`` marks the models with at
    least one vote in the fit; the others have NaN ratings. ``components`` labels the connected groups of the
    comparison graph among fitted models (-1 for the others): ratings are comparable only within one group.
    """

    ratings: np.ndarray
    samples: np.ndarray
    theta: np.ndarray
    fitted: np.ndarray
    components: np.ndarray
    fit_votes: np.ndarray
    tie_policy: str
    ridge: float

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Percentile bootstrap interval (Efron & Tibshirani 1993, §13.3); the fit itself when there are no rounds."""
        if self.samples.shape[0] == 0:
            return self.ratings.copy(), self.ratings.copy()
        alpha = (1.0 - level) / 2.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns for unfitted models
            lower, upper = np.nanquantile(self.samples, [alpha, 1.0 - alpha], axis=0)
        return lower, upper


def _existence_message(models: list[str], wins: np.ndarray) -> str:
    n_weak, weak = components(wins, strong=False)
    if n_weak > 1:
        groups = "; ".join(", ".join(models[i] for i in np.flatnonzero(weak == c)) for c in range(n_weak))
        return (
            f"The comparison graph splits into {n_weak} groups that never met ({groups}), so their ratings cannot "
            "be compared and the unregularised MLE is not unique. Rate each group separately (slice the votes) or "
            "pass ridge > 0 (e.g. ridge=1e-6), which centres every group on the base rating."
        )
    beaten = wins.sum(axis=0)
    winners = [models[i] for i in range(len(models)) if beaten[i] == 0]
    losers = [models[i] for i in range(len(models)) if wins[i].sum() == 0]
    who = ""
    if winners:
        who = f" {', '.join(winners)} never lost a vote in the fit."
    elif losers:
        who = f" {', '.join(losers)} never won a vote in the fit."
    return (
        "The Bradley–Terry MLE does not exist for these votes: some group of models won (or lost) every vote "
        f"against the others (Ford 1957; Hunter 2004).{who} Pass ridge > 0 (e.g. ridge=1e-6) for finite "
        "ratings, or collect more votes."
    )


def fit_bradley_terry(
    counts: np.ndarray,
    *,
    models: list[str] | None = None,
    tie_policy: str = "drop",
    rounds: int = 1000,
    seed: int | np.random.Generator = 0,
    scale: float = 400.0,
    base: float = 1000.0,
    anchor: tuple[int, float] | None = None,
    ridge: float = 1e-6,
) -> BTFit:
    """Fit Bradley–Terry to a count tensor (``ratings.votes.count_tensor``) and bootstrap it.

    ``anchor=(index, rating)`` pins model ``index`` to ``rating`` in the fit and in every round (its interval is then
    a point); otherwise the fitted models have mean ``base``. ``ridge = 0`` gives the pure MLE and raises a
    ValueError when it does not exist; rounds whose resample has no finite MLE are then left out of the interval
    with a warning. ``seed`` is an int or a ``numpy.random.Generator``.
    """
    if ridge < 0 or not np.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}; use 0 for the pure MLE.")
    if rounds < 0:
        raise ValueError(f"rounds must be >= 0 bootstrap rounds, got {rounds}.")
    n = counts.shape[0]
    models = [str(i) for i in range(n)] if models is None else list(models)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    cells = fit_cells(counts, tie_policy)
    fit_votes = np.bincount(cells.i, cells.count, minlength=n) + np.bincount(cells.j, cells.count, minlength=n)
    fitted = fit_votes > 0
    index = np.flatnonzero(fitted)
    m = len(index)
    remap = np.full(n, -1)
    remap[index] = np.arange(m)
    sub = FitCells(remap[cells.i], remap[cells.j], cells.score, cells.count)
    wins = sub.win_matrix(m)
    labels = np.full(n, -1)
    if m:
        labels[index] = components(wins, strong=False)[1]
    if anchor is not None and not fitted[anchor[0]]:
        choices = ", ".join(models[i] for i in index) or "none: there are no votes in the fit"
        raise ValueError(f"Cannot anchor on {models[anchor[0]]!r}: it has no votes in the fit. Pick one of: {choices}.")
    if m > 1 and ridge == 0 and components(wins, strong=True)[0] > 1:
        raise ValueError(_existence_message([models[i] for i in index], wins))
    if m > 1 and ridge > 0 and labels.max() > 0:
        warnings.warn(
            f"The comparison graph has {labels.max() + 1} groups of models that never met; ratings are comparable "
            "only within a group (the ridge centres each group on the base rating). Slice the votes to one group.",
            stacklevel=2,
        )
    theta, ok = newton_bt(wins, ridge=ridge)
    if not ok:
        raise ConvergenceError(
            "The Bradley–Terry fit did not converge in 100 Newton steps. Pass a larger ridge (e.g. ridge=1e-3) "
            "or check the votes for models that won or lost almost everything."
        )
    redrawn = bootstrap_counts(sub.count, rounds, rng)
    if rounds and m:
        boot_theta, boot_ok = newton_bt(batched_win_matrices(sub, m, redrawn), ridge=ridge, theta0=theta)
    else:
        boot_theta, boot_ok = np.zeros((rounds, m)), np.ones(rounds, dtype=bool)
    if not boot_ok.all():
        warnings.warn(
            f"{int((~boot_ok).sum())} of {rounds} bootstrap rounds have no finite MLE (a resample in which some "
            "model won or lost everything); the intervals use the other rounds. Pass ridge > 0 to keep them.",
            stacklevel=2,
        )
        boot_theta = np.where(boot_ok[:, None], boot_theta, np.nan)
    local_anchor = None if anchor is None else int(remap[anchor[0]])
    anchor_rating = None if anchor is None else float(anchor[1])
    ratings = np.full(n, np.nan)
    samples = np.full((rounds, n), np.nan)
    full_theta = np.full(n, np.nan)
    if m:
        ratings[index] = elo_scale(theta, scale=scale, base=base, anchor_index=local_anchor,
                                   anchor_rating=anchor_rating)
        samples[:, index] = elo_scale(boot_theta, scale=scale, base=base, anchor_index=local_anchor,
                                      anchor_rating=anchor_rating)
        full_theta[index] = theta
    return BTFit(ratings, samples, full_theta, fitted, labels, fit_votes.astype(np.int64), tie_policy, ridge)


def predicted_win_rate(ratings: np.ndarray, scale: float = 400.0) -> np.ndarray:
    """P[i, j] = 1 / (1 + 10^((R_j − R_i) / scale)): the Bradley–Terry probability that i beats j."""
    r = np.asarray(ratings, dtype=np.float64)
    return 1.0 / (1.0 + np.power(10.0, (r[None, :] - r[:, None]) / scale))


def rank_by_ci(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rank that respects the intervals: 1 + the number of models whose lower bound is above this one's upper bound.

    Models that overlap share a rank (Chatbot Arena's leaderboard rule). NaN bounds give a NaN rank.
    """
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    valid = ~np.isnan(lower)
    above = (lower[None, valid] > upper[:, None]).sum(axis=1)
    return np.where(np.isnan(upper), np.nan, 1.0 + above)
