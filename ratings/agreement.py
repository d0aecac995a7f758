"""Agreement between rankings, between human and judge votes on the same battles, and between annotators.

Orientation: a battle's ``pair_key`` names the prompt and the two images whatever their order, but ``outcome`` is
relative to the displayed positions. Before comparing votes on the same ``pair_key`` every outcome is re-oriented
so that "A" means *the model whose name sorts first won* (swap A and B when ``model_a > model_b``; ties and
both-bad stay as they are).

Formulas
    Spearman ρ and Kendall τ-b with their p-values: ``scipy.stats.spearmanr`` / ``kendalltau`` (both correct for
    tied values; Kendall 1945, Biometrika 33:239 for τ-b).
    Cohen's κ (Cohen 1960, Educ. Psychol. Meas. 20:37): κ = (p_o − p_e) / (1 − p_e), with p_o = Σ_k C_kk / n the raw
    agreement and p_e = Σ_k C_k· C_·k / n² the agreement expected from the two raters' marginals.
    Fleiss' κ for a varying number of raters per item (Fleiss 1971, Psychol. Bull. 76:378): with n_ik raters
    putting item i in category k and n_i = Σ_k n_ik,  P_i = Σ_k n_ik (n_ik − 1) / (n_i (n_i − 1)),
    P̄ = mean_i P_i (the pairwise agreement),  p_k = Σ_i n_ik / Σ_i n_i,  P_e = Σ_k p_k²,  κ = (P̄ − P_e) / (1 − P_e).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.stats

from ratings.bradley_terry import fit_bradley_terry
from ratings.votes import OUTCOMES, check_votes, count_tensor, encode_votes

_SWAP = np.array([1, 0, 2, 3])


def rank_correlation(a: Mapping[str, float], b: Mapping[str, float]) -> dict:
    """Spearman and Kendall (τ-b) correlation of two {model: score} mappings over the models they share.

    Returns ``{"spearman", "spearman_p", "kendall", "kendall_p", "n"}``; the coefficients are NaN when fewer than two
    models are shared or one side is constant. NaN scores are left out.
    """
    common = [m for m in a if m in b and a[m] == a[m] and b[m] == b[m]]
    result = {"spearman": np.nan, "spearman_p": np.nan, "kendall": np.nan, "kendall_p": np.nan, "n": len(common)}
    if len(common) < 2:
        return result
    x = np.array([float(a[m]) for m in common])
    y = np.array([float(b[m]) for m in common])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN, which we report as is
        spearman = scipy.stats.spearmanr(x, y)
        kendall = scipy.stats.kendalltau(x, y)
    result.update(spearman=float(spearman.statistic), spearman_p=float(spearman.pvalue),
                  kendall=float(kendall.statistic), kendall_p=float(kendall.pvalue))
    return result


def cohen_kappa(confusion: np.ndarray | pd.DataFrame) -> float:
    """Cohen's κ of a square confusion matrix (module docstring); NaN when it is empty or p_e = 1."""
    c = np.asarray(confusion, dtype=np.float64)
    n = c.sum()
    if n == 0:
        return float("nan")
    p_o = np.trace(c) / n
    p_e = float((c.sum(axis=1) * c.sum(axis=0)).sum() / n**2)
    if p_e >= 1.0:
        return float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def oriented_outcomes(votes: pd.DataFrame) -> np.ndarray:
    """Outcome codes (indices into OUTCOMES) re-oriented so that "A" means the first model by name won."""
    encoded = encode_votes(votes)
    swap = encoded.model_a > encoded.model_b  # indices follow sorted names
    return np.where(swap, _SWAP[encoded.outcome], encoded.outcome)


def _need(votes: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    check_votes(votes)
    missing = [c for c in columns if c not in votes.columns]
    if missing:
        raise ValueError(
            f"{what} needs the column(s) {', '.join(missing)} in the vote table (pair_key: the same prompt and the "
            "same two images in either order; voter_kind: 'human' or 'judge'). Add them, e.g. from "
            "arena.export.votes_frame."
        )


def _keyed(votes: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({"pair_key": votes["pair_key"].to_numpy()}, index=votes.index)
    frame["outcome"] = oriented_outcomes(votes) if len(votes) else np.zeros(0, dtype=int)
    return frame


def human_judge_agreement(votes: pd.DataFrame) -> dict:
    """Agreement of human and judge votes on the same battles (same ``pair_key``).

    Every human vote is paired with every judge vote on the same ``pair_key`` (after re-orienting both, see the
    module docstring). Returns ``{"confusion", "agreement", "kappa", "n"}``: ``confusion`` is a 4×4 DataFrame of
    counts (rows: human outcome, columns: judge outcome, both in OUTCOMES order, oriented), ``agreement`` the share
    of pairs on the diagonal, ``kappa`` Cohen's κ, ``n`` the number of pairs (NaN agreement and κ when 0).
    """
    _need(votes, ("pair_key", "voter_kind"), "human_judge_agreement")
    keyed = _keyed(votes)
    kind = votes["voter_kind"].to_numpy()
    matched = keyed[kind == "human"].merge(keyed[kind == "judge"], on="pair_key", suffixes=("_human", "_judge"))
    confusion = np.zeros((len(OUTCOMES), len(OUTCOMES)), dtype=np.int64)
    np.add.at(confusion, (matched["outcome_human"].to_numpy(int), matched["outcome_judge"].to_numpy(int)), 1)
    frame = pd.DataFrame(confusion, index=pd.Index(OUTCOMES, name="human"), columns=pd.Index(OUTCOMES, name="judge"))
    n = int(confusion.sum())
    agreement = float(np.trace(confusion) / n) if n else float("nan")
    return {"confusion": frame, "agreement": agreement, "kappa": cohen_kappa(confusion), "n": n}


def fleiss_kappa(item_counts: np.ndarray) -> tuple[float, float]:
    """(P̄, κ) of Fleiss 1971 for an items × categories count matrix; items with fewer than two ratings are skipped."""
    counts = np.asarray(item_counts, dtype=np.float64)
    raters = counts.sum(axis=1)
    counts, raters = counts[raters >= 2], raters[raters >= 2]
    if len(counts) == 0:
        return float("nan"), float("nan")
    p_item = ((counts * (counts - 1)).sum(axis=1)) / (raters * (raters - 1))
    p_bar = float(p_item.mean())
    p_cat = counts.sum(axis=0) / raters.sum()
    p_e = float((p_cat**2).sum())
    kappa = (p_bar - p_e) / (1.0 - p_e) if p_e < 1.0 else float("nan")
    return p_bar, float(kappa)


def inter_annotator_agreement(votes: pd.DataFrame, *, voter_kind: str | None = "human") -> dict:
    """Agreement between annotators on battles (``pair_key``) that several of them voted on.

    Only votes of ``voter_kind`` are used when the table has that column (None: every voter); an annotator who
    voted twice on a battle counts with the last vote. Returns:

    - ``n_items``: battles with at least two annotators; ``n_pairs``: pairs of annotators' votes on them;
    - ``agreement``: mean pairwise agreement P̄ and ``fleiss_kappa`` (module docstring);
    - ``pairs``: DataFrame ``voter_1, voter_2, n, agreement, kappa`` (Cohen's κ) per pair of annotators;
    - ``rating_spearman``: mean Spearman ρ, over pairs of annotators, between the Bradley–Terry ratings fitted on
      each annotator's own votes (ties dropped, no bootstrap), for pairs sharing at least 3 rated models
      (the taxonomy benchmark reports this as inter-annotator Spearman); NaN if no pair qualifies.
    """
    _need(votes, ("pair_key", "voter"), "inter_annotator_agreement")
    if voter_kind is not None and "voter_kind" in votes.columns:
        votes = votes[votes["voter_kind"] == voter_kind]
    keyed = _keyed(votes)
    keyed["voter"] = votes["voter"].to_numpy()
    keyed = keyed.drop_duplicates(["pair_key", "voter"], keep="last")
    item, _ = pd.factorize(keyed["pair_key"])
    per_item = np.zeros((item.max() + 1 if len(item) else 0, len(OUTCOMES)), dtype=np.int64)
    np.add.at(per_item, (item, keyed["outcome"].to_numpy(int)), 1)
    shared = per_item[per_item.sum(axis=1) >= 2]
    agreement, kappa = fleiss_kappa(shared)
    pairs = keyed.merge(keyed, on="pair_key", suffixes=("_1", "_2"))
    pairs = pairs[pairs["voter_1"].astype(str) < pairs["voter_2"].astype(str)]
    rows = []
    for (v1, v2), group in pairs.groupby(["voter_1", "voter_2"], sort=True):
        confusion = np.zeros((len(OUTCOMES), len(OUTCOMES)))
        np.add.at(confusion, (group["outcome_1"].to_numpy(int), group["outcome_2"].to_numpy(int)), 1)
        rows.append({"voter_1": v1, "voter_2": v2, "n": len(group),
                     "agreement": float(np.trace(confusion) / len(group)), "kappa": cohen_kappa(confusion)})
    pair_table = pd.DataFrame(rows, columns=["voter_1", "voter_2", "n", "agreement", "kappa"])
    return {
        "n_items": int(len(shared)),
        "n_pairs": int(len(pairs)),
        "agreement": agreement,
        "fleiss_kappa": kappa,
        "pairs": pair_table,
        "rating_spearman": _rating_spearman(votes),
    }


def _rating_spearman(votes: pd.DataFrame) -> float:
    ratings = {}
    for voter, own in votes.groupby("voter", sort=True):
        encoded = encode_votes(own)
        counts = count_tensor(encoded.model_a, encoded.model_b, encoded.outcome, encoded.n_models)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one annotator's graph may be split; each part is still ranked inside
            fit = fit_bradley_terry(counts, models=list(encoded.models), tie_policy="drop", rounds=0)
        ratings[voter] = {m: r for m, r in zip(encoded.models, fit.ratings) if r == r}
    values = []
    for v1, v2 in itertools.combinations(sorted(ratings, key=str), 2):
        result = rank_correlation(ratings[v1], ratings[v2])
        if result["n"] >= 3 and result["spearman"] == result["spearman"]:
            values.append(result["spearman"])
    return float(np.mean(values)) if values else float("nan")
