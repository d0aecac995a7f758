"""Pure text rendering for the web page: everything user-supplied is escaped before it becomes Markdown."""

from __future__ import annotations

import html
import re

from datamodel.battles import Battle
from datamodel.votes import OUTCOME_LABELS, VoteReceipt
from suites.registry import suite_named

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def escape_markdown(text: str) -> str:
    """Show ``text`` literally: HTML is escaped to entities and Markdown syntax is backslash-escaped."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(str(text), quote=True))


def prompt_markdown(battle: Battle, *, show_expected: bool = False) -> str:
    """The prompt panel: suite, prompt text and, per suite, the concept and its definition or the expected outcome."""
    declared = suite_named(battle.suite)
    suite = declared.title if declared is not None else battle.suite
    subset = f" · {escape_markdown(battle.subset)}" if battle.subset else ""
    lines = [f"**Suite:** {escape_markdown(suite)}{subset}", "", f"### {escape_markdown(battle.text)}"]
    meta = battle.metadata
    caption = declared.caption(meta) if declared is not None and declared.caption is not None else None
    if caption:
        label, text = caption
        lines += ["", f"**{escape_markdown(label)}:** {escape_markdown(text)}"]
    expected = meta.get("description") or meta.get("expected")
    if show_expected and expected:
        lines += ["", f"**Expected outcome:** {escape_markdown(expected)}"]
    return "\n".join(lines)


def reveal_html(receipt: VoteReceipt | None, preload_token: str | None = None) -> str:
    """After a vote: the receipt and both model names (class ``voted``); before: an empty panel.

    ``preload_token``, the next battle's media token, adds its two images hidden, so the browser fetches them while
    the voter reads the names and Next battle shows them at once.
    """
    if receipt is None:
        return '<div class="reveal"></div>'
    name = lambda text: html.escape(str(text))  # noqa: E731
    preload = "".join(
        f'<img src="{image_url(preload_token, side)}" alt="" hidden>' for side in "ab"
    ) if preload_token else ""
    return (
        f'<div class="reveal voted">Vote #{receipt.vote_id} recorded: <b>{OUTCOME_LABELS[receipt.outcome]}</b>. '
        f"A was <b>{name(receipt.model_a)}</b>, B was <b>{name(receipt.model_b)}</b>. "
        f"Press <b>Next battle</b> (or N) to continue.{preload}</div>"
    )


def status_markdown(name: str, votes: int) -> str:
    return f"Signed in as **{escape_markdown(name)}** · {votes} vote{'s' if votes != 1 else ''} so far"


def image_url(media_token: str, side: str) -> str:
    """Where the page loads a battle image (relative, so it works under a root path), HTML-escaped."""
    return f"battle-media/{html.escape(media_token)}/{side}"


def image_html(media_token: str | None, side: str, caption: str) -> str:
    """One battle image, loaded through the battle's unguessable media token (relative URL, works under a root path)."""
    if media_token is None:
        return f'<figure class="battle-image"><figcaption>{html.escape(caption)}</figcaption></figure>'
    src = image_url(media_token, side)
    return (
        f'<figure class="battle-image"><figcaption>{html.escape(caption)}</figcaption>'
        f'<img src="{src}" alt="Image {side.upper()}"></figure>'
    )
