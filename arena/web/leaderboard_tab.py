"""The leaderboard tab: human and judge ELO with 95% CIs beside the metrics, slice filters, agreement and plots."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from arena.export import category_choices
from arena.leaderboard import LeaderboardOptions, compute_leaderboard, judge_voters, summary_text
from arena.web.context import AppContext
from ratings import plots

ALL = "All"


def _column_values(column: str):
    def values(db) -> list[str]:
        rows = db.execute(
            f"SELECT DISTINCT {column} FROM prompts WHERE {column} IS NOT NULL AND {column} != '' ORDER BY 1")
        return [str(row[0]) for row in rows]

    return values


FILTERS = {  # dropdown label: function of the database giving the choices
    "Suite": _column_values("suite"),
    "Subset": _column_values("subset"),
    "Prompt variant": _column_values("variant"),
    "Category": category_choices,  # metadata category, and every entry of a categories list
}


def _choices(ctx: AppContext, values) -> list[str]:
    return [ALL, *values(ctx.store.db())]


def _voters(ctx: AppContext) -> list[str]:
    return [ALL, *(row[0] for row in ctx.store.db().execute("SELECT DISTINCT voter FROM votes ORDER BY 1"))]


MOST_VOTES = "The one with the most votes"


def _judges(ctx: AppContext) -> list[str]:
    return [MOST_VOTES, *judge_voters(ctx.store.db())]


def build_leaderboard_tab(ctx: AppContext, tab: gr.Tab, timer: gr.Timer | None) -> None:
    """Wire the leaderboard; it loads when its tab is opened (so no model name reaches an arena-only page)."""
    settings = ctx.settings
    with gr.Row():
        # Choices as of start-up, refreshed whenever the tab opens; API callers may name values added since.
        dropdowns = [gr.Dropdown(_choices(ctx, values), value=ALL, label=label, allow_custom_value=True,
                                 elem_id=f"lb-{label.split()[-1].lower()}") for label, values in FILTERS.items()]
        voter = gr.Dropdown(_voters(ctx), value=ALL, label="Voter", elem_id="lb-voter", allow_custom_value=True)
        judge = gr.Dropdown(_judges(ctx), value=MOST_VOTES, label="Judge column", elem_id="lb-judge",
                            allow_custom_value=True)
    with gr.Row():
        tie_policy = gr.Dropdown(["drop", "half", "half_ties_drop_both_bad"], value=settings.tie_policy,
                                 label="Ties and both-bad", elem_id="lb-tie-policy")
        include_excluded = gr.Checkbox(label="Include excluded votes", value=False, elem_id="lb-include-excluded")
        refresh = gr.Button("Refresh", elem_id="lb-refresh", scale=0)
    summary = gr.Markdown(elem_id="lb-summary")
    table = gr.DataFrame(elem_id="lb-table", interactive=False, wrap=True)
    chart = gr.Plot(elem_id="lb-chart")
    gr.Markdown("### Agreement with the human ranking\nSpearman and Kendall rank correlation of the judge ELO and of "
                "each automatic metric with the human ELO (metrics where lower is better are sign-flipped).")
    correlations = gr.DataFrame(elem_id="lb-correlations", interactive=False)
    with gr.Row():
        confusion = gr.Plot(elem_id="lb-confusion")
        outcomes = gr.Plot(elem_id="lb-outcomes")
    gr.Markdown("### Position bias\nShare of first-position (A) wins, second-position wins, ties and both-bad per voter "
                "kind and subset; the p-value tests first-position wins against 50% of decisive votes.")
    bias = gr.DataFrame(elem_id="lb-bias", interactive=False)
    gr.Markdown("### Inter-annotator agreement\nCohen's κ and raw agreement for each pair of annotators on the battles "
                "both voted on (replicated battles); the summary above gives Fleiss' κ over all of them.")
    annotator_pairs = gr.DataFrame(elem_id="lb-annotator-pairs", interactive=False)
    with gr.Row():
        wins = gr.Plot(elem_id="lb-wins")
        counts = gr.Plot(elem_id="lb-counts")

    def recompute(suite: str, subset: str, variant: str, category: str, who: str, policy: str, with_excluded: bool,
                  judge_voter: str = MOST_VOTES):
        value = lambda v: None if v in (ALL, MOST_VOTES, None, "") else v  # noqa: E731
        options = LeaderboardOptions(
            suite=value(suite), subset=value(subset), variant=value(variant), category=value(category),
            voter=value(who), judge=value(judge_voter), rounds=settings.bootstrap_rounds, seed=settings.seed,
            tie_policy=policy or "drop", min_votes=settings.min_votes, include_excluded=bool(with_excluded),
        )
        try:
            board = compute_leaderboard(ctx.store.db(), options)
        except LookupError as error:  # a judge name without votes: the message lists those with votes
            raise gr.Error(str(error))
        pairs = board.inter_annotator.get("pairs")
        voted = set(board.votes["model_a"]) | set(board.votes["model_b"])
        order = [model for model in board.table["model"] if model in voted]
        return (
            summary_text(board, options),
            board.table,
            plots.ratings_chart(board.fits),
            board.correlations.round(3),
            plots.confusion_heatmap(board.agreement["confusion"]),
            plots.outcome_distribution(board.votes),
            board.position_bias.round(3) if isinstance(board.position_bias, pd.DataFrame) else board.position_bias,
            plots.win_fraction_heatmap(board.votes, order=order),
            plots.battle_count_heatmap(board.votes, order=order),
            pairs.round(3) if isinstance(pairs, pd.DataFrame) else pd.DataFrame(),
        )

    def refresh_filters():
        return [*(gr.update(choices=_choices(ctx, values)) for values in FILTERS.values()),
                gr.update(choices=_voters(ctx)), gr.update(choices=_judges(ctx))]

    # the judge comes last, so API callers that pass the first seven inputs keep working
    inputs = [*dropdowns, voter, tie_policy, include_excluded, judge]
    outputs = [summary, table, chart, correlations, confusion, outcomes, bias, wins, counts, annotator_pairs]
    triggers = [refresh.click, *(c.change for c in inputs)]
    if timer is not None:
        triggers.append(timer.tick)
    gr.on(triggers, recompute, inputs, outputs, api_name="leaderboard", concurrency_limit=1,
          concurrency_id="leaderboard", show_progress="minimal")
    tab.select(refresh_filters, None, [*dropdowns, voter, judge], api_visibility="private").then(
        recompute, inputs, outputs, api_visibility="private", concurrency_limit=1, concurrency_id="leaderboard"
    )
