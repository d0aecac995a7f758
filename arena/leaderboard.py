"""The leaderboard: votes and metrics from the database through the pure functions of :mod:`ratings`.

Human and judge votes are fitted separately (Bradley–Terry, 400 per factor 10 of odds, mean 1000, bootstrap 95%
CIs) and shown side by side with the automatic metrics (the ``metrics`` table: CLIP similarities, FID/IS, reward,
commonsense accuracy, SemVarEffect, SANEval, ...). Every model in the database gets a row, with blanks where it has
no votes or scores yet. Beside the table: rank correlations of the judge and of each metric with the human ELO,
human–judge agreement on shared battles, position bias, inter-annotator agreement and the strategies that drew the
battles.

The judge column is one judge voter (a ``voter`` name such as ``gpt-judge:gpt-4o-mini``), never several pooled:
``LeaderboardOptions.judge``, by default the judge voter with the most votes in the slice (ties: the first name).
Its votes give the judge ELO, the judge's rank correlation and the human–judge agreement; the summary names it.

Agreement statistics (formulas in :mod:`ratings.agreement`): human–judge raw agreement p_o and Cohen's κ on
every (human vote, judge vote) pair of the same battle; inter-annotator mean pairwise agreement P̄ and Fleiss' κ
over battles seen by at least two annotators, Cohen's κ per pair of annotators, and the mean Spearman ρ between
the ratings fitted on each annotator's own votes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import sqlite_utils

import ratings
from arena.export import votes_frame
from judges.metrics.store import model_metric_table


@dataclass(frozen=True)
class LeaderboardOptions:
    suite: str | None = None
    subset: str | None = None
    variant: str | None = None
    category: str | None = None
    voter: str | None = None
    judge: str | None = None  # the judge voter of the judge column; None: the judge voter with the most votes
    rounds: int = 1000
    seed: int = 0
    tie_policy: str = "drop"
    min_votes: int = 10
    include_excluded: bool = False


@dataclass(frozen=True)
class Leaderboard:
    table: pd.DataFrame  # one row per model: human and judge columns side by side, then metric columns
    fits: dict[str, pd.DataFrame]  # {"human": ..., "judge": ...} as returned by ratings.fit_leaderboard
    votes: pd.DataFrame  # the sliced vote table the fits used
    correlations: pd.DataFrame  # rank correlation with the human ELO: the judge ELO and every metric
    agreement: dict  # ratings.human_judge_agreement on battles both voted on
    inter_annotator: dict  # ratings.inter_annotator_agreement
    position_bias: pd.DataFrame  # ratings.position_bias per voter kind and subset
    strategies: dict[str, int] = field(default_factory=dict)  # votes per sampling strategy
    judge: str | None = None  # the judge voter of the judge column (None: no judge vote in the slice)
    judge_chosen: bool = False  # True: named by LeaderboardOptions.judge; False: the judge with the most votes
    judges: dict[str, int] = field(default_factory=dict)  # votes per judge voter in the slice, most first


def format_ci(row: pd.Series) -> str:
    """"+up / -down" in whole Elo points around the rating; the bounds "lo – hi" when the percentile interval does not
    contain the rating (it can miss it, e.g. with a handful of votes), never "+-0"."""
    if pd.isna(row["rating"]) or pd.isna(row["ci_lower"]) or pd.isna(row["ci_upper"]):
        return ""
    up, down = round(row["ci_upper"] - row["rating"]), round(row["rating"] - row["ci_lower"])
    if up < 0 or down < 0:
        return f"{row['ci_lower']:.0f} – {row['ci_upper']:.0f}"
    return f"+{up} / -{down}"


def _rating_columns(models: list[str], fits: dict[str, pd.DataFrame]) -> pd.DataFrame:
    table = pd.DataFrame({"model": models})
    for kind, fit in fits.items():
        label = kind.capitalize()
        part = fit.set_index("model")
        table[f"{label} rank"] = table["model"].map(part["rank"])
        table[f"{label} ELO"] = table["model"].map(part["rating"]).round(0)
        table[f"{label} 95% CI"] = table["model"].map(part.apply(format_ci, axis=1) if len(part) else {}).fillna("")
        table[f"{label} votes"] = table["model"].map(part["votes"]).fillna(0).astype(int)
        table[f"{label} both-bad rate"] = table["model"].map(part["both_bad_rate"]).round(3)
        table[f"{label} provisional"] = table["model"].map(part["provisional"]).fillna(True).astype(bool)
    return table


def _correlations(table: pd.DataFrame, metric_columns: list[str], lower_is_better: list[str]) -> pd.DataFrame:
    """Spearman and Kendall of the judge ELO and of each metric against the human ELO (sign-aligned)."""
    human = dict(zip(table["model"], table["Human ELO"]))
    rows = []
    for column in ["Judge ELO", *metric_columns]:
        sign = -1.0 if column in lower_is_better else 1.0
        scores = {m: sign * v for m, v in zip(table["model"], table[column]) if pd.notna(v)}
        result = ratings.rank_correlation(human, scores)
        rows.append({"against human ELO": column, **{k: result[k] for k in ("spearman", "spearman_p", "kendall",
                                                                           "kendall_p", "n")}})
    return pd.DataFrame(rows, columns=["against human ELO", "spearman", "spearman_p", "kendall", "kendall_p", "n"])


def judge_vote_counts(votes: pd.DataFrame) -> dict[str, int]:
    """Votes per judge voter, most first (ties by name)."""
    counts = votes.loc[votes["voter_kind"] == "judge", "voter"].astype(str).value_counts()
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def judge_voters(db: sqlite_utils.Database) -> list[str]:
    """Every judge voter of the database, most votes first (ties by name)."""
    return [row[0] for row in db.execute(
        "SELECT voter FROM votes WHERE voter_kind = 'judge' GROUP BY voter ORDER BY COUNT(*) DESC, voter")]


def pick_judge(db: sqlite_utils.Database, votes: pd.DataFrame, judge: str | None) -> str | None:
    """``judge`` if it is a judge voter of the database, else the judge voter with the most of ``votes``."""
    if judge is None:
        return next(iter(judge_vote_counts(votes)), None)
    known = judge_voters(db)
    if judge not in known:
        raise LookupError(f"No judge votes from {judge!r}. Judges with votes: {', '.join(known) or 'none'}; pass one "
                          "of them (--judge), or run python -m judges pairwise first.")
    return judge


def compute_leaderboard(db: sqlite_utils.Database, options: LeaderboardOptions = LeaderboardOptions()) -> Leaderboard:
    # the slice is taken in SQL: a category matches an item's own category or any of its categories (SemVarBench)
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant", "category", "voter")
               if getattr(options, key)}
    votes = votes_frame(db, include_excluded=options.include_excluded, **filters)
    judge = pick_judge(db, votes, options.judge)
    kinds = votes["voter_kind"]
    one_judge = (kinds == "judge") & (votes["voter"].astype(str) == judge)
    by_kind = {"human": votes[kinds == "human"], "judge": votes[one_judge]}
    fits = {
        kind: ratings.fit_leaderboard(
            part, tie_policy=options.tie_policy, rounds=options.rounds, seed=options.seed,
            min_votes=options.min_votes,
        )
        for kind, part in by_kind.items()
    }
    models = [row[0] for row in db.execute("SELECT name FROM models ORDER BY name")]
    table = _rating_columns(models, fits)
    metrics = model_metric_table(db, suite=options.suite)
    metric_columns = [c for c in metrics.columns if c != "model"]
    table = table.merge(metrics, on="model", how="left")
    table = table.sort_values(["Human ELO", "Judge ELO", "model"], ascending=[False, False, True], na_position="last")
    table = table.reset_index(drop=True)
    return Leaderboard(
        table=table,
        fits=fits,
        votes=votes,
        correlations=_correlations(table, metric_columns, list(metrics.attrs.get("lower_is_better", []))),
        agreement=ratings.human_judge_agreement(votes[(kinds == "human") | one_judge]),
        inter_annotator=ratings.inter_annotator_agreement(votes),
        position_bias=ratings.position_bias(votes, by=("voter_kind", "subset")),
        strategies=votes["strategy"].value_counts().to_dict() if len(votes) else {},
        judge=judge,
        judge_chosen=options.judge is not None,
        judges=judge_vote_counts(votes),
    )


def _number(value, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def judge_text(board: Leaderboard) -> str:
    """Which judge voter the judge column shows, and why."""
    if board.judge is None:
        return "Judge column: no judge votes yet"
    votes = board.judges.get(board.judge, 0)
    why = "chosen" if board.judge_chosen else "the judge with the most votes"
    others = ", ".join(f"{name} ({n})" for name, n in board.judges.items() if name != board.judge)
    return f"Judge column: {board.judge} ({votes} votes, {why})" + (f"; other judges: {others}" if others else "")


def inter_annotator_text(inter: dict) -> str:
    """P̄, Fleiss' κ, the annotators' rating Spearman and the number of battles they share, in one sentence."""
    return (
        f"Inter-annotator: {inter.get('n_items', 0)} battles seen by several annotators ({inter.get('n_pairs', 0)} "
        f"pairs of votes), mean pairwise agreement {_number(inter.get('agreement'))}, Fleiss' κ "
        f"{_number(inter.get('fleiss_kappa'))}, Spearman ρ between the annotators' own ratings "
        f"{_number(inter.get('rating_spearman'))}."
    )


def summary_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """One paragraph: what was fitted, from which votes, drawn by which strategy, and how the voters agree."""
    counts = board.votes["voter_kind"].value_counts()
    strategies = ", ".join(f"{name} {n} ({n / max(1, len(board.votes)):.0%})"
                           for name, n in sorted(board.strategies.items(), key=lambda item: -item[1])) or "none yet"
    agreement = board.agreement
    return (
        f"{counts.get('human', 0)} human votes · {counts.get('judge', 0)} judge votes"
        f"{' (excluded votes included)' if options.include_excluded else ''}. {judge_text(board)}. Bradley–Terry "
        f"ELO (400 per 10× odds, mean 1000), ties and both-bad: {options.tie_policy}, 95% CIs from {options.rounds} "
        f"bootstrap rounds (seed {options.seed}). Votes by sampling strategy: {strategies}. Human–judge agreement "
        f"({board.judge or 'no judge'}) on {agreement['n']} pairs of votes on shared battles: "
        f"{_number(agreement['agreement'])} (Cohen's κ {_number(agreement['kappa'])}). "
        f"{inter_annotator_text(board.inter_annotator)}"
    )


def _frame_text(frame: pd.DataFrame, empty: str, **kwargs) -> str:
    if frame is None or len(frame) == 0:
        return f"  ({empty})"
    text = frame.to_string(float_format=lambda v: f"{v:.3f}", na_rep="n/a", **kwargs)
    return "\n".join("  " + line for line in text.splitlines())


def agreement_text(board: Leaderboard) -> str:
    """The agreement panel as text (for the CLI): position bias per voter kind and subset, the human–judge
    confusion matrix with raw agreement and Cohen's κ, and inter-annotator agreement with Cohen's κ per pair."""
    agreement, inter = board.agreement, board.inter_annotator
    confusion = agreement["confusion"].copy()
    confusion.index = [f"human {o}" for o in confusion.index]
    confusion.columns = [f"judge {o}" for o in confusion.columns]
    return "\n".join([
        "Position bias (share of votes; first_win_rate = A / (A + B); p: binomial test against 0.5):",
        _frame_text(board.position_bias, "no votes", index=False),
        "",
        f"Human–judge agreement ({board.judge or 'no judge'}), outcomes oriented to the first model by name, on "
        f"{agreement['n']} pairs of votes on shared battles: raw agreement {_number(agreement['agreement'])}, "
        f"Cohen's κ {_number(agreement['kappa'])}",
        _frame_text(confusion if agreement["n"] else None, "no battle voted on by a human and the judge"),
        "",
        inter_annotator_text(inter),
        "Cohen's κ per pair of annotators:",
        _frame_text(inter.get("pairs"), "no battle seen by two annotators", index=False),
    ])


def format_table(table: pd.DataFrame, max_rows: int | None = None) -> str:
    """The leaderboard as fixed-width text (for the CLI)."""
    shown = table.drop(columns=[c for c in table.columns if c.endswith("provisional")])
    for kind in ("Human", "Judge"):
        provisional = table[f"{kind} provisional"] & table[f"{kind} votes"].gt(0)
        shown[f"{kind} ELO"] = [
            "" if pd.isna(v) else f"{v:.0f}{'*' if p else ''}" for v, p in zip(table[f"{kind} ELO"], provisional)
        ]
    text = shown.head(max_rows).to_string(index=False, na_rep="", float_format=lambda v: f"{v:.3g}")
    return text + "\n* provisional: fewer of its votes entered the fit than ARENA_MIN_VOTES (ties do not under 'drop')"
