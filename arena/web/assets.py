"""The page's own stylesheets and scripts: files under ``arena/web/static/``, one per tab concept, in the order the
page takes them, and the data the scripts read from the page.

The stylesheets go to Gradio's ``css_paths`` (Gradio reads them once and adds them to the page's style, in this order:
a later rule wins a tie). The scripts go to its ``head_paths``, which are HTML: each file is one script element,
which Gradio adds to the page's head when it has loaded its configuration, before it draws the app, so the events'
``js`` (one-line calls such as ``window.arenaEvents.beforeVote``) find the functions they call. What the scripts need
from the server (the rating tasks' keys, the leaderboard's header tooltips) comes first in the head, as JSON
elements (:func:`json_element`) that the scripts read by their ids; nothing is written into a script. The one script
that must run before Gradio's own modules (``frame_budget.js``) is written into the page by
:class:`arena.web.early_script.EarlyScript` instead. ``pyproject.toml``'s package data ships the folder.
"""

from __future__ import annotations

import json
from pathlib import Path

STATIC = Path(__file__).with_name("static")

STYLESHEETS = tuple(STATIC / name for name in (
    "page.css",  # the page's own: Plotly's toolbar off on a phone
    "arena.css",  # the arena tab (arena_tab.py)
    "open_prompt.css",  # its open-prompt box (open_prompt.py)
    "admin.css",  # the admin tab (admin_tab.py)
    "ratings.css",  # the Ratings tab (ratings_tab.py; its answer rows: ratings_tab.answer_rows_css)
    "leaderboard.css",  # the leaderboard tab's folded filters and statistics (leaderboard_tab.py)
    "four_image.css",  # the Four images tab (four_image.py)
))
HEAD_SCRIPTS = tuple(STATIC / name for name in (
    "arena.html",  # the arena tab's keys, layout, enlarged images and events (arena_tab.py)
    "sign_in.html",  # staying signed in, for the Arena and Ratings tabs (sign_in.py)
    "open_prompt.html",  # the open-prompt box's keys and Generate event (open_prompt.py)
    "ratings.html",  # the Ratings tab's keys (ratings_tab.py; its #rating-keys data)
    "leaderboard.html",  # header tooltips and charts fitted to their panels (leaderboard_tab.py; #lb-header-tips)
    "admin.html",  # the admin tab's Unlock event (admin_tab.py)
    "four_image.html",  # the Four images tab's picks and keys (four_image.py)
))


def json_element(element_id: str, value) -> str:
    """``value`` as a JSON data element of the page's head, which the page's scripts read by ``element_id``: never
    run, and no ``<`` in it, so no text of the data can end the element."""
    text = json.dumps(value, ensure_ascii=True).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'
