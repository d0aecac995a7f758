"""What the leaderboard says to a visitor: its texts without the command lines meant for whoever runs the arena.

The leaderboard's notes are rendered once per snapshot, for every viewer, and some end with the command that would
fill a gap ("run `python -m judges metrics` and they show here"). A visitor cannot run it; the admin can. The page
gives the admin the texts whole and everyone else :func:`for_visitors`' copy: a parenthesis that names a command
loses that part (or goes), and a sentence that names one ends before the clause that does.
"""

from __future__ import annotations

import re

COMMAND = "python -m "
_PARENTHESIS = re.compile(r"\s*\(([^()]*)\)")
# a sentence ends at a full stop followed by a space, the end of an emphasis, a quote or the text's end
_SENTENCE = re.compile(r"[^.]*?python -m .*?\.(?=\s|\*|\"|\\|$)", re.S)
_CLAUSE = re.compile(r"(?::|;|,)\s+(?:e\.g\.\s+|and\s+|or\s+)?(?:run\s+)?[^:;,]*?$|\s+(?:or\s+)?run\s+[^:;,]*$")


def _parenthesis(match: re.Match) -> str:
    if COMMAND not in match.group(1):
        return match.group(0)
    kept = [part.strip() for part in match.group(1).split(";") if COMMAND not in part]
    return f" ({'; '.join(kept)})" if kept else ""


def _sentence(match: re.Match) -> str:
    sentence = match.group(0)
    head = sentence[:sentence.index(COMMAND)]
    cut = _CLAUSE.search(head)
    if cut is None:  # the sentence begins with the command: it goes whole
        return ""
    return head[:cut.start()].rstrip() + "."


def for_visitors(text):
    """``text`` without the command lines (:data:`COMMAND`) it names; anything else (None, a table) as it is."""
    if not isinstance(text, str) or COMMAND not in text:
        return text
    text = _PARENTHESIS.sub(_parenthesis, text)
    return _SENTENCE.sub(_sentence, text) if COMMAND in text else text
