"""The leaderboard's Judges sub-tab: which judge to trust, the table of ``python -m judges compare``, for the
suite, subset and judge chosen in the leaderboard's menus.

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

from arena.leaderboard.compute import judge_voters
from arena.web.context import AppContext, bind
from arena.web.visitors import for_visitors
from datamodel import catalog
from datamodel.snapshots import change_marks
from judges.compare import CompareOptions, compare_judges
from judges.human_compare import HumanCompareOptions, compare_with_humans
from judges.rating_tasks import RATING_TASKS
from suites.registry import suite_title


def suite_names(db) -> set[str]:
    return set(catalog.suite_names(db))


def subset_names(db, suite: str) -> set[str]:
    return set(catalog.subsets_of(db, suite))


MIN_SHARED = 30  # as `python -m judges compare`'s default
ROUNDS = 100
HEADERS = ("Scope", "Judge", "Shared battles", "Accuracy", "Accuracy with ties", "Cohen's κ", "Spearman ρ",
           "ρ 95% interval", "Kendall τ", "First image's win rate", "Position bias p", "Flips when swapped",
           "Ties: judge / human", "Both bad: judge / human", "Failed replies", "USD per 1,000", "Seconds per 1,000")
INTRO = "### Which judge agrees with people?"
INTRO_DETAILS = ("Every judge voter against the human votes on the same battles: accuracy on decisive human votes and "
                 "with ties (GenAI-Bench), Cohen's κ, the judge's own ranking against the humans' (Spearman ρ with "
                 "its bootstrap interval, Kendall τ), position bias, tie and both-bad rates, failed parses, cost and "
                 f"latency per 1,000 judgments. Below {MIN_SHARED} shared battles a row says *insufficient*. The "
                 "human ceiling is two annotators on the same battle. Best κ first.")
HUMAN_HEADERS = ("Task", "Judge", "Compared", "Items", "Pairs", "Accuracy", "Cohen's κ", "Pearson r", "Spearman ρ")
HUMAN_INTRO = "### Judges against the human ratings"
HUMAN_DETAILS = ("The rating tasks' judges on the items people rated (the Ratings tab): a fit judge or the CLIP "
                 "evaluator against every expert fit (accuracy, Cohen's κ); the SemVarBench judge's SemVarEffect per "
                 "item against the raters' (Pearson, Spearman, and κ of its sign, Table 12's columns); the SANEval "
                 "scorer against the mean Likert rating per image (Spearman). The human ceiling is rater against "
                 f"rater. Below {MIN_SHARED} shared items a row says *insufficient*.")


def scope_title(scope: str) -> str:
    """A row's scope as the page names it: "All suites", a suite's title, "title / subset"."""
    if scope == "all":
        return "All suites"
    suite, _, subset = scope.partition("/")
    return f"{suite_title(suite)} / {subset}" if subset else suite_title(suite)


def task_title(name: str) -> str:
    """A rating task as the page names it: its title up to the question ("Commonsense-T2I"), its name if unknown."""
    task = RATING_TASKS.get(name, None)
    return task.title.split(":")[0] if task else name


def human_rows_of(table: pd.DataFrame) -> list[list]:
    """The judges-against-ratings table as the sub-tab shows it (rounded; blanks where insufficient)."""
    rows = []
    for row in table.itertuples():
        head = [task_title(row.task), row.judge, row.compared, int(row.items), int(row.pairs)]
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
        head = [scope_title(row.scope), row.judge, int(row.shared_battles)]
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
    """The latest comparison of one app per suite (None: all suites), each with the state of the votes and judgments
    it was computed on."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.lock = threading.Lock()
        self.kept: dict[str | None, tuple[tuple, list[list], list[list], float]] = {}

    def _state(self, db) -> tuple:
        return change_marks(db)

    def tables(self, suite: str | None = None) -> tuple[list[list], list[list], float]:
        """(judge rows, rating-task rows, when computed) for ``suite``, computed again first when a vote or judgment
        was added since and the kept table is at least ``leaderboard_refresh_s`` old (so no request, however many,
        makes one suite's table compute more often than that)."""
        with self.lock:  # one computation at a time; the others wait for it and get its table
            db = self.ctx.store.db()
            key = self._state(db)
            kept = self.kept.get(suite)
            stale = kept is None or time.time() - kept[3] >= self.ctx.settings.leaderboard_refresh_s
            if kept is None or (kept[0] != key and stale):  # no table kept is always stale
                table = compare_judges(db, CompareOptions(min_shared=MIN_SHARED, rounds=ROUNDS,
                                                          subsets=suite is not None, suite=suite))
                human = compare_with_humans(db, HumanCompareOptions(min_shared=MIN_SHARED, suite=suite))
                kept = self.kept[suite] = (key, rows_of(table), human_rows_of(human), time.time())
            return kept[1], kept[2], kept[3]

    def __call__(self, suite: str | None = None, subset: str | None = None,
                 judge: str | None = None) -> tuple[list[list], list[list], str]:
        """The rows for the leaderboard's filters (a subset's rows, one judge's rows and the human ceiling) and the
        note under them: which filters the table follows, or why it is empty."""
        rows, human_rows, at = self.tables(suite)
        if subset:
            scope = scope_title(f"{suite}/{subset}")
            rows = [row for row in rows if row[0] == scope]
        if judge:
            rows = [row for row in rows if row[1] in (judge, "human ceiling")]
            human_rows = [row for row in human_rows if row[1] in (judge, "rater ceiling", "human ceiling")]
        shown = " + ".join(part for part in (f"Suite {suite_title(suite)}" if suite else "",
                                             f"Subset {subset}" if subset else "", f"Judge {judge}" if judge else "")
                           if part)
        following = (f"For {shown}" if shown else "For every suite") + (
            "; the other menus (voter, protocol, ties, sources) do not apply to a comparison of judges with people.")
        if not any(row[1] != "human ceiling" for row in rows):
            note = for_visitors(f"*No judge votes here yet: run a judge on the human battles with `python -m judges "
                                f"pairwise --source human`. {following}*")
        else:
            note = f"*Computed {max(0, int(time.time() - at))} s ago on every vote and judgment so far. {following}*"
        return rows, human_rows, note


def judges_tables(view: JudgesView, *values):
    """The tables for the menus' values (suite, subset, judge, as many as the panel follows); a value that is not a
    suite, subset or judge of the arena counts as none chosen (the leaderboard's own event refuses it in words)."""
    chosen = dict(zip(("suite", "subset", "judge"), values))
    db = view.ctx.store.db()
    wanted = chosen.get("suite")
    wanted = wanted if wanted in suite_names(db) else None
    subset_value = chosen.get("subset")
    subset_value = subset_value if wanted and subset_value in subset_names(db, wanted) else None
    judge_value = chosen.get("judge")
    judge_value = judge_value if judge_value in judge_voters(db) else None
    rows, human_rows, text = view(wanted, subset_value, judge_value)
    return (gr.update(value=pd.DataFrame(rows, columns=list(HEADERS))), text,
            gr.update(value=pd.DataFrame(human_rows, columns=list(HUMAN_HEADERS))))


def build_judges_panel(ctx: AppContext, tab: gr.Tab, suite: gr.Dropdown | None = None,
                       subset: gr.Dropdown | None = None, judge: gr.Dropdown | None = None, *,
                       refresh: gr.Button) -> None:
    """The Judges sub-tab's content, inside ``tab``; it loads when the sub-tab is opened, follows the
    leaderboard's ``suite``, ``subset`` and ``judge`` menus and computes again at the leaderboard's ``refresh``
    (its own Refresh button only where the panel stands alone)."""
    view = JudgesView(ctx)
    gr.Markdown(INTRO)
    with gr.Accordion("What this table shows", open=False):
        gr.Markdown(INTRO_DETAILS)
    note = gr.Markdown(elem_id="lb-judges-note")
    table = gr.DataFrame(headers=list(HEADERS), elem_id="lb-judges", interactive=False, wrap=False,
                         max_height=10000)
    gr.Markdown(HUMAN_INTRO)
    with gr.Accordion("What this table shows", open=False):
        gr.Markdown(HUMAN_DETAILS)
    human = gr.DataFrame(headers=list(HUMAN_HEADERS), elem_id="lb-judges-ratings", interactive=False, wrap=False,
                         max_height=10000)
    menus = [menu for menu in (suite, subset, judge) if menu is not None]

    show = bind(view, judges_tables, "show")
    tab.select(show, menus, [table, note, human], api_visibility="private", concurrency_limit=1)
    refresh.click(show, menus, [table, note, human], api_name="judges_compare", concurrency_limit=1)
    for menu in menus:
        menu.change(show, menus, [table, note, human], api_visibility="private", concurrency_limit=1,
                    show_progress="hidden")
