"""The leaderboard: votes and metrics from the database through the pure functions of :mod:`ratings`.

Human and judge votes are fitted separately (Bradley–Terry, 400 per factor 10 of odds, mean 1000, bootstrap 95%
CIs) and shown side by side with the automatic metrics (the ``metrics`` table: CLIP similarities, FID/IS, reward,
commonsense accuracy, SemVarEffect, SANEval, ...). Every model in the database gets a row, with blanks where it has
no votes or scores yet. Beside the table: rank correlations of the judge and of each metric with the human ELO,
human–judge agreement on shared battles, position bias, inter-annotator agreement and the strategies that drew the
battles.
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


def _format_ci(row: pd.Series) -> str:
    if pd.isna(row["rating"]):
        return ""
    return f"+{row['ci_upper'] - row['rating']:.0f} / -{row['rating'] - row['ci_lower']:.0f}"


def _rating_columns(models: list[str], fits: dict[str, pd.DataFrame]) -> pd.DataFrame:
    table = pd.DataFrame({"model": models})
    for kind, fit in fits.items():
        label = kind.capitalize()
        part = fit.set_index("model")
        table[f"{label} rank"] = table["model"].map(part["rank"])
        table[f"{label} ELO"] = table["model"].map(part["rating"]).round(0)
        table[f"{label} 95% CI"] = table["model"].map(part.apply(_format_ci, axis=1) if len(part) else {}).fillna("")
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


def compute_leaderboard(db: sqlite_utils.Database, options: LeaderboardOptions = LeaderboardOptions()) -> Leaderboard:
    votes = votes_frame(db, include_excluded=options.include_excluded)
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant", "category", "voter")
               if getattr(options, key)}
    votes = ratings.slice_votes(votes, include_excluded=options.include_excluded, **filters)
    fits = {
        kind: ratings.fit_leaderboard(
            votes[votes["voter_kind"] == kind], tie_policy=options.tie_policy, rounds=options.rounds,
            seed=options.seed, min_votes=options.min_votes,
        )
        for kind in ("human", "judge")
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
        agreement=ratings.human_judge_agreement(votes),
        inter_annotator=ratings.inter_annotator_agreement(votes),
        position_bias=ratings.position_bias(votes, by=("voter_kind", "subset")),
        strategies=votes["strategy"].value_counts().to_dict() if len(votes) else {},
    )


def _number(value, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def summary_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """One paragraph: what was fitted, from which votes, drawn by which strategy, and how the voters agree."""
    counts = board.votes["voter_kind"].value_counts()
    strategies = ", ".join(f"{name} {n} ({n / max(1, len(board.votes)):.0%})"
                           for name, n in sorted(board.strategies.items(), key=lambda item: -item[1])) or "none yet"
    agreement, inter = board.agreement, board.inter_annotator
    return (
        f"{counts.get('human', 0)} human votes · {counts.get('judge', 0)} judge votes"
        f"{' (excluded votes included)' if options.include_excluded else ''}. Bradley–Terry ELO (400 per 10× odds, "
        f"mean 1000), ties and both-bad: {options.tie_policy}, 95% CIs from {options.rounds} bootstrap rounds "
        f"(seed {options.seed}). Votes by sampling strategy: {strategies}. Human–judge agreement on {agreement['n']} shared "
        f"battles: {_number(agreement['agreement'])} (Cohen's κ {_number(agreement['kappa'])}). Inter-annotator: "
        f"{inter.get('n_items', 0)} battles seen by several annotators, agreement {_number(inter.get('agreement'))}."
    )


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
