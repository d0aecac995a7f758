"""``python -m judges compare``: which judge to trust, every judge voter against the humans, per suite and subset.

One row per judge voter, that is per judge configuration (its name carries the judge name, ``-single-order`` when
asked once, the model and the template version, ``@`` and 8 hex digits; see :func:`judges.pairwise.judge_name`;
judges run before template versions keep their ``NAME:MODEL`` name, and the ``template_version`` column says
``unversioned``), per scope (``all``, each suite, each suite's subsets), computed on the battles
humans voted on (excluded votes left out) with :func:`ratings.judge_agreement.judge_vs_humans`; the formulas are
in that module's docstring. Beside them:

- ``human ceiling``: pairs of different annotators on replicated battles
  (:func:`ratings.judge_agreement.human_ceiling`), the agreement a judge voting like another human would reach;
- ``ensemble:majority`` and ``ensemble:weighted``: virtual judges voting on each battle the outcome most of the
  judges chose, plainly or weighted by each judge's κ with the humans in that scope, floored at 0 and cross-fitted
  (:func:`ratings.judge_agreement.cross_fitted_ensemble`): the scope's human battles are dealt into ``folds``
  seeded folds, and on a battle of fold f judge i weighs ``max(κ_i^(−f), 0)``, its κ on the other folds' battles
  only, so no human vote the ensemble is scored on has shaped its weights (weights fitted on the scored votes rate
  even an ensemble of coin flips above chance);
- per judge voter, from its judgments and the request cache: the failed-parse rate (judgments that cast no vote
  over all of them), the share of both-order disagreements (judgments asked in both orders whose verdicts differed),
  the cost in USD and the request latency in seconds per 1,000 judgments.

Rows are sorted by κ (best first) with the ceiling on top; a row below ``min_shared`` shared battles says
``insufficient`` and shows no figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from datamodel.catalog import image_suites, suite_names
from datamodel.database import Database
from datamodel.judgments import forget_failed as forget_failed_replies
from datamodel.judgments import judge_figures
from datamodel.vote_arrays import VoteArrays, read_vote_arrays
from ratings.judge_agreement import (FIGURES, HumanBattles, VoteCodes, cross_fitted_ensemble, ensemble_votes,
                                     human_ceiling, judge_vs_humans)

TASK = "pairwise"
CEILING = "human ceiling"
ENSEMBLES = ("ensemble:majority", "ensemble:weighted")
COLUMNS = ("scope", "judge", *FIGURES, "failed_parse_rate", "cost_per_1000", "latency_s_per_1000", "judgments",
           "template_version")
JUDGE_WIDTH = 44  # gpt-judge-single-order:gpt-4o-mini@1a2b3c4d is 43 characters
UNVERSIONED = "unversioned"  # the template version shown for judgments made before versions were recorded


@dataclass(frozen=True)
class CompareOptions:
    """``min_shared``: fewer shared battles give "insufficient"; ``rounds``: bootstrap redraws of ρ; ``subsets``:
    a row per suite subset too; ``ensembles``: add the virtual judges; ``suite``: only this suite; ``folds``: the
    cross-fitting folds of the weighted ensemble's weights; ``seed``: of the bootstrap and of the folds."""

    min_shared: int = 30
    rounds: int = 200
    seed: int = 0
    folds: int = 5
    subsets: bool = True
    ensembles: bool = True
    suite: str | None = None


def _codes(arrays: VoteArrays, mask: np.ndarray, keys: np.ndarray) -> VoteCodes:
    return VoteCodes(keys[mask], arrays.model_a[mask], arrays.model_b[mask], arrays.outcome[mask])


def judgment_figures(db: Database) -> pd.DataFrame:
    """Per judge voter: judgments, failed-parse rate, both-order disagreement share, cost and latency per 1,000
    judgments (cost NaN when no request had a price), and the template version of its judgments (``unversioned``
    for judgments made before versions were recorded; several, comma-separated, if one name has several)."""
    rows = judge_figures(db, TASK, UNVERSIONED)
    table = pd.DataFrame(rows, columns=["judge", "judgments", "template_version", "failed", "inconsistent",
                                        "both_orders", "cost", "latency"])
    with np.errstate(invalid="ignore", divide="ignore"):
        n = table["judgments"].astype(float)
        table["failed_parse_rate"] = table["failed"] / n
        both = table["both_orders"].astype(float)
        table["both_order_disagreement"] = (table["inconsistent"] / both.where(both > 0)).astype(float)
        table["cost_per_1000"] = table["cost"].astype(float) / n * 1000
        table["latency_s_per_1000"] = table["latency"].astype(float) / n * 1000
    return table.set_index("judge")[["judgments", "failed_parse_rate", "both_order_disagreement", "cost_per_1000",
                                     "latency_s_per_1000", "template_version"]]


def _scope_rows(scope: str, arrays: VoteArrays, extra: pd.DataFrame, options: CompareOptions) -> list[dict]:
    human_mask, keys = arrays.human, arrays.battle_keys()
    human = _codes(arrays, human_mask, keys)
    rows = [{"scope": scope, "judge": CEILING,
             **human_ceiling(human, arrays.voter[human_mask], min_shared=options.min_shared)}]
    human = HumanBattles.of(human, arrays.n_models)
    per_judge = {}
    for name in arrays.judges:
        codes = _codes(arrays, arrays.judge(name), keys)
        if not len(codes):
            continue
        per_judge[name] = codes
        disagreement = extra["both_order_disagreement"].get(name, np.nan) if len(extra) else np.nan
        figures = judge_vs_humans(human, codes, arrays.n_models, min_shared=options.min_shared,
                                  rounds=options.rounds, seed=options.seed, both_order_disagreement=disagreement)
        rows.append({"scope": scope, "judge": name, **figures})
    if options.ensembles and len(per_judge) >= 2:
        judges = list(per_judge.values())
        weighted = cross_fitted_ensemble(human, judges, arrays.n_models, folds=options.folds, seed=options.seed,
                                         min_shared=options.min_shared)
        for name, votes in zip(ENSEMBLES, (ensemble_votes(judges), weighted)):
            rows.append({"scope": scope, "judge": name,
                         **judge_vs_humans(human, votes, arrays.n_models, min_shared=options.min_shared,
                                           rounds=options.rounds, seed=options.seed, positions=False)})
    return rows


def _image_suites(db: Database, suites: list[str], bound: int) -> np.ndarray:
    """The code in ``suites`` of each image id's suite (−1 for an image of another suite)."""
    codes = np.full(bound, -1, dtype=np.int64)
    index = {suite: k for k, suite in enumerate(suites)}
    for image_id, suite in image_suites(db):
        if image_id < bound:
            codes[image_id] = index.get(suite, -1)
    return codes


def compare_judges(db: Database, options: CompareOptions = CompareOptions()) -> pd.DataFrame:
    """The comparison table (module docstring): one row per scope and judge voter, ceiling first, then by κ."""
    extra = judgment_figures(db)
    suites = suite_names(db)
    if options.suite is not None:
        if options.suite not in suites:
            raise ValueError(f"No suite {options.suite!r} in this arena (it has {', '.join(suites) or 'none'}); "
                             "pick one of those with --suite or leave the option out.")
        suites = [options.suite]
    # once: each suite and subset is a mask of it. Every vote, the imported ones too: a peer's human votes on images
    # the file carried (GenAI-Bench, Pick-a-Pic) meet the judges' votes on the same two images; flagged records (a
    # self-battle, ...) are left out, as from the arena's own fit
    arrays = read_vote_arrays(db, source=None)
    arrays = arrays.take(~arrays.excluded & ~arrays.flagged)
    suite_of_vote = _image_suites(db, suites, arrays.image_bound)[arrays.image_a]
    rows = []
    if options.suite is None:
        rows += _scope_rows("all", arrays, extra, options)
    for code, suite in enumerate(suites):
        here = arrays.take(suite_of_vote == code)
        rows += _scope_rows(suite, here, extra, options)
        subsets = sorted(set(here.subset.tolist()))
        if options.subsets and len(subsets) > 1:
            for subset in subsets:
                rows += _scope_rows(f"{suite}/{here.subsets[subset]}", here.take(here.subset == subset), extra,
                                    options)
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    for column in ("judgments", "failed_parse_rate", "cost_per_1000", "latency_s_per_1000"):
        table[column] = table["judge"].map(extra[column]) if len(extra) else np.nan
    # a voter with no judgment (the ceiling, an ensemble, votes imported without judgments) shows no version
    versions = extra["template_version"] if len(extra) else pd.Series(dtype=object)
    table["template_version"] = table["judge"].map(versions).fillna("")
    order = table["judge"].ne(CEILING).astype(int)
    table = table.assign(_scope=pd.Categorical(table["scope"], list(dict.fromkeys(table["scope"]))), _order=order,
                         _kappa=table["kappa"].fillna(-np.inf))
    table = table.sort_values(["_scope", "_order", "_kappa", "judge"], ascending=[True, True, False, True])
    return table.drop(columns=["_scope", "_order", "_kappa"]).reset_index(drop=True)[
        [*COLUMNS, "confusion"]]


def _number(value, digits: int = 3) -> str:
    return "" if value is None or value != value else f"{value:.{digits}f}"


def format_table(table: pd.DataFrame, *, confusion: bool = False) -> str:
    """The comparison as text: one line per row, "insufficient" where a row has too few shared battles."""
    shown = [("judge", JUDGE_WIDTH), ("shared", 7), ("acc", 6), ("acc_tie", 7), ("kappa", 6), ("rho", 6),
             ("rho 95% CI", 14), ("tau", 6), ("first", 6), ("p", 7), ("2-order", 7), ("tie j/h", 11), ("bad j/h", 11),
             ("failed", 6), ("$/1k", 7), ("s/1k", 7)]
    lines = []
    for scope, rows in table.groupby("scope", sort=False):
        lines.append(f"== {scope}")
        lines.append(" ".join(name.ljust(width) for name, width in shown))
        for row in rows.itertuples():
            head = [row.judge[:JUDGE_WIDTH].ljust(JUDGE_WIDTH), str(row.shared_battles).ljust(7)]
            if row.insufficient:
                lines.append(" ".join(head) + " insufficient (fewer shared battles than --min-shared)")
                continue
            values = [_number(row.accuracy), _number(row.accuracy_ties), _number(row.kappa), _number(row.spearman, 2),
                      f"[{_number(row.spearman_low, 2)}, {_number(row.spearman_high, 2)}]"
                      if row.spearman_low == row.spearman_low else "",
                      _number(row.kendall, 2), _number(row.first_win_rate), _number(row.first_win_p, 4),
                      _number(row.both_order_disagreement),
                      f"{_number(row.tie_rate, 2)}/{_number(row.human_tie_rate, 2)}",
                      f"{_number(row.both_bad_rate, 2)}/{_number(row.human_both_bad_rate, 2)}",
                      _number(row.failed_parse_rate), _number(row.cost_per_1000, 2), _number(row.latency_s_per_1000, 1)]
            lines.append(" ".join(head + [v.ljust(w) for v, (_, w) in zip(values, shown[2:])]).rstrip())
            if confusion:
                lines.append("   confusion (rows human, columns judge; oriented):")
                lines.extend("   " + line for line in row.confusion.to_string().splitlines())
    return "\n".join(lines)


def forget_failed(db: Database, task: str, judge: str) -> tuple[int, int]:
    """Make the failed judgments of ``task`` by judge voter ``judge`` be asked again: their cached replies (which
    did not parse, or were refusals) leave the request cache, so the next run sends the requests again instead of
    reading the same reply back (a failed judgment casts no vote and is not skipped by the next run). Returns
    (failed judgments, cached replies deleted)."""
    return forget_failed_replies(db, task, judge)
