"""Pure text rendering for the web page: everything user-supplied is escaped before it becomes Markdown."""

from __future__ import annotations

import html
import re

from datamodel.battles import Battle
from datamodel.quality import QualityRules
from datamodel.votes import OUTCOME_LABELS, VoteReceipt
from suites.registry import suite_named

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def escape_markdown(text: str) -> str:
    """Show ``text`` literally: ``&``, ``<`` and ``>`` become entities and Markdown syntax is backslash-escaped.

    Quotes stay as they are (Markdown text is no attribute): an entity such as ``&#x27;`` would have its ``#``
    escaped too and show as those six characters instead of an apostrophe.
    """
    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(str(text), quote=False))


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


def status_markdown(name: str, votes: int, notice: str = "") -> str:
    """The status line: who is signed in, their votes, and a warning (:func:`speed_notice`) on a line of its own."""
    status = f"Signed in as **{escape_markdown(name)}** · {votes} vote{'s' if votes != 1 else ''} so far"
    return f"{status}\n\n**⚠ {notice}**" if notice else status  # the app's own words


def speed_notice(fast_run: int, rules: QualityRules, source: str) -> str:
    """The warning after a fast vote (``fast_run``: :attr:`arena.session.ArenaSession.fast_run`), given before the
    speed rule sets votes aside; "" when the last vote was not fast. An account of a trusted ``source`` is told that
    its fast votes are noted, since the rule reports them instead of excluding them (:mod:`datamodel.quality`)."""
    if fast_run < 2:
        return ""
    seconds, streak = f"{rules.fast_seconds:g}", rules.fast_streak
    if source in rules.trusted_sources:
        return (f"You are voting very fast: votes less than {seconds} s apart still count, and from {streak} in a row "
                "they are noted for the admin. Take the time to look at both images.")
    if fast_run >= streak:
        return (f"You are voting very fast: your last {fast_run} votes came less than {seconds} s apart, so they are "
                "set aside and do not count. Take the time to look at both images.")
    return (f"You are voting very fast: votes less than {seconds} s apart may not count (from {streak} in a row they "
            f"are set aside). {fast_run} in a row so far: take the time to look at both images.")


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
