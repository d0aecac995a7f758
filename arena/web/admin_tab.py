"""The admin tab: behind the admin password, vote exports and annotator statistics.

An export is written into a fresh private temporary folder (mode 0700, outside every folder Gradio serves) and
handed to Gradio, which copies it into its own cache under a secret-seeded hash of the content: only the admin
session that asked for it receives that address. The private folder is removed a minute later.
"""

from __future__ import annotations

import hmac
import shutil
import tempfile
import threading
import time
from pathlib import Path

import gradio as gr

import pandas as pd

from datamodel.vote_table import EXPORT_FORMATS, annotator_stats, export_votes
from datamodel.quality import flagged_votes, review_vote
from sampling.coverage import votes_per_model, votes_per_pair, votes_per_prompt
from arena.web.context import AppContext


EXPORT_FOLDER_KEEP_S = 60.0  # Gradio copies the file into its cache as soon as the handler returns


def private_export_path(fmt: str, root: str | Path | None = None) -> Path:
    """Where the next export goes: a new private temporary folder (never one Gradio serves) and a dated name.

    ``root`` is the app's own exports folder (a :class:`tempfile.TemporaryDirectory`, removed with everything left
    in it when the server exits), so an export of a server stopped within the minute does not stay behind.
    """
    folder = Path(tempfile.mkdtemp(prefix="arena-export-", dir=root))
    return folder / f"votes-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"


def _remove_later(folder: Path, delay_s: float = EXPORT_FOLDER_KEEP_S) -> None:
    timer = threading.Timer(delay_s, shutil.rmtree, [folder], {"ignore_errors": True})
    timer.daemon = True
    timer.start()


def build_admin_tab(ctx: AppContext) -> None:
    password = ctx.settings.admin_password
    unlocked = gr.State(False)
    exports: list[tempfile.TemporaryDirectory] = []  # made at the first export, lives as long as the app
    exports_lock = threading.Lock()

    def exports_folder() -> str:
        with exports_lock:
            if not exports:
                exports.append(tempfile.TemporaryDirectory(prefix="arena-exports-"))
            return exports[0].name
    with gr.Column(visible=True) as lock_box:
        if not password:
            gr.Markdown("The admin tab is locked: set the ARENA_ADMIN_PASSWORD environment variable and restart.")
        password_box = gr.Textbox(label="Admin password", type="password", elem_id="admin-password")
        unlock = gr.Button("Unlock", elem_id="admin-unlock")
    with gr.Column(visible=False) as admin_box:
        gr.Markdown("### Export votes\nOne row per vote, joined with battle, prompt and models (as displayed).")
        with gr.Row():
            export_buttons = {fmt: gr.Button(f"Export {fmt.upper()}", elem_id=f"export-{fmt}") for fmt in EXPORT_FORMATS}
        export_file = gr.File(label="Export", elem_id="export-file", interactive=False)
        gr.Markdown("### Annotators")
        stats = gr.DataFrame(elem_id="annotator-stats", interactive=False)
        gr.Markdown(f"### Where the human votes went\nSampling strategy: **{ctx.settings.sampling_strategy}**. "
                    "Fewest votes first, so gaps are visible.")
        with gr.Tabs():
            with gr.Tab("Per model"):
                per_model = gr.DataFrame(elem_id="votes-per-model", interactive=False)
            with gr.Tab("Per pair"):
                per_pair = gr.DataFrame(elem_id="votes-per-pair", interactive=False)
            with gr.Tab("Per prompt"):
                per_prompt = gr.DataFrame(elem_id="votes-per-prompt", interactive=False)
        gr.Markdown("### Flagged votes\nExcluded by the quality rules (kept, never deleted) or reviewed by an admin. "
                    "An admin's decision is final.")
        flagged = gr.DataFrame(elem_id="flagged-votes", interactive=False)
        with gr.Row():
            vote_id = gr.Number(label="Vote id", precision=0, elem_id="review-vote-id")
            include_button = gr.Button("Include in ratings", elem_id="review-include")
            exclude_button = gr.Button("Exclude from ratings", elem_id="review-exclude")

    def check(given: str, is_unlocked: bool) -> bool:
        if is_unlocked:
            return True
        if password and hmac.compare_digest(str(given or "").encode(), password.encode()):
            return True
        time.sleep(0.5)  # slow down guessing
        raise gr.Error("Wrong admin password." if password else "Set ARENA_ADMIN_PASSWORD to enable the admin tab.")

    def flagged_table() -> pd.DataFrame:
        rows = flagged_votes(ctx.store.db())
        return pd.DataFrame(rows, columns=["vote_id", "voter", "outcome", "created_at", "excluded", "reviewed", "reason"])

    def do_unlock(given: str, is_unlocked: bool):
        check(given, is_unlocked)
        db = ctx.store.db()
        return (True, gr.update(visible=False), gr.update(visible=True), annotator_stats(db), flagged_table(),
                votes_per_model(db), votes_per_pair(db), votes_per_prompt(db), "")

    def do_review(exclude: bool, given: str, is_unlocked: bool, vote: float | None):
        check(given, is_unlocked)
        if vote is None:
            raise gr.Error("Enter the id of a vote from the table.")
        try:
            review_vote(ctx.store.db(), int(vote), exclude=exclude)
        except LookupError as error:
            raise gr.Error(str(error))
        if ctx.stats is not None:  # the sampler counts non-excluded votes: it reads them again, in the background
            ctx.stats.reload(ctx.store.db())
        return flagged_table()

    def do_export(fmt: str, given: str, is_unlocked: bool):
        check(given, is_unlocked)
        path = private_export_path(fmt, exports_folder())
        try:
            export_votes(ctx.store.db(), path, fmt)
        finally:
            _remove_later(path.parent)
        return str(path)

    def named(name: str, handler):
        handler.__name__ = name
        return handler

    gr.on([unlock.click, password_box.submit], named("admin_unlock", do_unlock), [password_box, unlocked],
          [unlocked, lock_box, admin_box, stats, flagged, per_model, per_pair, per_prompt, password_box],
          api_visibility="private",
          show_progress="hidden")
    for exclude, button in ((False, include_button), (True, exclude_button)):
        button.click(named(f"admin_review_{'exclude' if exclude else 'include'}",
                           lambda given, ok, vote, exclude=exclude: do_review(exclude, given, ok, vote)),
                     [password_box, unlocked, vote_id], flagged, api_visibility="private")
    for fmt, button in export_buttons.items():
        button.click(named(f"admin_export_{fmt}", lambda given, ok, fmt=fmt: do_export(fmt, given, ok)),
                     [password_box, unlocked], export_file, api_visibility="private")
