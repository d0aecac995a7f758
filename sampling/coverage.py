"""Where the votes went: the admin's tables of votes per model, per pair and per prompt, and per strategy."""

from __future__ import annotations

import numpy as np
import pandas as pd

from datamodel.coverage import prompts_with_models, shared_prompts_per_pair, vote_pairs
from datamodel.database import Database
from datamodel.models import sorted_model_names


def _votes_table(db, voter_kind, include_excluded, suite) -> pd.DataFrame:
    rows = vote_pairs(db, voter_kind, include_excluded, suite)
    return pd.DataFrame(rows, columns=["prompt_id", "model_a", "model_b", "outcome", "image_a", "image_b"])


def votes_per_model(
    db: Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per model (all models, fewest votes first): ``model, votes, share, vs_mean, wins, losses, ties,
    both_bad``. ``share`` is the model's share of appearances (each vote shows two models; uniform: 2/n per model
    when every model has every prompt); ``vs_mean`` = votes / mean votes per model."""
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    models = sorted_model_names(db)
    table = pd.DataFrame({"model": models})
    stats = {}
    for name in models:
        as_a, as_b = votes[votes["model_a"] == name], votes[votes["model_b"] == name]
        stats[name] = {
            "votes": len(as_a) + len(as_b),
            "wins": int((as_a["outcome"] == "A").sum() + (as_b["outcome"] == "B").sum()),
            "losses": int((as_a["outcome"] == "B").sum() + (as_b["outcome"] == "A").sum()),
            "ties": int((as_a["outcome"] == "tie").sum() + (as_b["outcome"] == "tie").sum()),
            "both_bad": int((as_a["outcome"] == "both_bad").sum() + (as_b["outcome"] == "both_bad").sum()),
        }
    for column in ("votes", "wins", "losses", "ties", "both_bad"):
        table[column] = [stats[m][column] for m in models]
    total = table["votes"].sum()
    table["share"] = (table["votes"] / total).round(4) if total else 0.0
    mean = table["votes"].mean() if len(table) else 0.0
    table["vs_mean"] = (table["votes"] / mean).round(2) if mean else np.nan
    table = table.sort_values(["votes", "model"], kind="stable").reset_index(drop=True)
    return table[["model", "votes", "share", "vs_mean", "wins", "losses", "ties", "both_bad"]]


def votes_per_pair(
    db: Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per pair of models that share a prompt (fewest votes first): ``model_1, model_2`` (by name),
    ``prompts`` (prompts with images of both), ``votes, decisive, share, vs_mean``; pairs without votes are listed."""
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    shared = shared_prompts_per_pair(db, suite)
    prompts = {tuple(sorted((a, b))): count for a, b, count in shared}
    first = votes[["model_a", "model_b"]].min(axis=1) if len(votes) else pd.Series([], dtype=object)
    second = votes[["model_a", "model_b"]].max(axis=1) if len(votes) else pd.Series([], dtype=object)
    keyed = pd.DataFrame({"model_1": first, "model_2": second,
                          "decisive": votes["outcome"].isin(["A", "B"]) if len(votes) else []})
    grouped = keyed.groupby(["model_1", "model_2"]).agg(votes=("decisive", "size"), decisive=("decisive", "sum"))
    keys = sorted(set(prompts) | set(grouped.index))
    table = pd.DataFrame(keys, columns=["model_1", "model_2"]) if keys else pd.DataFrame(
        {"model_1": pd.Series([], dtype=object), "model_2": pd.Series([], dtype=object)})
    table["prompts"] = [prompts.get(key, 0) for key in keys]
    table["votes"] = [int(grouped["votes"].get(key, 0)) for key in keys]
    table["decisive"] = [int(grouped["decisive"].get(key, 0)) for key in keys]
    total = table["votes"].sum()
    table["share"] = (table["votes"] / total).round(4) if total else 0.0
    mean = table["votes"].mean() if len(table) else 0.0
    table["vs_mean"] = (table["votes"] / mean).round(2) if mean else np.nan
    table = table.sort_values(["votes", "model_1", "model_2"], kind="stable").reset_index(drop=True)
    return table[["model_1", "model_2", "prompts", "votes", "decisive", "share", "vs_mean"]]


def votes_per_prompt(
    db: Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per prompt with images of two or more models (fewest votes first): ``prompt_id, suite, subset,
    variant, prompt, models`` (with an image), ``votes, pairs_voted`` (distinct model pairs with a vote),
    ``max_per_pair`` (most votes of one pair on it), ``replicated`` (battles with two or more votes)."""
    prompts = pd.DataFrame(
        prompts_with_models(db, suite),
        columns=["prompt_id", "suite", "subset", "variant", "prompt", "models"],
    )
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    if len(votes):
        votes["pair"] = [tuple(sorted(p)) for p in zip(votes["model_a"], votes["model_b"])]
        votes["battle"] = [(p, min(a, b), max(a, b)) for p, a, b in
                           zip(votes["prompt_id"], votes["image_a"], votes["image_b"])]
        per_pair = votes.groupby(["prompt_id", "pair"]).size()
        per_battle = votes.groupby("battle").size()
        replicated = pd.Series([key[0] for key in per_battle[per_battle >= 2].index], dtype=np.int64).value_counts()
        summary = pd.DataFrame({
            "votes": votes.groupby("prompt_id").size(),
            "pairs_voted": per_pair.groupby(level=0).size(),
            "max_per_pair": per_pair.groupby(level=0).max(),
        })
        summary["replicated"] = replicated.reindex(summary.index).fillna(0)
    else:
        summary = pd.DataFrame(columns=["votes", "pairs_voted", "max_per_pair", "replicated"])
    table = prompts.join(summary, on="prompt_id")
    for column in ("votes", "pairs_voted", "max_per_pair", "replicated"):
        table[column] = table[column].fillna(0).astype(np.int64)
    return table.sort_values(["votes", "prompt_id"], kind="stable").reset_index(drop=True)


def votes_by_strategy(votes: pd.DataFrame) -> pd.DataFrame:
    """Votes per sampling strategy of a vote table with a ``strategy`` column
    (:func:`datamodel.vote_table.votes_frame`): ``strategy, votes, share``, most votes first."""
    if "strategy" not in votes.columns:
        raise ValueError("The vote table has no 'strategy' column; read it with datamodel.vote_table.votes_frame.")
    counts = votes["strategy"].value_counts()
    table = pd.DataFrame({"strategy": counts.index.astype(str), "votes": counts.to_numpy(dtype=np.int64)})
    table["share"] = (table["votes"] / max(int(table["votes"].sum()), 1)).round(4)
    return table.sort_values(["votes", "strategy"], ascending=[False, True], kind="stable").reset_index(drop=True)


def strategy_note(votes: pd.DataFrame) -> str:
    """One line for the leaderboard: which strategies produced these votes, e.g.
    "Votes by sampling strategy: active 812 (90%), uniform 90 (10%)."."""
    table = votes_by_strategy(votes)
    if table.empty:
        return "No votes yet."
    parts = ", ".join(f"{row.strategy} {row.votes} ({row.share:.0%})" for row in table.itertuples())
    return f"Votes by sampling strategy: {parts}."
