"""The admin tab: behind the admin password, vote exports and annotator statistics."""

from __future__ import annotations

import hmac
import time

import gradio as gr

from arena.export import EXPORT_FORMATS, annotator_stats, export_votes
from arena.web.context import AppContext


def build_admin_tab(ctx: AppContext) -> None:
    password = ctx.settings.admin_password
    unlocked = gr.State(False)
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

    def check(given: str, is_unlocked: bool) -> bool:
        if is_unlocked:
            return True
        if password and hmac.compare_digest(given.encode(), password.encode()):
            return True
        time.sleep(0.5)  # slow down guessing
        raise gr.Error("Wrong admin password." if password else "Set ARENA_ADMIN_PASSWORD to enable the admin tab.")

    def do_unlock(given: str, is_unlocked: bool):
        check(given, is_unlocked)
        return True, gr.update(visible=False), gr.update(visible=True), annotator_stats(ctx.store.db()), ""

    def do_export(fmt: str, given: str, is_unlocked: bool):
        check(given, is_unlocked)
        ctx.export_dir.mkdir(parents=True, exist_ok=True)
        path = ctx.export_dir / f"votes-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
        export_votes(ctx.store.db(), path, fmt)
        return str(path)

    gr.on([unlock.click, password_box.submit], do_unlock, [password_box, unlocked],
          [unlocked, lock_box, admin_box, stats, password_box], api_visibility="private")
    for fmt, button in export_buttons.items():
        button.click(lambda given, ok, fmt=fmt: do_export(fmt, given, ok), [password_box, unlocked], export_file,
                     api_visibility="private")
