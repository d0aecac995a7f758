"""The leaderboard tab: human and judge ELO with 95% CIs beside the metrics, slice filters, agreement and plots.

Everything shown comes from the latest snapshot for the chosen filters (:mod:`arena.leaderboard.service`), computed
in a worker
process: a viewer, the tab's timer and the ``/leaderboard`` API get it at once, with its age, and never compute it
in the process that answers votes. Filter values are checked against the menus first, so no request can start a
computation for made-up filters.

Annotators' names and results are private. The Voter menu lists the judges (their leaderboards are public) and,
per page, the annotator signed in on its Arena tab, or every annotator once its Admin tab is unlocked: the page's
own server-side state (:class:`Viewer`), which a client cannot set. The menu sent with the page (Gradio's
``/config``) holds only the judges, a voter filter for any other name is refused alike whether or not the name
exists, and the inter-annotator table names no annotator but the viewer (:func:`arena.leaderboard.view.hide_annotators`)
unless the viewer is the admin.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import gradio as gr

from arena.leaderboard.compute import judge_voters, leaderboard_options
from arena.leaderboard.service import Snapshot, options_key
from arena.leaderboard.view import board_fit, header_tips, hide_annotators, history_json, kept_table
from arena.web.admin_session import Holder
from arena.web.context import AppContext, bind
from arena.web.judges_tab import build_judges_panel
from arena.web.visitors import for_visitors
from core.protocols import PROTOCOLS
from datamodel.annotators import annotator_name_list
from datamodel.catalog import prompt_column_values, suite_slices
from datamodel.imported_votes import import_sources
from datamodel.metrics import metric_directions
from datamodel.rating_history import KeptBoard, any_kept_days, board_as_of, end_of_day, history
from datamodel.vote_arrays import ARENA_SOURCE
from datamodel.vote_table import category_choices
from judges.metrics.registry import METRICS
from ratings.protocols import DEFAULT_PROTOCOL
from ratings.votes import TIE_POLICIES
from suites.registry import suite_title

ALL = "All"
MOST_VOTES = "Most votes"  # the Judge column menu's default: the judge with the most votes in the view
MOST_VOTES_BEFORE = "The one with the most votes"  # its earlier label, still taken from API clients
LEADERBOARD_POLL_S = 5.0  # the open tab asks for the latest snapshot this often
FIRST_VIEW_WAIT_S = 20.0  # a viewer of filters never computed before waits at most this long for the first snapshot
CHOICES_MAX_AGE_S = 10.0  # the menus' choices are read again at most this often


def header_tip_table(db) -> dict:
    """Every leaderboard table header's tooltip, per table id (the page's ``#lb-header-tips`` data, which
    ``static/leaderboard.html`` sets as each header's title): the fixed columns' meanings and each metric's full name
    and direction (the registered metrics', and any other the database records)."""
    metrics = {name: (direction, "") for name, direction in metric_directions(db).items()}
    metrics.update({name: (direction, metric.title) for metric in METRICS.values()
                    for name, direction in metric.outputs().items()})
    return header_tips(metrics)


def _column_values(column: str):
    def values(db) -> list[str]:
        return prompt_column_values(db, column)

    return values


def judge_names(db) -> list[str]:
    """Every judge voter, by name: the Voter menu everyone sees (a judge's leaderboard is public)."""
    return sorted(judge_voters(db))


def annotator_names(db) -> list[str]:
    """Every annotator, by name: the admin's Voter menu, sent to no one else."""
    return annotator_name_list(db)


FILTERS = {  # dropdown label: function of the database giving the choices
    "Suite": _column_values("suite"),
    "Subset": _column_values("subset"),
    "Prompt variant": _column_values("variant"),
    "Category": category_choices,  # metadata category, and every entry of a categories list
}
MENUS = {**FILTERS, "Voter": judge_names, "Judge column": judge_voters}  # the menus as everyone sees them
ANNOTATORS = "Annotators"  # the cached choices' key of every annotator's name (the admin's Voter menu)
SOURCES = "Votes from"  # the cached choices' key of the vote sources: the arena's own and each import source
AS_OF = "As of"  # the cached choices' key of the days a board is kept for (datamodel.rating_history)
NOW = "Now"
ORDER_CHOICES = [("Rating", "rating"), ("Lower bound of the 95% interval", "lower")]
MODE_CHOICES = [("Human votes", "human"), ("Human + judge votes (PPI)", "ppi")]
FOLLOW_SUITE = ("Subset", "Prompt variant", "Category")  # the menus whose choices follow the chosen suite


def shown_choices(label: str, values: list[str]) -> list:
    """A menu's choices as the page shows them: the suites by their titles (the value stays the suite's name, as
    the Arena tab's menu names them), every other value as it is."""
    return [(suite_title(value), value) for value in values] if label == "Suite" else list(values)


def suite_choices(db) -> dict[str, dict[str, list[str]]]:
    """Per suite, the Subset, Prompt variant and Category choices of its prompts: a menu offers only values of the
    chosen suite, so filters cannot combine into a view no prompt is in (e.g. Suite commonsense + Subset Easy)."""
    by_suite: dict[str, dict[str, set[str]]] = {}
    for suite, *values in suite_slices(db):
        menus = by_suite.setdefault(str(suite), {label: set() for label in FOLLOW_SUITE})
        for label, value in zip(FOLLOW_SUITE, values):
            if value not in (None, ""):
                menus[label].add(str(value))
    return {suite: {label: sorted(values) for label, values in menus.items()} for suite, menus in by_suite.items()}


class MenuChoices:
    """The menus' choices, read again at most every ``max_age_s`` seconds (thread-safe)."""

    def __init__(self, ctx: AppContext, max_age_s: float = CHOICES_MAX_AGE_S):
        self.ctx, self.max_age_s = ctx, max_age_s
        self._lock = threading.Lock()
        self._choices: dict[str, list[str]] = {}
        self._read_at = -float("inf")
        self._by_suite: dict[str, dict[str, list[str]]] = {}

    def following(self, suite: str | None) -> dict[str, list[str]]:
        """The Subset, Prompt variant and Category choices of ``suite`` (every value when no suite is chosen)."""
        choices = self()
        with self._lock:
            if suite in (None, "", ALL):
                return {label: choices[label] for label in FOLLOW_SUITE}
            return self._by_suite.get(suite, {label: [] for label in FOLLOW_SUITE})

    def __call__(self) -> dict[str, list[str]]:
        with self._lock:
            if time.monotonic() - self._read_at >= self.max_age_s:
                db = self.ctx.store.db()
                self._choices = {**{label: values(db) for label, values in MENUS.items()},
                                 ANNOTATORS: annotator_names(db), SOURCES: [ARENA_SOURCE, *import_sources(db)],
                                 AS_OF: any_kept_days(db)}
                self._by_suite = suite_choices(db)
                self._read_at = time.monotonic()
            return self._choices


@dataclass(frozen=True)
class Viewer:
    """Who looks at the tab, from its page's server-side state: the annotator signed in on the Arena tab (None:
    nobody) and whether the page holds a live admin session (its Admin tab unlocked, not yet expired)."""

    annotator: str | None = None
    admin: bool = False

    @classmethod
    def of(cls, session, admin: bool) -> Viewer:
        """The viewer of a page whose Arena tab holds ``session`` (an ArenaSession or None); ``admin``: whether the
        page holds a live admin session."""
        annotator = getattr(getattr(session, "annotator", None), "name", None)
        return cls(annotator if isinstance(annotator, str) else None, admin is True)

    def voters(self, choices: dict[str, list[str]]) -> list[str]:
        """The Voter menu this viewer gets: their own name or, for the admin, every annotator's, then the judges."""
        own = choices[ANNOTATORS] if self.admin else [self.annotator] if self.annotator else []
        return [*own, *(name for name in choices["Voter"] if name not in own)]


def voter_refused(value: object) -> str:
    """Why a voter filter is refused: the same words for an annotator's name and a made-up one."""
    return (f"Unknown voter {str(value)[:80]!r}: pick one from the Voter menu. An annotator's own results are shown "
            "only to that annotator, signed in on the Arena tab of this page, and to the admin.")


def age_text(snapshot: Snapshot, status: str) -> str:
    """When the shown leaderboard was computed, and whether a newer one is on its way."""
    age = snapshot.age()
    when = "just now" if age < 1 else f"{age:.0f} s ago" if age < 120 else f"{age / 60:.0f} min ago"
    text = f"*Updated {when} (computed in {snapshot.seconds:.1f} s)"
    if status == "updating" and snapshot.view.get("pending"):  # a staged board (arena.leaderboard.service)
        text += "; the agreement between annotators is being computed and will show here by itself"
    elif status == "updating":
        text += "; newer votes are being counted and will show here by themselves"
    elif status:
        text += f"; the last update failed ({status})"
    return text + ".*\n\n"


@dataclass(frozen=True)
class Board:
    """What the leaderboard tab's handlers share: the app's context and the menus' choices (read again at most every
    few seconds)."""

    ctx: AppContext
    menus: MenuChoices


EMPTY_TABLE: dict[str, Any] = {"headers": [], "data": [], "metadata": None}


# --- the handlers: each takes the tab's Board first (arena.web.context.bind hands it over) ---------------------------


def options_of(board: Board, suite, subset, variant, category, who, policy, with_excluded, judge_voter,
               viewer: Viewer, chosen_protocol=DEFAULT_PROTOCOL, chosen_source=ALL, anonymous_only=False,
               chosen_order=None, chosen_mode=None):
    """The leaderboard options of the menus' values; a value not in ``viewer``'s menu is refused (nothing
    computed)."""
    choices = board.menus()
    choices = {**choices, "Voter": viewer.voters(choices)}
    chosen = {}
    for label, value in zip(MENUS, (suite, subset, variant, category, who, judge_voter)):
        if value in (None, "", ALL, MOST_VOTES, MOST_VOTES_BEFORE):
            continue
        if value not in choices[label]:
            if label == "Voter":
                raise gr.Error(voter_refused(value))
            if label == "Judge column":
                raise gr.Error(f"No judge votes from {str(value)[:80]!r}. Judges with votes: "
                               f"{', '.join(choices[label]) or 'none'}; pass one of them.")
            raise gr.Error(f"Unknown {label.lower()} {str(value)[:80]!r}: pick one from the {label} menu.")
        chosen[label] = value
    if policy not in (None, "", *TIE_POLICIES):
        raise gr.Error(f"Unknown tie policy {str(policy)[:40]!r}: pick one of {', '.join(TIE_POLICIES)}.")
    if chosen_protocol not in (None, "", *PROTOCOLS):
        raise gr.Error(f"Unknown rating protocol {str(chosen_protocol)[:40]!r}: pick one of "
                       f"{', '.join(PROTOCOLS)}.")
    if chosen_source not in (None, "", ALL, *choices[SOURCES]):
        raise gr.Error(f"Unknown source {str(chosen_source)[:80]!r}: pick one from the {SOURCES} menu.")
    if chosen_order not in (None, "", *(value for _, value in ORDER_CHOICES)):
        raise gr.Error(f"Unknown order {str(chosen_order)[:40]!r}: pick one from the Order by menu.")
    if chosen_mode not in (None, "", *(value for _, value in MODE_CHOICES)):
        raise gr.Error(f"Unknown human column {str(chosen_mode)[:40]!r}: pick one from the Human column menu.")
    if chosen_mode == "ppi" and chosen_protocol not in (None, "", DEFAULT_PROTOCOL):
        raise gr.Error("Human + judge votes (PPI) are fitted by the arena protocol: pick it as the Rating "
                       "protocol, or the human votes alone.")
    return leaderboard_options(
        board.ctx.settings,
        suite=chosen.get("Suite"), subset=chosen.get("Subset"), variant=chosen.get("Prompt variant"),
        category=chosen.get("Category"), voter=chosen.get("Voter"), judge=chosen.get("Judge column"),
        tie_policy=policy or None, include_excluded=with_excluded is True,
        protocol=chosen_protocol or None, source=None if chosen_source in (None, "", ALL) else chosen_source,
        anonymous_only=anonymous_only is True, order=chosen_order or None, mode=chosen_mode or None)


def show(board: Board, suite: str, subset: str, variant: str, category: str, who: str, policy: str,
         with_excluded: bool, judge_voter: str = MOST_VOTES, chosen_protocol: str = DEFAULT_PROTOCOL,
         chosen_source: str = ALL, anonymous_only: bool = False, day: str = NOW, chosen_order: str | None = None,
         chosen_mode: str | None = None, session=None, admin_id=None, request: gr.Request | None = None,
         refresh: bool = False):
    """The leaderboard for the menus' values, from the latest snapshot (``refresh``: a newer one asked for), as the
    page's outputs (:func:`wire_leaderboard_tab`); a past day's board in place of the main table where one is
    picked."""
    ctx = board.ctx
    viewer = Viewer.of(session, ctx.admins.live(admin_id, Holder.of(request), touch=False))
    options = options_of(board, suite, subset, variant, category, who, policy, with_excluded, judge_voter, viewer,
                         chosen_protocol, chosen_source, anonymous_only, chosen_order, chosen_mode)
    as_of, bad_day = chosen_day(day)
    snapshot, status = ctx.snapshots.view(ctx.store.db(), options, refresh=refresh, wait_s=FIRST_VIEW_WAIT_S)
    if snapshot is None:
        why = f"It could not be computed: {status}." if status not in ("", "updating") else \
            "It is being computed and shows here by itself in a few seconds."
        empty = EMPTY_TABLE
        return [f"*No leaderboard for these filters yet. {why}*", "", empty, "", None, None, empty, "", empty, "",
                None, None, empty, None, None, empty]
    view, tables, figures = snapshot.view, snapshot.view["tables"], snapshot.view["figures"]
    plot = lambda name: {"type": "plotly", "plot": figures[name]} if name in figures else None  # noqa: E731
    notes = view.get("notes", {})
    plan = f" {view['plan']}" if view.get("plan") else ""  # the study planner's line (arena.study_plan), same line
    shown = [f"**{view.get('headline', '')}** {age_text(snapshot, status).strip()}{plan}", tables["table"],
             notes.get("table", ""), plot("chart")]
    if as_of is not None:
        shown = as_of_view(ctx.store.db(), options_key(options), as_of)
    if bad_day:  # today's board under a line that says what was wrong with the day typed
        shown[0] = f"**{bad_day}** The board below is today's.\n\n{shown[0]}"
    outputs = [
        shown[0], view["summary"], *shown[1:], plot("history"),
        tables.get("metrics", EMPTY_TABLE), notes.get("metrics", ""),
        tables["correlations"], notes.get("correlations", ""), plot("confusion"), plot("outcomes"), tables["bias"],
        plot("wins"), plot("counts"),
        tables["pairs"] if viewer.admin else hide_annotators(tables["pairs"], keep=viewer.annotator),
    ]
    return outputs if viewer.admin else [for_visitors_output(value) for value in outputs]


def for_visitors_output(value):
    """An output of :func:`show` as a visitor gets it: its text (a note, or a chart's JSON) without command lines."""
    if isinstance(value, dict) and value.get("type") == "plotly":
        return {**value, "plot": for_visitors(value["plot"])}
    return for_visitors(value)


def history_api(board: Board, suite: str = ALL, subset: str = ALL, variant: str = ALL, category: str = ALL,
                voter_name: str = ALL, policy: str = "", with_excluded: bool = False,
                judge_voter: str = MOST_VOTES, chosen_protocol: str = DEFAULT_PROTOCOL,
                chosen_source: str = ALL, anonymous_only: bool = False) -> dict:
    """The leaderboard over time for these filters: every board kept, one per day (UTC), oldest first, each
    with every model's rating, 95% interval and votes (as ``python -m arena leaderboard --history --json``).
    Annotators' own boards are private: the voter may only be a judge here."""
    options = options_of(board, suite, subset, variant, category, voter_name, policy, with_excluded, judge_voter,
                         Viewer(), chosen_protocol, chosen_source, anonymous_only)
    return history_json(board.ctx.store.db(), options_key(options))


def leaderboard_menus(board: Board, session=None, admin_id=None, request: gr.Request | None = None):
    """The menus' choices as of now, the Voter menu for this page's viewer."""
    choices = board.menus()
    viewer = Viewer.of(session, board.ctx.admins.live(admin_id, Holder.of(request), touch=False))
    return [*(gr.update(choices=[ALL, *shown_choices(label, choices[label])]) for label in FILTERS),
            gr.update(choices=[ALL, *viewer.voters(choices)]),
            gr.update(choices=[MOST_VOTES, *choices["Judge column"]]),
            gr.update(choices=[ALL, *choices[SOURCES]]), gr.update(choices=[NOW, *choices[AS_OF]])]


def follow_suite(board: Board, suite, *values):
    """The Subset, Prompt variant and Category menus offer only the chosen suite's values; a value the suite
    lacks goes back to All (the change of those menus then shows the leaderboard)."""
    choices = board.menus.following(suite)
    return [gr.update(choices=[ALL, *choices[label]], value=value if value in choices[label] else ALL)
            for label, value in zip(FOLLOW_SUITE, values)]


# --- the layout and the wiring ---------------------------------------------------------------------------------------


def build_leaderboard_tab(ctx: AppContext, tab: gr.Tab, timer: gr.Timer, signed_in: gr.State | None = None,
                          admin: gr.State | None = None) -> gr.Dropdown:
    """Lay out the leaderboard and wire it; it loads when its tab is opened (so no model name reaches an arena-only
    page).

    ``signed_in`` is the Arena tab's session state and ``admin`` the Admin tab's admin session id
    (:class:`arena.web.admin_session.AdminSessions`), which together make the :class:`Viewer`; without them every
    viewer is anonymous.
    """
    board = Board(ctx, MenuChoices(ctx))
    # the summary line first, then the filters folded into one line that says what is applied, then the table
    summary = gr.Markdown(elem_id="lb-summary")  # one plain line: the votes, what is rated, how fresh
    with gr.Row(elem_id="lb-folds"):  # the two folded lines side by side where there is room
        with gr.Accordion(applied_line(ctx.settings), open=False, elem_id="lb-filters") as fold:
            menus = filter_menus(ctx.settings, board.menus())
        with gr.Accordion("Statistics: how the ratings were made, where the votes come from, agreement", open=False,
                          elem_id="lb-details"):
            details = gr.Markdown(elem_id="lb-details-text")
    view = {**menus, "fold": fold, **result_panels(ctx, menus, summary, details)}
    viewer_states = [gr.State(None) if signed_in is None else signed_in, gr.State(None) if admin is None else admin]
    wire_leaderboard_tab(board, view, tab, timer, viewer_states)
    return view["voter"]


def filter_menus(settings, first: dict) -> dict:
    """Lay out the filter menus, with the choices as of start-up (refreshed whenever the tab opens); by name."""
    with gr.Row():
        dropdowns = [gr.Dropdown([ALL, *shown_choices(label, first[label])], value=ALL, label=label,
                                 allow_custom_value=True, elem_id=f"lb-{label.split()[-1].lower()}")
                     for label in FILTERS]
        # Only the judges here: these choices are part of the page's configuration, which anyone can read.
        voter = gr.Dropdown([ALL, *Viewer().voters(first)], value=ALL, label="Voter", elem_id="lb-voter",
                            allow_custom_value=True)
        judge = gr.Dropdown([MOST_VOTES, *first["Judge column"]], value=MOST_VOTES, label="Judge column",
                            elem_id="lb-judge", allow_custom_value=True)
    with gr.Row():
        # the rating protocols (ratings.protocols): the arena's own fit, or a published board's, stated in the summary
        protocol = gr.Dropdown([(f"{name}: {p.title}", name) for name, p in PROTOCOLS.items()], value=DEFAULT_PROTOCOL,
                               label="Rating protocol", elem_id="lb-protocol")
        source = gr.Dropdown([ALL, *first[SOURCES]], value=ALL, label=SOURCES, elem_id="lb-source",
                             allow_custom_value=True)
        anonymous = gr.Checkbox(label="Anonymous votes only", value=False, elem_id="lb-anonymous")
        # the board as kept on a past day (the leaderboard over time, datamodel.rating_history)
        as_of = gr.Dropdown([NOW, *first[AS_OF]], value=NOW, label="As of (UTC day)", elem_id="lb-as-of",
                            allow_custom_value=True)
    with gr.Row():
        tie_policy = gr.Dropdown(list(TIE_POLICIES), value=settings.tie_policy, label="Ties and both-bad",
                                 elem_id="lb-tie-policy")
        # the ranked models by rating or by the lower bound of their interval (ratings.ranks)
        order = gr.Dropdown(ORDER_CHOICES, value=settings.leaderboard_order, label="Order by", elem_id="lb-order")
        # the human column from human votes, or from human and judge votes with the PPI correction
        mode = gr.Dropdown(MODE_CHOICES, value="human", label="Human column from", elem_id="lb-mode")
        include_excluded = gr.Checkbox(label="Include excluded votes", value=False, elem_id="lb-include-excluded")
        refresh = gr.Button("Refresh", elem_id="lb-refresh", scale=0)
    return dict(dropdowns=dropdowns, voter=voter, judge=judge, protocol=protocol, source=source, anonymous=anonymous,
                as_of=as_of, tie_policy=tie_policy, order=order, mode=mode, include_excluded=include_excluded,
                refresh=refresh)


def result_panels(ctx: AppContext, menus: dict, summary: gr.Markdown, details: gr.Markdown) -> dict:
    """Lay out the sub-tabs of results (the Judges sub-tab's panel follows ``menus``' suite, subset and judge and its
    refresh); with ``summary`` and ``details`` (the statistics), the outputs of :func:`show`, in order."""
    settings = ctx.settings
    # every sub-tab's name in view, on a phone on two rows (Gradio's default hid three behind a "•••" menu)
    with gr.Tabs(elem_id="lb-tabs", overflow_behavior="wrap"):
        with gr.Tab("Ratings", id="lb-ratings-tab"):
            # every row shown (no scrolling inside the table): a leaderboard has one row per model. On a phone
            # static/leaderboard.css fits rank, model, rating and interval on the screen and keeps the model's name
            # at the left edge while the other columns scroll sideways (Gradio 6's pinned_columns pins nothing)
            table = gr.DataFrame(elem_id="lb-table", interactive=False, wrap=False, max_height=10000)
            table_note = gr.Markdown(elem_id="lb-table-note")
            # no "Plot" label over the charts: it covered their titles (each figure has its own)
            chart = gr.Plot(elem_id="lb-chart", show_label=False)
            history_chart = gr.Plot(elem_id="lb-history", show_label=False)  # each model's rating by day
        with gr.Tab("Metrics", id="lb-metrics-tab"):
            metrics = gr.DataFrame(elem_id="lb-metrics", interactive=False, wrap=False, max_height=10000)
            metrics_note = gr.Markdown(elem_id="lb-metrics-note")
            gr.Markdown("### Do the judge and the metrics rank the models as people do?")
            correlations = gr.DataFrame(elem_id="lb-correlations", interactive=False, max_height=10000)
            correlations_note = gr.Markdown(elem_id="lb-correlations-note")
        with gr.Tab("Agreement", id="lb-agreement-tab"):
            with gr.Row():
                confusion = gr.Plot(elem_id="lb-confusion", show_label=False)
                outcomes = gr.Plot(elem_id="lb-outcomes", show_label=False)
            gr.Markdown("### Does the image shown first (A) win more often?")
            bias = gr.DataFrame(elem_id="lb-bias", interactive=False, max_height=10000)
            gr.Markdown(f"### Do annotators agree with each other?\n*Pairs of annotators who voted on at least "
                        f"{settings.agreement_min_shared} of the same battles (battles shown again to a second "
                        "person); the statistics above give Fleiss' κ over all of them.*")
            annotator_pairs = gr.DataFrame(elem_id="lb-annotator-pairs", interactive=False, max_height=10000)
        with gr.Tab("Battles", id="lb-battles-tab"):
            with gr.Row():
                wins = gr.Plot(elem_id="lb-wins", show_label=False)
                counts = gr.Plot(elem_id="lb-counts", show_label=False)
        # Further sub-tabs go here, each as its own `with gr.Tab(...)` block.
        with gr.Tab("Judges", id="lb-judges-tab") as judges_tab:
            build_judges_panel(ctx, judges_tab, menus["dropdowns"][0], menus["dropdowns"][1], menus["judge"],
                               refresh=menus["refresh"])
    return dict(outputs=[summary, details, table, table_note, chart, history_chart, metrics, metrics_note,
                         correlations, correlations_note, confusion, outcomes, bias, wins, counts, annotator_pairs])


def wire_leaderboard_tab(board: Board, view: dict, tab: gr.Tab, timer: gr.Timer, viewer_states: list) -> None:
    """Wire the leaderboard's events (``view``: its components by name) to the handlers."""
    dropdowns = view["dropdowns"]
    # the judge, then the protocol, source, anonymous-only, day, order and mode come last, so API callers that pass
    # the first seven (or eight) inputs keep working; then who is viewing (the page's server-side state: an API client
    # neither sends nor sees it)
    menus_in = [*dropdowns, *(view[name] for name in ("voter", "tie_policy", "include_excluded", "judge", "protocol",
                                                      "source", "anonymous", "as_of", "order", "mode"))]
    inputs, outputs = [*menus_in, *viewer_states], view["outputs"]  # no change event of the states: a vote changes
    # the session. Each call reads a snapshot (a small query) and sends it as the worker rendered it, already in the
    # form the components send to the page: no queue (one HTTP request) and no per-component postprocessing.
    fast: dict[str, Any] = dict(queue=False, postprocess=False, show_progress="minimal")
    following = [dropdown for label, dropdown in zip(FILTERS, dropdowns) if label in FOLLOW_SUITE]
    shown, follow = bind(board, show), bind(board, follow_suite)
    # the suite's change first updates the menus that follow it, then shows: never a view of a stale combination
    dropdowns[0].change(follow, [dropdowns[0], *following], following, queue=False,
                        api_visibility="private").then(shown, inputs, outputs, api_visibility="private", **fast)
    gr.on([c.change for c in menus_in[1:]], shown, inputs, outputs, api_name="leaderboard", **fast)
    # the timer's look for a newer snapshot shows no progress: no "0.0s" flashing over the tables every few seconds
    timer.tick(shown, inputs, outputs, api_visibility="private", **{**fast, "show_progress": "hidden"})
    view["refresh"].click(bind(board, show, name="show_fresh", refresh=True), inputs, outputs,
                          api_name="leaderboard_refresh", **fast)
    tab.select(bind(board, leaderboard_menus), viewer_states,
               [*dropdowns, *(view[name] for name in ("voter", "judge", "source", "as_of"))],
               api_visibility="private").then(
        follow, [dropdowns[0], *following], following, queue=False, api_visibility="private").then(
        shown, inputs, outputs, api_visibility="private", **fast)
    gr.api(bind(board, history_api), api_name="leaderboard_history")
    gr.on([c.change for c in menus_in], bind(board, applied_fold), menus_in, view["fold"], queue=False,
          api_visibility="private", show_progress="hidden")


def applied_fold(board: Board, *values) -> gr.Accordion:
    """The filters' fold, its line saying what the menus' ``values`` (in the order the events send them) apply."""
    return gr.Accordion(label=applied_line(board.ctx.settings, values))


def applied_line(settings, values: tuple = ()) -> str:
    """The line of the folded filters: the menus whose value is not their default, as "Menu: value", or "none"."""
    labels = [*FILTERS, "Voter", "Ties and both-bad", "Include excluded votes", "Judge column", "Rating protocol",
              SOURCES, "Anonymous votes only", "As of", "Order by", "Human column from"]
    defaults = [ALL] * 5 + [settings.tie_policy, False, MOST_VOTES, DEFAULT_PROTOCOL, ALL, False, NOW,
                            settings.leaderboard_order, "human"]
    names = {**dict((value, name) for name, value in ORDER_CHOICES),
             **dict((value, name) for name, value in MODE_CHOICES)}
    applied = []
    for label, value, default in zip(labels, values, defaults):
        if value in (None, "", default, MOST_VOTES_BEFORE) or (label == "Human column from" and value is None):
            continue
        if value is True:
            applied.append(label)
        elif value is not False:
            applied.append(f"{label}: {suite_title(value) if label == 'Suite' else names.get(value, value)}")
    return f"Filters and options: {' · '.join(applied) if applied else 'none applied: every vote, the arena protocol'}"


def chosen_day(day) -> tuple[str | None, str]:
    """The As-of menu's value as a day (None: now), and what is wrong with a value that is no date ("" if nothing):
    the page then shows today's board under that line, never an error in place of every table."""
    if day in (None, "", NOW):
        return None, ""
    try:
        end_of_day(str(day))
    except ValueError as error:
        return None, f"{error} Or pick a day from the As of menu."
    return str(day), ""


def as_of_view(db, key: str, day: str) -> list:
    """The headline, main table, its note and chart of the board kept for ``key`` on ``day`` (or the latest day
    before it); the note says when it was kept, or why there is none."""
    kept = board_as_of(db, key, day)
    empty: dict[str, Any] = {"headers": [], "data": [], "metadata": None}
    if kept is None:
        days = [item.day for item in history(db, key)]
        since = f" The history of these filters starts on {days[0]}." if days else (
            " No board has been kept for these filters yet: they are kept each day the leaderboard is computed, and "
            "python -m arena leaderboard --rebuild-history DAYS makes past days' from the votes.")
        return [f"**As of {day}: no board kept.**", empty,
                f"*No board kept for these filters on or before {day}.{since}*", None]
    return [f"**As of {kept.day}: {kept_headline(kept)}**", kept_table(kept.board),
            f"*The board as kept on {kept.day} (computed {time.strftime('%H:%M', time.gmtime(kept.computed_at))} UTC) "
            "for these filters; the chart over time is below. The Metrics, Agreement, Battles and Judges sub-tabs "
            "show today's data.*", {"type": "plotly", "plot": kept_chart(kept)}]


def kept_headline(kept: KeptBoard) -> str:
    votes = kept.board.get("votes", {})
    human, judge = votes.get("human", 0), votes.get("judge", 0)
    return f"{human:,} human vote{'s' if human != 1 else ''} · {judge:,} judge vote{'s' if judge != 1 else ''}."


def kept_chart(kept: KeptBoard) -> str:
    from arena.leaderboard import plots

    figure = plots.ratings_chart({"human": board_fit(kept.board.get("models", []))},
                                 f"Ratings as of {kept.day}, 95% intervals", provisional="hide")
    return plots.fit_narrow(figure).to_json()
