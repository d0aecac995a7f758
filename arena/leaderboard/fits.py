"""The human board's two additions to a protocol's fit: the human + judge board (prediction-powered inference) and
the robustness audit of its top places, with the maintainer's list of the votes the audit names.

- ``mode="ppi"`` (:func:`ppi_table`): the human ratings fitted from every human vote and the board's judge's votes,
  the judge's bias corrected on the battles both voted on (:mod:`ratings.ppi`); the arena protocol's tie policy and
  prior; the thresholds count human votes.
- The audit (:func:`board_audit`): for the top ``robustness_top`` places by rating, the fewest human votes whose
  removal changes who holds each (:mod:`ratings.robustness`); the page and the command line say it in one line
  (:func:`robustness_text`), ``python -m arena leaderboard --audit`` lists the votes with their voters
  (:func:`audit_votes`: the most recent votes of each kind the audit drops; every vote of one kind weighs the same).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from datamodel.database import Database
from datamodel.vote_arrays import VoteArrays, newest_human_votes
from ratings.ppi import NO_VOTE, ppi_fit, ppi_ratings
from ratings.protocols import DEFAULT_PROTOCOL, Arena, RatingProtocol
from ratings.protocols.base import result_table
from ratings.robustness import UNIT_SCORES, audit_top

MODES = ("human", "ppi")
MODE_TITLES = {"human": "human votes", "ppi": "human + judge votes (PPI)"}


def check_mode(mode: str, protocol: RatingProtocol) -> str:
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}: human (human votes only) or ppi (human and judge votes, the judge's "
                         "bias corrected by prediction-powered inference).")
    if mode == "ppi" and protocol.name != DEFAULT_PROTOCOL:
        raise ValueError(f"The human + judge board (mode ppi) fits the arena protocol's Bradley–Terry; the "
                         f"{protocol.name} protocol reproduces a published board from one kind of votes. Pick "
                         "--protocol arena, or --mode human.")
    return mode


def latest_per_battle(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct battle keys and, for each, the position of its last vote (the arrays are in vote order)."""
    reversed_keys = keys[::-1]
    unique, first = np.unique(reversed_keys, return_index=True)
    return unique, len(keys) - 1 - first


def ppi_table(protocol: RatingProtocol, human: VoteArrays, judged: VoteArrays, *, min_votes: int,
              provisional_votes: int, order: str) -> tuple[pd.DataFrame, dict]:
    """The human + judge board as a protocol result table (:data:`ratings.protocols.RESULT_COLUMNS`), and what made
    it: λ, the human votes, those paired with a judge vote, the judge-only votes."""
    if not isinstance(protocol, Arena):  # check_mode lets only the arena protocol through
        raise ValueError(f"The human + judge board fits the arena protocol, not {protocol.name}: pick --protocol "
                         "arena.")
    n = human.n_models
    battles, last = latest_per_battle(judged.battle_keys())
    judge_outcome = judged.oriented_outcomes()[last]
    human_keys = human.battle_keys()
    where = np.searchsorted(battles, human_keys)
    where = np.minimum(where, max(len(battles) - 1, 0))
    paired = (battles[where] == human_keys) if len(battles) else np.zeros(len(human), dtype=bool)
    paired_outcome = np.where(paired, judge_outcome[where] if len(battles) else NO_VOTE, NO_VOTE)
    alone = ~np.isin(battles, human_keys)
    j_a, j_b = judged.model_a[last][alone], judged.model_b[last][alone]
    fit = ppi_fit(n, np.minimum(human.model_a, human.model_b), np.maximum(human.model_a, human.model_b),
                  human.oriented_outcomes(), paired_outcome, np.minimum(j_a, j_b), np.maximum(j_a, j_b),
                  judge_outcome[alone], tie_policy=protocol.tie_policy, ridge=protocol.ridge)
    anchor = None
    if protocol.anchor is not None:
        if protocol.anchor[0] not in human.models:
            raise ValueError(f"Cannot anchor on {protocol.anchor[0]!r}: no vote mentions it.")
        anchor = human.models.index(protocol.anchor[0])
    rating, lower, upper = ppi_ratings(fit, anchor_index=anchor)
    if protocol.anchor is not None and anchor is not None and np.isfinite(rating[anchor]):
        shift = protocol.anchor[1] - rating[anchor]
        rating, lower, upper = rating + shift, lower + shift, upper + shift
    in_fit = np.isfinite(np.array(UNIT_SCORES[protocol.tie_policy]))[human.outcome]
    fit_votes = (np.bincount(human.model_a[in_fit], minlength=n) + np.bincount(human.model_b[in_fit], minlength=n))
    printed = [protocol.printed(r, lo, up) for r, lo, up in zip(rating, lower, upper)]
    table = result_table(human.models, human.counts(), rating, lower, upper, fit_votes, printed, protocol.name,
                         min_votes=min_votes, provisional_votes=provisional_votes, order=order)
    return table, {"lambda": fit.lam, "human": fit.human, "paired": fit.paired, "judge_only": fit.judge_only}


def board_audit(protocol: RatingProtocol, human: VoteArrays, fit: pd.DataFrame, top: int) -> dict | None:
    """The robustness audit of the board's top ``top`` places (:mod:`ratings.robustness`) as JSON, or None: no
    audit asked, a protocol the audit does not cover, or no ranked model."""
    if top <= 0 or not len(fit):
        return None
    ranked_names = set(fit.loc[fit["ranked"].astype(bool), "model"])
    if not ranked_names:
        return None
    ranked = np.array([name in ranked_names for name in human.models])
    audit = audit_top(human.counts(), human.models, ranked, protocol.point_model, k=top)
    return None if audit is None else audit.as_dict()


def robustness_text(audit: dict | None) -> str:
    """One line: how many dropped votes change each of the top places ("" without an audit)."""
    if not audit or not audit["places"]:
        return ""
    total = audit["total_votes"]
    parts = []
    for index, place in enumerate(audit["places"]):
        label = f"the #{place['place']}" + (f" ({place['model']})" if index == 0 else "")
        if place["votes"] is None:
            parts.append(f"{label} holds whichever of its votes are dropped one kind at a time")
        elif index == 0:
            parts.append(f"{label} changes if {place['votes']:,} of {total:,} votes are dropped")
        else:
            parts.append(f"{label} if {place['votes']:,}")
    return ("By rating, " + "; ".join(parts) + " (influence functions, confirmed by refitting).")


def audit_votes(db: Database, audit: dict, filters: dict) -> pd.DataFrame:
    """The votes the audit drops, for the maintainer: per place, the most recent votes of each (model shown left,
    model shown right, outcome) it names, with the vote id (or import source and id), the voter and the battle.
    ``filters``: the board's slice (:func:`datamodel.vote_arrays.newest_human_votes`' arguments)."""
    rows = []
    for place in audit.get("places", []):
        for drop in place["drops"]:
            for vote in newest_human_votes(db, left_model=drop["model_a"], right_model=drop["model_b"],
                                           outcome=drop["outcome"], limit=drop["votes"], **filters):
                rows.append({"place": place["place"], "model": place["model"], "model_a": drop["model_a"],
                             "model_b": drop["model_b"], "outcome": drop["outcome"],
                             "vote": vote.get("vote_id") or f"{vote['source']}:{vote['original_id']}",
                             "voter": vote["voter"], "battle": vote.get("battle_id", ""), "voted_at": vote["voted_at"]})
    return pd.DataFrame(rows, columns=["place", "model", "model_a", "model_b", "outcome", "vote", "voter", "battle",
                                       "voted_at"])
