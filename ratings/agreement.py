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

import hashlib
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse
import scipy.stats

from ratings.bradley_terry import newton_bt
from ratings.votes import OUTCOMES, check_votes, encode_votes

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
            "datamodel.vote_table.votes_frame."
        )


def _keyed(votes: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({"pair_key": votes["pair_key"].to_numpy()}, index=votes.index)
    frame["outcome"] = oriented_outcomes(votes) if len(votes) else np.zeros(0, dtype=int)
    return frame


def agreement_summary(confusion: np.ndarray) -> dict:
    """``{"confusion", "agreement", "kappa", "n"}`` of a 4×4 human × judge confusion matrix (OUTCOMES order)."""
    confusion = np.asarray(confusion, dtype=np.int64)
    frame = pd.DataFrame(confusion, index=pd.Index(OUTCOMES, name="human"), columns=pd.Index(OUTCOMES, name="judge"))
    n = int(confusion.sum())
    agreement = float(np.trace(confusion) / n) if n else float("nan")
    return {"confusion": frame, "agreement": agreement, "kappa": cohen_kappa(confusion), "n": n}


def paired_confusion(keys_1: np.ndarray, outcomes_1: np.ndarray, keys_2: np.ndarray,
                     outcomes_2: np.ndarray) -> np.ndarray:
    """C[o₁, o₂] = Σ_key n₁(key, o₁) · n₂(key, o₂): every vote of side 1 paired with every vote of side 2 on the same
    key (outcome codes already oriented). Linear in the votes: per-key outcome counts, then one 4×K by K×4 product,
    never the list of pairs. The keys of the smaller side are numbered (a hash), the other side's looked up in them:
    a key only one side has pairs nothing."""
    if len(keys_1) < len(keys_2):
        return paired_confusion(keys_2, outcomes_2, keys_1, outcomes_1).T
    codes_2, uniques = pd.factorize(np.asarray(keys_2))
    codes_1 = pd.Index(uniques).get_indexer(np.asarray(keys_1))
    shared = codes_1 >= 0
    size = len(uniques) * len(OUTCOMES)
    side_1 = np.bincount(codes_1[shared] * len(OUTCOMES) + np.asarray(outcomes_1, dtype=np.int64)[shared],
                         minlength=size)
    side_2 = np.bincount(codes_2 * len(OUTCOMES) + np.asarray(outcomes_2, dtype=np.int64), minlength=size)
    return side_1.reshape(-1, len(OUTCOMES)).T @ side_2.reshape(-1, len(OUTCOMES))


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
    human, judge = keyed[kind == "human"], keyed[kind == "judge"]
    return agreement_summary(paired_confusion(human["pair_key"].to_numpy(), human["outcome"].to_numpy(int),
                                              judge["pair_key"].to_numpy(), judge["outcome"].to_numpy(int)))


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


PAIR_COLUMNS = ["voter_1", "voter_2", "n", "agreement", "kappa"]


def _last_vote_per_voter(items: np.ndarray, voters: np.ndarray) -> np.ndarray:
    """Row indices keeping, for each (item, voter), the last row (rows are in vote order), in order: a hash of the
    keys (pandas' ``duplicated``), a third of the time of sorting them."""
    key = items.astype(np.int64) * (int(voters.max()) + 1 if len(voters) else 1) + voters
    return np.flatnonzero(~pd.Series(key).duplicated(keep="last").to_numpy())


_PRODUCTS_PER_BLOCK = 2_000_000  # products of BᵀB at most per block (about 25 MB while they are sorted out)


def _shared_pairs(incidence: scipy.sparse.csc_matrix, min_shared: int, max_pairs: int | None, block: int = 1 << 20,
                  products_per_block: int = _PRODUCTS_PER_BLOCK):
    """(voter a, voter b, shared items) of the voter pairs sharing at least ``min_shared`` items, most shared first,
    at most ``max_pairs`` of them: BᵀB computed a block of voters at a time, keeping only the best pairs so far. A
    block holds at most ``block`` voters and at most ``products_per_block`` products (voter b's column of BᵀB costs
    Σ over b's items of the item's voters), so the memory is bounded however the votes fall, and a study with few
    voters per battle takes a few blocks rather than one per thousand voters. Only the rows above each block's last
    voter are multiplied (a pair is counted once, a < b): about 60% of the products of the whole of BᵀB."""
    incidence = incidence.astype(np.int32)  # counts: integer products are exact and lighter than floats
    per_voter = np.asarray(incidence.sum(axis=0)).ravel()
    kept = np.flatnonzero(per_voter >= min_shared)  # a voter with fewer items shares fewer with anyone
    incidence = incidence[:, kept]
    transposed = incidence.T.tocsr()
    products = np.cumsum(transposed @ np.asarray(incidence.sum(axis=1)).ravel())  # up to and with each voter
    a = b = n = np.zeros(0, dtype=np.int64)
    start = 0
    while start < len(kept):
        stop = int(np.searchsorted(products, (products[start - 1] if start else 0) + products_per_block,
                                    "right"))
        stop = min(max(stop, start + 1), start + block, len(kept))
        product = (transposed[:stop] @ incidence[:, start:stop]).tocoo()
        row, col, shared = product.row, product.col + start, product.data.astype(np.int64)
        floor = n[-1] if max_pairs is not None and len(n) == max_pairs else min_shared
        keep = (row < col) & (shared >= floor)
        a, b, n = np.concatenate([a, row[keep]]), np.concatenate([b, col[keep]]), np.concatenate([n, shared[keep]])
        rank = np.lexsort((b, a, -n))[:max_pairs]
        a, b, n = a[rank], b[rank], n[rank]
        start = stop
    return kept[a], kept[b], n


def inter_annotator_from_codes(
    items: np.ndarray, voters: np.ndarray, outcomes: np.ndarray, voter_names, *, min_shared: int = 1,
    max_pairs: int | None = None,
) -> dict:
    """The inter-annotator statistics from integer codes, one row per vote in vote order: ``items`` (the battle, as
    its pair key's code), ``voters`` (codes into ``voter_names``) and oriented ``outcomes`` (module docstring).

    Linear in the votes: an annotator who voted twice on a battle counts with the last vote; Fleiss' κ and P̄ come
    from per-battle outcome counts, ``n_pairs`` (pairs of annotators' votes on the same battle) is Σ k(k−1)/2 over
    battles with k annotators, never listed. The ``pairs`` table (Cohen's κ per pair of annotators) keeps the pairs
    that share at least ``min_shared`` battles, at most ``max_pairs`` of them (those sharing the most), found exactly
    from the battle × annotator incidence matrix B: shared battles = BᵀB, a block of annotators at a time, so the
    memory is bounded by the block however many pairs share a battle.
    """
    items, voters, outcomes = (np.asarray(a, dtype=np.int64) for a in (items, voters, outcomes))
    if len(items):
        keep = _last_vote_per_voter(items, voters)
        items, voters, outcomes = items[keep], voters[keep], outcomes[keep]
    n_items = int(items.max()) + 1 if len(items) else 0
    per_item = np.bincount(items * len(OUTCOMES) + outcomes, minlength=n_items * len(OUTCOMES))
    per_item = per_item.reshape(n_items, len(OUTCOMES))
    raters = per_item.sum(axis=1)
    shared = per_item[raters >= 2]
    agreement, kappa = fleiss_kappa(shared)
    multi = raters[items] >= 2
    rows = []
    if multi.any():
        n_voters = int(voters.max()) + 1
        coded = scipy.sparse.csc_matrix((outcomes[multi] + 1, (items[multi], voters[multi])), shape=(n_items, n_voters))
        # one entry per (item, voter) after the last-vote rule, so the incidence has the coded matrix's structure
        incidence = scipy.sparse.csc_matrix((np.ones(coded.nnz), coded.indices, coded.indptr), shape=coded.shape)
        for a, b, n in zip(*_shared_pairs(incidence, min_shared, max_pairs)):
            column_a, column_b = coded[:, [a]].tocoo(), coded[:, [b]].tocoo()
            _, at_a, at_b = np.intersect1d(column_a.row, column_b.row, assume_unique=True, return_indices=True)
            confusion = np.zeros((len(OUTCOMES), len(OUTCOMES)))
            np.add.at(confusion, (column_a.data[at_a] - 1, column_b.data[at_b] - 1), 1)
            first, second = sorted((str(voter_names[a]), str(voter_names[b])))
            if (first, second) != (str(voter_names[a]), str(voter_names[b])):
                confusion = confusion.T
            rows.append({"voter_1": first, "voter_2": second, "n": int(n),
                         "agreement": float(np.trace(confusion) / n), "kappa": cohen_kappa(confusion)})
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    if len(pairs):
        pairs = pairs.sort_values(["n", "voter_1", "voter_2"], ascending=[False, True, True]).reset_index(drop=True)
    return {
        "n_items": int(len(shared)),
        "n_pairs": int((raters * (raters - 1) // 2).sum()),
        "agreement": agreement,
        "fleiss_kappa": kappa,
        "pairs": pairs,
    }


def consensus_spearman(voters: np.ndarray, model_a: np.ndarray, model_b: np.ndarray, outcomes: np.ndarray,
                       n_models: int, *, min_models: int = 3, chunk: int = 2048,
                       own_fits: dict[bytes, np.ndarray] | None = None) -> dict:
    """Each annotator's ranking against the leave-one-out consensus: ``{"consensus_spearman", "n_annotators"}``.

    For annotator a: the Bradley–Terry ratings fitted on a's own decisive votes (ties and both-bad dropped) and
    those fitted on every other annotator's decisive votes (W − W_a, W the win matrix of all of them), then
    Spearman's ρ between the two over the models that both a and the others rated (at least ``min_models``; ρ is the
    Pearson correlation of the average ranks). Reported: the mean ρ over annotators, and how many qualified. Linear
    in the votes and the annotators: one batched Newton fit per ``chunk`` annotators
    (:func:`ratings.bradley_terry.newton_bt`, ridge 10⁻⁶ as the leaderboard's fit), where the mean pairwise ρ between
    annotators it replaces needed a fit and a correlation per pair of annotators (125,000 pairs for 500 annotators).
    Codes: ``voters`` any integers, ``model_a``/``model_b`` indices < ``n_models``, ``outcomes`` indices into
    OUTCOMES.

    ``own_fits`` (optional, kept by the caller between calls): each annotator's own fit by a digest of its win
    matrix. An annotator whose votes did not change since the last call is not refitted; the fits are computed
    row-independently (``newton_bt(independent_rows=True)``), so a kept fit is the one a fresh call computes, to the
    last bit. The dict is left holding this call's fits only.
    """
    voters, model_a, model_b, outcomes = (np.asarray(x, dtype=np.int64) for x in (voters, model_a, model_b, outcomes))
    decisive = outcomes < 2
    winner = np.where(outcomes == 0, model_a, model_b)[decisive]
    loser = np.where(outcomes == 0, model_b, model_a)[decisive]
    codes, _ = pd.factorize(voters[decisive])
    cells = n_models * n_models
    total = np.bincount(winner * n_models + loser, minlength=cells).reshape(n_models, n_models).astype(np.float64)
    consensus_start, _ = newton_bt(total, ridge=1e-6, max_iter=50)
    values: list[np.ndarray] = []
    kept: dict[bytes, np.ndarray] = {}
    for first in range(0, int(codes.max()) + 1 if len(codes) else 0, chunk):
        here = (codes >= first) & (codes < first + chunk)
        size = min(chunk, int(codes.max()) + 1 - first)
        own = np.bincount((codes[here] - first) * cells + winner[here] * n_models + loser[here],
                          minlength=size * cells).reshape(size, n_models, n_models).astype(np.float64)
        rest = total[None] - own
        # the models both a and the others rated: only there do both rankings say something
        rated = ((own + own.transpose(0, 2, 1)).sum(axis=2) > 0) & ((rest + rest.transpose(0, 2, 1)).sum(axis=2) > 0)
        qualified = rated.sum(axis=1) >= min_models
        own, rest, rated = own[qualified], rest[qualified], rated[qualified]
        if not len(own):
            continue
        own_theta = _own_fits(own, own_fits, kept)
        rest_theta, _ = newton_bt(rest, ridge=1e-6, theta0=consensus_start, max_iter=20)
        values.append(_masked_spearman(own_theta, rest_theta, rated))
    if own_fits is not None:
        own_fits.clear()
        own_fits.update(kept)
    rho = np.concatenate(values) if values else np.zeros(0)
    rho = rho[np.isfinite(rho)]
    return {"consensus_spearman": float(rho.mean()) if len(rho) else float("nan"), "n_annotators": int(len(rho))}


def _own_fits(own: np.ndarray, known: dict[bytes, np.ndarray] | None, kept: dict[bytes, np.ndarray]) -> np.ndarray:
    """The annotators' own fits (B×n) of their win matrices ``own`` (B×n×n): those in ``known`` (by the digest of
    the matrix) taken from it, the others fitted; every one recorded in ``kept``. Ranks settle long before θ
    converges for a sparse annotator whose MLE is infinite: 20 Newton steps suffice."""
    if known is None:
        return newton_bt(own, ridge=1e-6, max_iter=20, independent_rows=True)[0]
    keys = [hashlib.blake2b(matrix.tobytes(), digest_size=16).digest() for matrix in own]
    missing = [row for row, key in enumerate(keys) if key not in known and key not in kept]
    if missing:
        fitted, _ = newton_bt(own[missing], ridge=1e-6, max_iter=20, independent_rows=True)
        kept.update((keys[row], theta) for row, theta in zip(missing, fitted))
    kept.update((key, known[key]) for key in keys if key not in kept)
    return np.array([kept[key] for key in keys]).reshape(own.shape[:2])


def _masked_spearman(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row of x and y over the entries where ``mask`` holds (average ranks for ties); NaN for
    a row where either side is constant."""
    rank_x = scipy.stats.rankdata(np.where(mask, x, np.nan), axis=1, nan_policy="omit")
    rank_y = scipy.stats.rankdata(np.where(mask, y, np.nan), axis=1, nan_policy="omit")
    count = mask.sum(axis=1)
    centred_x = np.where(mask, rank_x - np.nansum(rank_x, axis=1, keepdims=True) / count[:, None], 0.0)
    centred_y = np.where(mask, rank_y - np.nansum(rank_y, axis=1, keepdims=True) / count[:, None], 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (centred_x * centred_y).sum(axis=1) / np.sqrt((centred_x**2).sum(axis=1) * (centred_y**2).sum(axis=1))


def inter_annotator_agreement(votes: pd.DataFrame, *, voter_kind: str | None = "human", min_shared: int = 1,
                              max_pairs: int | None = None) -> dict:
    """Agreement between annotators on battles (``pair_key``) that several of them voted on.

    Only votes of ``voter_kind`` are used when the table has that column (None: every voter); an annotator who
    voted twice on a battle counts with the last vote. Returns:

    - ``n_items``: battles with at least two annotators; ``n_pairs``: pairs of annotators' votes on them;
    - ``agreement``: mean pairwise agreement P̄ and ``fleiss_kappa`` (module docstring);
    - ``pairs``: DataFrame ``voter_1, voter_2, n, agreement, kappa`` (Cohen's κ) per pair of annotators sharing at
      least ``min_shared`` battles, the ``max_pairs`` sharing the most (None: all), most shared first;
    - ``consensus_spearman``, ``consensus_annotators``: the mean Spearman ρ between each annotator's own
      Bradley–Terry ranking and the one fitted on everyone else's votes, and how many annotators rated enough
      models for it (:func:`consensus_spearman`); NaN and 0 when none did.
    """
    _need(votes, ("pair_key", "voter"), "inter_annotator_agreement")
    if voter_kind is not None and "voter_kind" in votes.columns:
        votes = votes[votes["voter_kind"] == voter_kind]
    keyed = _keyed(votes)
    items, _ = pd.factorize(keyed["pair_key"])
    voters, voter_names = pd.factorize(votes["voter"].astype(str))
    result = inter_annotator_from_codes(items, voters, keyed["outcome"].to_numpy(int), list(voter_names),
                                        min_shared=min_shared, max_pairs=max_pairs)
    encoded = encode_votes(votes)
    consensus = consensus_spearman(voters, encoded.model_a, encoded.model_b, encoded.outcome, encoded.n_models)
    return {**result, "consensus_spearman": consensus["consensus_spearman"],
            "consensus_annotators": consensus["n_annotators"]}
