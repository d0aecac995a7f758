"""The leaderboard's Judges sub-tab: which judge to trust, the table of ``python -m judges compare``.

One row per scope (all suites, each suite) and judge voter, with the human ceiling and the judge ensembles
(:func:`judges.compare.compare_judges`; formulas in :mod:`ratings.judge_agreement`); beside it, every judge against
the human ratings of the rating tasks, with the rater-against-rater ceiling (:func:`judges.human_compare.
compare_with_humans`: the fit judges and the CLIP evaluator by accuracy and κ, the SemVarBench judge by Pearson,
Spearman and κ as Table 12, the SANEval scorer by Spearman). The table is computed when the
sub-tab is opened or refreshed, one computation at a time, and kept until a vote or a judgment is added (a cheap
query on the three tables says when) and ``ARENA_LEADERBOARD_REFRESH_S`` has passed: viewers in between get the kept
table with its age.
"""

from __future__ import annotations

import threading
import time

import gradio as gr
import pandas as pd

from arena.web.context import AppContext
from datamodel.snapshots import change_marks
from judges.compare import CompareOptions, compare_judges
from judges.human_compare import HumanCompareOptions, compare_with_humans

MIN_SHARED = 30  # as `python -m judges compare`'s default
ROUNDS = 100
HEADERS = ("scope", "judge", "shared battles", "accuracy", "accuracy (ties)", "kappa", "rho", "rho 95% CI", "tau",
           "first-position win rate", "p", "both-order disagreement", "tie rate judge/human",
           "both-bad rate judge/human", "failed parse", "USD / 1k", "seconds / 1k")
INTRO = ("### Which judge to trust\nEvery judge voter against the human votes on the same battles: accuracy on "
         "decisive human votes and with ties (GenAI-Bench), Cohen's κ, the judge's own ranking against the humans' "
         "(Spearman ρ with its bootstrap interval, Kendall τ), position bias, tie and both-bad rates, failed "
         f"parses, cost and latency per 1,000 judgments. Below {MIN_SHARED} shared battles a row says "
         "*insufficient*. The human ceiling is two annotators on the same battle. Best κ first.")
HUMAN_HEADERS = ("task", "judge", "compared", "items", "pairs", "accuracy", "kappa", "Pearson", "Spearman")
HUMAN_INTRO = ("### Judges against the human ratings\nThe rating tasks' judges on the items people rated (the "
               "Ratings tab): a fit judge or the CLIP evaluator against every expert fit (accuracy, Cohen's κ); the "
               "SemVarBench judge's SemVarEffect per item against the raters' (Pearson, Spearman, and κ of its sign, "
               "Table 12's columns); the SANEval scorer against the mean Likert rating per image (Spearman). The "
               f"human ceiling is rater against rater. Below {MIN_SHARED} shared items a row says *insufficient*.")


def human_rows_of(table: pd.DataFrame) -> list[list]:
    """The judges-against-ratings table as the sub-tab shows it (rounded; blanks where insufficient)."""
    rows = []
    for row in table.itertuples():
        head = [row.task, row.judge, row.compared, int(row.items), int(row.pairs)]
        if row.insufficient:
            rows.append(head + ["insufficient", "", "", ""])
        else:
            rows.append(head + [_cell(row.accuracy), _cell(row.kappa), _cell(row.pearson), _cell(row.spearman)])
    return rows


def _cell(value, digits: int = 3) -> str:
    return "" if value is None or value != value else f"{value:.{digits}f}"


def rows_of(table: pd.DataFrame) -> list[list]:
    """The comparison table as the sub-tab shows it (the command's figures, rounded; blanks where insufficient)."""
    rows = []
    for row in table.itertuples():
        head = [row.scope, row.judge, int(row.shared_battles)]
        if row.insufficient:
            rows.append(head + ["insufficient"] + [""] * (len(HEADERS) - 4))
            continue
        interval = f"[{_cell(row.spearman_low, 2)}, {_cell(row.spearman_high, 2)}]" \
            if row.spearman_low == row.spearman_low else ""
        rows.append(head + [
            _cell(row.accuracy), _cell(row.accuracy_ties), _cell(row.kappa), _cell(row.spearman, 2), interval,
            _cell(row.kendall, 2), _cell(row.first_win_rate), _cell(row.first_win_p, 4),
            _cell(row.both_order_disagreement), f"{_cell(row.tie_rate, 2)} / {_cell(row.human_tie_rate, 2)}",
            f"{_cell(row.both_bad_rate, 2)} / {_cell(row.human_both_bad_rate, 2)}", _cell(row.failed_parse_rate),
            _cell(row.cost_per_1000, 2), _cell(row.latency_s_per_1000, 1)])
    return rows


class JudgesView:
    """The latest comparison of one app, with the state of the votes and judgments it was computed on."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.lock = threading.Lock()
        self.key: tuple | None = None
        self.rows: list[list] = []
        self.human_rows: list[list] = []
        self.at = 0.0

    def _state(self, db) -> tuple:
        return change_marks(db)

    def __call__(self) -> tuple[list[list], str]:
        """The kept table, computed again first when a vote or judgment was added since and the table is at least
        ``leaderboard_refresh_s`` old (so no request, however many, makes it compute more often than that)."""
        with self.lock:  # one computation at a time; the others wait for it and get its table
            db = self.ctx.store.db()
            key = self._state(db)
            # as the leaderboard's snapshots: at most once per ARENA_LEADERBOARD_REFRESH_S while the data changes
            stale = self.key is None or time.time() - self.at >= self.ctx.settings.leaderboard_refresh_s
            if key != self.key and stale:
                table = compare_judges(db, CompareOptions(min_shared=MIN_SHARED, rounds=ROUNDS, subsets=False))
                human = compare_with_humans(db, HumanCompareOptions(min_shared=MIN_SHARED))
                self.key, self.rows, self.human_rows, self.at = key, rows_of(table), human_rows_of(human), time.time()
            rows, at = self.rows, self.at
        if not any(row[1] not in ("human ceiling",) for row in rows):
            note = ("*No judge votes yet: run a judge on the human battles, e.g. `python -m judges pairwise "
                    "--source human`.*")
        else:
            note = f"*Computed {max(0, int(time.time() - at))} s ago on every vote and judgment so far.*"
        return rows, note


def build_judges_panel(ctx: AppContext, tab: gr.Tab) -> None:
    """The Judges sub-tab's content, inside ``tab``; it loads when the sub-tab is opened."""
    view = JudgesView(ctx)
    gr.Markdown(INTRO)
    refresh = gr.Button("Refresh", elem_id="lb-judges-refresh", scale=0)
    note = gr.Markdown(elem_id="lb-judges-note")
    table = gr.DataFrame(headers=list(HEADERS), elem_id="lb-judges", interactive=False, wrap=False,
                         max_height=10000)
    gr.Markdown(HUMAN_INTRO)
    human = gr.DataFrame(headers=list(HUMAN_HEADERS), elem_id="lb-judges-ratings", interactive=False, wrap=False,
                         max_height=10000)

    def show():
        rows, text = view()
        human_rows = view.human_rows
        return (gr.update(value=pd.DataFrame(rows, columns=list(HEADERS))), text,
                gr.update(value=pd.DataFrame(human_rows, columns=list(HUMAN_HEADERS))))

    tab.select(show, None, [table, note, human], api_visibility="private", concurrency_limit=1)
    refresh.click(show, None, [table, note, human], api_name="judges_compare", concurrency_limit=1)
