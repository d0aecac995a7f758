"""The vote table at the edge: validation, model names → indices, count tensors, tie policies and slicing.

Everything after this module works on integer model indices ``0..n-1`` and numpy count arrays (choix style); names
only come back in the tables that :mod:`ratings.leaderboard` returns.

The count tensor
    ``counts[i, j, o]`` is the number of votes that showed model ``i`` in position A, model ``j`` in position B and
    ended with outcome ``o`` (``OUTCOMES[o]``: 0 = "A", 1 = "B", 2 = "tie", 3 = "both_bad"). It is built with a
    single ``np.bincount`` and keeps positions, so the same tensor serves the ratings and the position-bias checks.

Tie policies (how "tie" and "both_bad" enter the Bradley–Terry fit)
    ``"drop"``
        Ties and both-bad leave the fit; only decisive votes count (the taxonomy benchmark's rule, T1).
    ``"half"``
        Every tie and every both-bad vote is half a win to each side (Chatbot Arena; Chiang et al. 2024, §4; the
        same likelihood as FastChat's ``compute_elo_mle_with_tie``, which duplicates each battle and turns a tie into
        one win each way).
    ``"half_ties_drop_both_bad"``
        Ties are half a win to each side; both-bad votes leave the fit. A tie says "equally good", both-bad says
        "neither is usable", which carries no information about which image is better.

    The per-model both-bad rate is reported by :func:`ratings.fit_leaderboard` under every policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

OUTCOMES: tuple[str, ...] = ("A", "B", "tie", "both_bad")
A, B, TIE, BOTH_BAD = range(4)
TIE_POLICIES: tuple[str, ...] = ("drop", "half", "half_ties_drop_both_bad")
REQUIRED_COLUMNS: tuple[str, ...] = ("model_a", "model_b", "outcome")
SLICE_COLUMNS: tuple[str, ...] = ("suite", "subset", "variant", "category", "voter_kind", "voter")


@dataclass(frozen=True)
class EncodedVotes:
    """Votes as integer arrays: ``model_a[k]``, ``model_b[k]`` index into ``models``; ``outcome[k]`` into OUTCOMES.

    ``flagged[k]`` (None: no vote is) marks a vote an import kept with an anomaly (:mod:`arena.vote_import`: a
    self-battle, ``model_a[k] == model_b[k]``, or a record its source's file marks); each rating protocol treats
    flagged votes as its source's code did (:attr:`ratings.protocols.base.RatingProtocol.flagged_rule`)."""

    models: tuple[str, ...]
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    flagged: np.ndarray | None = None
    # the four-image votes beside these (ratings.kwise.KwiseVotes), read by a protocol that declares
    # reads_four_image (ratings.protocols.kwise_rank_breaking); every other protocol ignores them
    kwise: object | None = None

    def flagged_mask(self) -> np.ndarray:
        """Votes flagged, or self-battles (a self-battle is an anomaly whether or not an import flagged it)."""
        mask = np.asarray(self.model_a) == np.asarray(self.model_b)
        return mask if self.flagged is None else mask | np.asarray(self.flagged, dtype=bool)

    @property
    def n_models(self) -> int:
        return len(self.models)

    def __len__(self) -> int:
        return len(self.outcome)


def check_tie_policy(tie_policy: str) -> str:
    if tie_policy not in TIE_POLICIES:
        raise ValueError(
            f"Unknown tie_policy {tie_policy!r}: choose one of {', '.join(map(repr, TIE_POLICIES))} "
            "(see ratings.votes for what each does)."
        )
    return tie_policy


def check_votes(votes: pd.DataFrame) -> None:
    """Raise a ValueError naming the fix when ``votes`` does not follow the vote format of :mod:`ratings`."""
    if not isinstance(votes, pd.DataFrame):
        raise TypeError(f"votes must be a pandas DataFrame (one row per vote), not {type(votes).__name__}.")
    missing = [c for c in REQUIRED_COLUMNS if c not in votes.columns]
    if missing:
        raise ValueError(
            f"The vote table lacks column(s) {', '.join(missing)}: it needs model_a, model_b (models as displayed, "
            "left and right) and outcome ('A', 'B', 'tie' or 'both_bad'); see the ratings package docstring."
        )


def _factorize_outcomes(values: pd.Series) -> np.ndarray:
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    lookup = {name: index for index, name in enumerate(OUTCOMES)}
    bad = [u for u in uniques if u not in lookup]
    if bad or (codes < 0).any():
        shown = ", ".join(repr(u) for u in bad[:5]) or "missing values"
        raise ValueError(
            f"Unknown outcome value(s) {shown}: every vote's outcome must be one of 'A', 'B', 'tie', 'both_bad' "
            "(relative to the displayed positions). Map or drop the other rows first."
        )
    table = np.array([lookup[u] for u in uniques], dtype=np.int8)
    return table[codes]


def encode_votes(votes: pd.DataFrame, models: Sequence[str] | None = None, *,
                 self_battles: bool = False) -> EncodedVotes:
    """Map model names to indices (sorted names unless ``models`` fixes the order) and outcomes to codes 0..3.

    A vote of a model against itself is refused unless ``self_battles`` (a rating protocol treats one as its source
    did); a ``flag`` column (non-empty text: the vote is anomalous) becomes :attr:`EncodedVotes.flagged`."""
    check_votes(votes)
    codes_a, uniques_a = pd.factorize(votes["model_a"], use_na_sentinel=True)
    codes_b, uniques_b = pd.factorize(votes["model_b"], use_na_sentinel=True)
    if (codes_a < 0).any() or (codes_b < 0).any():
        raise ValueError("Some votes have no model_a or model_b: drop those rows before rating.")
    seen = sorted(set(map(str, uniques_a)) | set(map(str, uniques_b)))
    if models is None:
        models = seen
    else:
        models = [str(m) for m in models]
        unknown = sorted(set(seen) - set(models))
        if unknown:
            raise ValueError(f"Votes mention models not in `models`: {', '.join(unknown[:5])}; add them to the list.")
    index = {name: i for i, name in enumerate(models)}
    map_a = np.array([index[str(u)] for u in uniques_a], dtype=np.intp)
    map_b = np.array([index[str(u)] for u in uniques_b], dtype=np.intp)
    model_a = map_a[codes_a] if len(codes_a) else np.zeros(0, dtype=np.intp)
    model_b = map_b[codes_b] if len(codes_b) else np.zeros(0, dtype=np.intp)
    same = model_a == model_b
    if same.any() and not self_battles:
        row = votes.index[np.flatnonzero(same)[0]]
        raise ValueError(
            f"{int(same.sum())} vote(s) compare a model with itself (first at index {row!r}, model "
            f"{models[model_a[same][0]]!r}); a self-battle says nothing about ratings: drop those rows."
        )
    outcome = _factorize_outcomes(votes["outcome"]) if len(votes) else np.zeros(0, dtype=np.int8)
    flagged = None
    if "flag" in votes.columns:
        flagged = votes["flag"].fillna("").astype(str).str.len().to_numpy() > 0
    return EncodedVotes(tuple(models), model_a, model_b, outcome, flagged)


def count_tensor(model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, n_models: int) -> np.ndarray:
    """``counts[i, j, o]``: votes with model i in position A, model j in position B and outcome o (int64, n×n×4)."""
    key = (np.asarray(model_a, dtype=np.int64) * n_models + np.asarray(model_b)) * len(OUTCOMES) + outcome
    flat = np.bincount(key, minlength=n_models * n_models * len(OUTCOMES))
    return flat.reshape(n_models, n_models, len(OUTCOMES))


def vote_counts(votes: pd.DataFrame, models: Sequence[str] | None = None) -> tuple[tuple[str, ...], np.ndarray]:
    """The model names and the count tensor of a vote table (see the module docstring)."""
    encoded = encode_votes(votes, models)
    return encoded.models, count_tensor(encoded.model_a, encoded.model_b, encoded.outcome, encoded.n_models)


def pair_outcomes(counts: np.ndarray) -> np.ndarray:
    """Fold positions away: ``r[i, j, 0]`` = votes i won against j, ``r[i, j, 1]`` = ties, ``r[i, j, 2]`` = both-bad.

    ``r[:, :, 0]`` is the (not symmetric) win matrix; ties and both-bad are symmetric.
    """
    wins = counts[:, :, A] + counts[:, :, B].T
    ties = counts[:, :, TIE] + counts[:, :, TIE].T
    both_bad = counts[:, :, BOTH_BAD] + counts[:, :, BOTH_BAD].T
    return np.stack([wins, ties, both_bad], axis=2)


@dataclass(frozen=True)
class FitCells:
    """The votes that enter a Bradley–Terry fit, grouped into cells.

    Cell ``k`` holds ``count[k]`` votes between models ``i[k]`` and ``j[k]`` in which ``i[k]`` scored ``score[k]``
    (1 = win, 0.5 = tie) and ``j[k]`` scored ``1 - score[k]``. Redrawing ``count`` from a multinomial with the same
    total is the same as resampling the votes with replacement, because only these counts enter the likelihood.
    """

    i: np.ndarray
    j: np.ndarray
    score: np.ndarray
    count: np.ndarray

    def win_matrix(self, n_models: int, count: np.ndarray | None = None) -> np.ndarray:
        """``W[a, b]``: (fractional) wins of a over b, from ``self.count`` or another count vector of the same cells.

        For a batch of redrawn counts (B×K) see :func:`ratings.bradley_terry.batched_win_matrices`.
        """
        count = np.asarray(self.count if count is None else count, dtype=np.float64)
        size = n_models * n_models
        wins = np.bincount(self.i * n_models + self.j, count * self.score, minlength=size)
        wins += np.bincount(self.j * n_models + self.i, count * (1.0 - self.score), minlength=size)
        return wins.reshape(n_models, n_models)


def fit_cells(counts: np.ndarray, tie_policy: str) -> FitCells:
    """Group the votes that the tie policy keeps into cells (see :class:`FitCells`); empty cells are left out."""
    check_tie_policy(tie_policy)
    folded = pair_outcomes(counts)
    n = counts.shape[0]
    upper_i, upper_j = np.triu_indices(n, k=1)
    wins_ij = folded[upper_i, upper_j, 0]
    wins_ji = folded[upper_j, upper_i, 0]
    if tie_policy == "drop":
        ties = np.zeros_like(wins_ij)
    elif tie_policy == "half":
        ties = folded[upper_i, upper_j, 1] + folded[upper_i, upper_j, 2]
    else:
        ties = folded[upper_i, upper_j, 1]
    i = np.concatenate([upper_i, upper_j, upper_i])
    j = np.concatenate([upper_j, upper_i, upper_j])
    score = np.concatenate([np.ones(len(upper_i)), np.ones(len(upper_i)), np.full(len(upper_i), 0.5)])
    count = np.concatenate([wins_ij, wins_ji, ties])
    keep = count > 0
    return FitCells(i[keep], j[keep], score[keep], count[keep].astype(np.int64))


def model_totals(counts: np.ndarray) -> pd.DataFrame:
    """Per model (row = index): votes, wins, losses, ties and both_bad, whatever the position it was shown in."""
    folded = pair_outcomes(counts)
    wins = folded[:, :, 0].sum(axis=1)
    losses = folded[:, :, 0].sum(axis=0)
    ties = folded[:, :, 1].sum(axis=1)
    both_bad = folded[:, :, 2].sum(axis=1)
    return pd.DataFrame(
        {"votes": wins + losses + ties + both_bad, "wins": wins, "losses": losses, "ties": ties, "both_bad": both_bad}
    )


def _as_list(value: object) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _category_list(value: object) -> list:
    """A ``categories`` cell as a list: a list or array as it is, JSON list text parsed, anything else none."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else []


def _in_categories(votes: pd.DataFrame, wanted: set) -> np.ndarray:
    """Rows whose ``category`` is wanted or whose ``categories`` list (an item in several) holds a wanted one."""
    single = votes["category"].isin(wanted).to_numpy() if "category" in votes.columns else np.zeros(len(votes), bool)
    listed = np.fromiter((not wanted.isdisjoint(_category_list(v)) for v in votes["categories"]), bool, len(votes))
    return single | listed


def slice_votes(
    votes: pd.DataFrame,
    *,
    suite: object = None,
    subset: object = None,
    variant: object = None,
    category: object = None,
    voter_kind: object = None,
    voter: object = None,
    include_excluded: bool = False,
) -> pd.DataFrame:
    """The votes that match every given filter (each a single value or a list of accepted values; None = any).

    ``category`` also matches a vote whose ``categories`` column (a list, or JSON list text, as
    :mod:`datamodel.vote_table` writes it) holds one of the values: an item may be in several categories. Votes whose
    ``excluded`` column is true are left out unless ``include_excluded``; a table without that column has nothing
    excluded. Filtering on a column the table lacks raises a ValueError, since the filter cannot apply.
    """
    check_votes(votes)
    filters = {"suite": suite, "subset": subset, "variant": variant, "category": category,
               "voter_kind": voter_kind, "voter": voter}
    mask = np.ones(len(votes), dtype=bool)
    for column, wanted in filters.items():
        if wanted is None:
            continue
        if column == "category" and "categories" in votes.columns:
            mask &= _in_categories(votes, set(_as_list(wanted)))
            continue
        if column not in votes.columns:
            raise ValueError(
                f"Cannot filter on {column}={wanted!r}: the vote table has no {column!r} column. "
                f"Add that column to the votes or leave out the {column}= filter."
            )
        mask &= votes[column].isin(_as_list(wanted)).to_numpy()
    if not include_excluded and "excluded" in votes.columns:
        mask &= ~votes["excluded"].fillna(False).astype(bool).to_numpy()
    return votes[mask]
