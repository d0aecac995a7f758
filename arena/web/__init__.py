"""The Gradio web app: arena, leaderboard and admin tabs over the library functions of :mod:`arena` (see app.py)."""
