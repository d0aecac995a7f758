"""The leaderboard: votes from the database through the pure rating functions of :mod:`ratings`.

Human and judge votes are fitted separately (Bradley–Terry, 400 per factor 10 of odds, mean 1000, bootstrap 95%
CIs) and shown side by side; every model in the database gets a row, with blanks where it has no votes yet.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import sqlite_utils

import ratings
from arena.export import votes_frame


@dataclass(frozen=True)
class LeaderboardOptions:
    suite: str | None = None
    subset: str | None = None
    variant: str | None = None
    rounds: int = 1000
    seed: int = 0
    tie_policy: str = "drop"
    min_votes: int = 10
    include_excluded: bool = False


@dataclass(frozen=True)
class Leaderboard:
    table: pd.DataFrame  # one row per model, human and judge columns side by side
    fits: dict[str, pd.DataFrame]  # {"human": ..., "judge": ...} as returned by ratings.fit_leaderboard
    votes: pd.DataFrame  # the sliced vote table the fits used


def _format_ci(row: pd.Series) -> str:
    if pd.isna(row["rating"]):
        return ""
    return f"+{row['ci_upper'] - row['rating']:.0f} / -{row['rating'] - row['ci_lower']:.0f}"


def compute_leaderboard(db: sqlite_utils.Database, options: LeaderboardOptions = LeaderboardOptions()) -> Leaderboard:
    votes = votes_frame(db, include_excluded=options.include_excluded)
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant") if getattr(options, key)}
    votes = ratings.slice_votes(votes, include_excluded=options.include_excluded, **filters)
    fits = {
        kind: ratings.fit_leaderboard(
            votes[votes["voter_kind"] == kind], tie_policy=options.tie_policy, rounds=options.rounds,
            seed=options.seed, min_votes=options.min_votes,
        )
        for kind in ("human", "judge")
    }
    models = [row[0] for row in db.execute("SELECT name FROM models ORDER BY name")]
    table = pd.DataFrame({"model": models})
    for kind, fit in fits.items():
        label = kind.capitalize()
        part = fit.set_index("model")
        table[f"{label} rank"] = table["model"].map(part["rank"])
        table[f"{label} ELO"] = table["model"].map(part["rating"]).round(0)
        table[f"{label} 95% CI"] = table["model"].map(part.apply(_format_ci, axis=1) if len(part) else {})
        table[f"{label} votes"] = table["model"].map(part["votes"]).fillna(0).astype(int)
        table[f"{label} both-bad rate"] = table["model"].map(part["both_bad_rate"]).round(3)
        table[f"{label} provisional"] = table["model"].map(part["provisional"]).fillna(True).astype(bool)
    table = table.sort_values(["Human ELO", "Judge ELO", "model"], ascending=[False, False, True], na_position="last")
    return Leaderboard(table=table.reset_index(drop=True), fits=fits, votes=votes)


def format_table(table: pd.DataFrame, max_rows: int | None = None) -> str:
    """The leaderboard as fixed-width text (for the CLI)."""
    shown = table.drop(columns=[c for c in table.columns if c.endswith("provisional")])
    for kind in ("Human", "Judge"):
        provisional = table[f"{kind} provisional"] & table[f"{kind} votes"].gt(0)
        shown[f"{kind} ELO"] = [
            "" if pd.isna(v) else f"{v:.0f}{'*' if p else ''}" for v, p in zip(table[f"{kind} ELO"], provisional)
        ]
    text = shown.head(max_rows).to_string(index=False, na_rep="")
    return text + "\n* provisional: fewer votes than the minimum (ARENA_MIN_VOTES)"
