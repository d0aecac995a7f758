"""The Gradio web app: arena, leaderboard and admin tabs over the library functions of :mod:`arena`."""

from arena.web.app import build_app, launch_options, serve

__all__ = ["build_app", "launch_options", "serve"]
