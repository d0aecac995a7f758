"""The leaderboard tab: human and judge Bradley–Terry ELO with 95% CIs, filters, and the ratings chart."""

from __future__ import annotations

import gradio as gr

from arena.leaderboard import LeaderboardOptions, compute_leaderboard
from arena.web.context import AppContext
from ratings.plots import ratings_chart

ALL = "All"


def _choices(ctx: AppContext, column: str) -> list[str]:
    rows = ctx.store.db().execute(f"SELECT DISTINCT {column} FROM prompts WHERE {column} != '' ORDER BY 1")
    return [ALL, *(row[0] for row in rows)]


def build_leaderboard_tab(ctx: AppContext, tab: gr.Tab, timer: gr.Timer | None) -> None:
    """Wire the leaderboard; it loads when its tab is opened (so no model name reaches an arena-only page)."""
    settings = ctx.settings
    with gr.Row():
        suite = gr.Dropdown([ALL], value=ALL, label="Suite", elem_id="lb-suite")
        subset = gr.Dropdown([ALL], value=ALL, label="Subset", elem_id="lb-subset")
        variant = gr.Dropdown([ALL], value=ALL, label="Prompt variant", elem_id="lb-variant")
        include_excluded = gr.Checkbox(label="Include excluded votes", value=False, elem_id="lb-include-excluded")
        refresh = gr.Button("Refresh", elem_id="lb-refresh", scale=0)
    summary = gr.Markdown(elem_id="lb-summary")
    table = gr.DataFrame(elem_id="lb-table", interactive=False, wrap=True)
    chart = gr.Plot(elem_id="lb-chart")

    def recompute(suite_value: str, subset_value: str, variant_value: str, with_excluded: bool = False):
        options = LeaderboardOptions(
            suite=None if suite_value == ALL else suite_value,
            subset=None if subset_value == ALL else subset_value,
            variant=None if variant_value == ALL else variant_value,
            rounds=settings.bootstrap_rounds, seed=settings.seed, tie_policy=settings.tie_policy,
            min_votes=settings.min_votes, include_excluded=bool(with_excluded),
        )
        board = compute_leaderboard(ctx.store.db(), options)
        counts = board.votes["voter_kind"].value_counts()
        text = (
            f"{counts.get('human', 0)} human votes · {counts.get('judge', 0)} judge votes · "
            f"Bradley–Terry ELO (400 per 10× odds, mean 1000), ties and both-bad: {settings.tie_policy}, "
            f"95% CIs from {settings.bootstrap_rounds} bootstrap rounds (seed {settings.seed})."
        )
        return text, board.table, ratings_chart(board.fits)

    def refresh_filters():
        return [gr.update(choices=_choices(ctx, column)) for column in ("suite", "subset", "variant")]

    inputs, outputs = [suite, subset, variant, include_excluded], [summary, table, chart]
    triggers = [refresh.click, suite.change, subset.change, variant.change, include_excluded.change]
    if timer is not None:
        triggers.append(timer.tick)
    gr.on(triggers, recompute, inputs, outputs, api_name="leaderboard", concurrency_limit=1,
          concurrency_id="leaderboard", show_progress="minimal")
    tab.select(refresh_filters, None, [suite, subset, variant], api_visibility="private").then(
        recompute, inputs, outputs, api_visibility="private", concurrency_limit=1, concurrency_id="leaderboard"
    )
