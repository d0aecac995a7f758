"""Pure text rendering for the web page: everything user-supplied is escaped before it becomes Markdown."""

from __future__ import annotations

import html
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from datamodel.battles import Battle
from datamodel.quality import QualityRules
from datamodel.votes import OUTCOME_LABELS, VoteReceipt
from suites.registry import suite_named, suite_title

GENERAL_GUIDELINES = (
    "Look at both images, then pick the one that shows the prompt better by the suite's criteria below; image "
    "quality only decides between two that do equally well. **Tie**: both do about equally well (both good or both "
    "partly right). **Both are bad**: neither shows what the prompt asks, so neither deserves to win. The expected "
    "outcome (tick *Show expected outcome*) is what the benchmark counts as right for a prompt. Keys: A, B, T (tie), "
    "X (both bad), N (next or skip). Click an image to enlarge it."
)

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>:])")


def escape_markdown(text: str) -> str:
    """Show ``text`` literally: ``&``, ``<`` and ``>`` become entities and Markdown syntax is backslash-escaped,
    ``:`` and ``.`` included, so that a URL, a ``www.`` address or an e-mail address is not turned into a link (the
    renderer's autolinks match before escapes are undone, and kept the backslashes in the address).

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
    definition = meta.get("definition")
    if caption and definition and str(definition) in battle.text:  # the prompt gives the definition already
        caption = (caption[0], str(meta.get("lemma") or "")) if meta.get("lemma") else None
    if caption and caption[1]:
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
        f'<div class="reveal voted" data-vote-id="{receipt.vote_id}">'  # for API clients (tools.load), not shown
        f'Your vote: <b>{OUTCOME_LABELS[receipt.outcome]}</b>. '
        f"A was <b>{name(receipt.model_a)}</b>, B was <b>{name(receipt.model_b)}</b>. "
        f"Press <b>Next battle</b> (or N) to continue.{preload}</div>"
    )


def status_markdown(name: str, votes: int, notice: str = "", *, progress: tuple[int, int, str] | None = None,
                    error: str = "") -> str:
    """The status line: who is signed in, their own votes, their progress in the battle's suite (``progress``: prompts
    voted on, prompts in all, the suite's title) with a message at its end, then on lines of their own a warning
    (:func:`speed_notice`) and why the last request was refused (``error``)."""
    status = f"Signed in as **{escape_markdown(name)}** · {votes} vote{'s' if votes != 1 else ''} so far"
    if progress is not None:
        seen, total, title = progress
        status += f" · {min(seen, total)} of {total} prompts in {escape_markdown(title)}"
        if total and seen >= total:
            status += (f"\n\n**You have voted on every prompt in {escape_markdown(title)}: thank you!** Pick another "
                       "suite from the menu, or go on: prompts come round again.")
    if notice:
        status += f"\n\n**⚠ {notice}**"  # the app's own words
    if error:
        status += f"\n\n**⚠ {escape_markdown(error)}**"
    return status


def load_guidelines(path: Path | None) -> dict:
    """The guidelines configured in the TOML file ``path`` (setting ``guidelines_file``): ``general`` (text on how
    to vote, Tie against Both bad) and a ``[criteria]`` table of text per suite name, each replacing the suite's
    declared criteria; {} without a file. A file that cannot be read or parsed is a ValueError that names it."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            loaded = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"Cannot read the guidelines file {path}: {error}. Fix it, or unset ARENA_GUIDELINES_FILE.")
    criteria = loaded.get("criteria", {})
    if not isinstance(loaded.get("general", ""), str) or not isinstance(criteria, dict) or not all(
            isinstance(text, str) for text in criteria.values()):
        raise ValueError(f"The guidelines file {path} must hold general = \"text\" and a [criteria] table of "
                         "suite = \"text\" lines.")
    return {"general": loaded.get("general", ""), "criteria": criteria}


def guidelines_markdown(suites: Iterable[str], configured: Mapping | None = None) -> str:
    """The guidelines panel: the general text, then each suite's title and criteria (the configured ones
    (:func:`load_guidelines`) where given, else the suite's declaration in :mod:`suites.registry`)."""
    configured = configured or {}
    lines = [escape_markdown(configured["general"]) if configured.get("general") else GENERAL_GUIDELINES, ""]
    for name in suites:
        declared = suite_named(name)
        criteria = configured.get("criteria", {}).get(name) or (declared.criteria if declared is not None else "")
        if criteria:
            lines.append(f"- **{escape_markdown(suite_title(name))}**: {escape_markdown(criteria)}")
    return "\n".join(lines)


def speed_notice(fast_run: int, rules: QualityRules, source: str, *, doing: str = "voting", noun: str = "votes",
                 look: str = "both images") -> str:
    """The warning after a fast vote (``fast_run``: :attr:`arena.session.ArenaSession.fast_run`), given before the
    speed rule sets votes aside; "" when the last vote was not fast. An account of a trusted ``source`` is told that
    its fast votes are noted, since the rule reports them instead of excluding them (:mod:`datamodel.quality`).
    ``doing``, ``noun`` and ``look`` word it for another page (the rating page's answers, the image)."""
    if fast_run < 2:
        return ""
    seconds, streak = f"{rules.fast_seconds:g}", rules.fast_streak
    if source in rules.trusted_sources:
        return (f"You are {doing} very fast: {noun} less than {seconds} s apart still count, and from {streak} in a "
                f"row they are noted for the admin. Take the time to look at {look}.")
    if fast_run >= streak:
        return (f"You are {doing} very fast: your last {fast_run} {noun} came less than {seconds} s apart, so they "
                f"are set aside and do not count. Take the time to look at {look}.")
    return (f"You are {doing} very fast: {noun} less than {seconds} s apart may not count (from {streak} in a row "
            f"they are set aside). {fast_run} in a row so far: take the time to look at {look}.")


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
