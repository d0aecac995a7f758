"""Pure text rendering for the web page: everything user-supplied is escaped before it becomes Markdown."""

from __future__ import annotations

import html
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from datamodel.battles import Battle
from datamodel.models import ModelDetails
from datamodel.quality import BIAS, RATE, SPEED, QualityRules
from datamodel.standing import ADMIN, Standing, cap_margin
from datamodel.votes import OUTCOME_LABELS, VoteReceipt
from suites.registry import SUITES, suite_title

GENERAL_GUIDELINES = (
    "Look at both images, then pick the one that shows the prompt better by the suite's criteria below; image "
    "quality only decides between two that do equally well. **Tie**: both do about equally well (both good or both "
    "partly right). **Both are bad**: neither shows what the prompt asks, so neither deserves to win. The expected "
    "outcome (tick *Expected outcome after the vote*) is what the benchmark counts as right for a prompt. Click an "
    "image to enlarge it."
)
# Shown only with a keyboard and a fine pointer (CSS hides .key-hint on a touch screen): the shortcuts.
KEY_HINTS = "Keys: A, B, T (tie), X (both bad), N (next or skip), Esc (close an enlarged image)."

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
    declared = SUITES.get(battle.suite, None)
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
    expected = expected_outcome(battle)
    if show_expected and expected:
        lines += ["", f"**Expected outcome:** {escape_markdown(expected)}"]
    return "\n".join(lines)


def expected_outcome(battle: Battle) -> str:
    """What the benchmark counts as right for the battle's prompt (Commonsense-T2I's expected output description
    D_i, §2), or "". The arena shows it only after the vote: a rater told the answer judges the description, not the
    images against the prompt."""
    return str(battle.metadata.get("description") or battle.metadata.get("expected") or "")


def reveal_html(receipt: VoteReceipt | None, preload_token: str | None = None, *, offer_board: int = 0,
                details: Mapping[str, ModelDetails] | None = None, expected: str = "") -> str:
    """After a vote: the receipt, both model names and, when the quality rules set the vote aside, why it does not
    count (class ``voted``); before: an empty panel.

    ``preload_token``, the next battle's media token, adds its two images hidden, so the browser fetches them while
    the voter reads the names and Next battle shows them at once. ``offer_board`` (the voter's vote count, when the
    page offers their own leaderboard) adds a button that opens it. ``details`` ({model name: its details}) adds
    each model's whole description and model card link, which the page shows only on a phone: there the caption over
    each image has no room for them, and the reveal sits on the vote bar over the lower image, so the vote and the
    names become the one line of a fold (``details``, class ``reveal-about``) that a tap opens, in place of the wide
    screen's line (class ``reveal-wide``); "Press Next battle" (class ``reveal-next``) is left out there, beside the
    lit Next battle button.
    ``expected``, the prompt's expected outcome (:func:`expected_outcome`) when the voter asked to see it after the
    vote, adds a line with it.
    """
    if receipt is None:
        return '<div class="reveal"></div>'
    name = lambda text: html.escape(str(text))  # noqa: E731
    preload = "".join(
        f'<img src="{image_url(preload_token, side)}" alt="" hidden>' for side in "ab"
    ) if preload_token else ""
    vote = (f'Your vote: <b>{OUTCOME_LABELS[receipt.outcome]}</b>. A was <b>{name(receipt.model_a)}</b>, B was '
            f'<b>{name(receipt.model_b)}</b>.')
    about = "".join(
        f'<div><b>{side}: {name(model)}</b> · {name(known.summary)}{_card_link(known.link)}</div>'
        for side, model in (("A", receipt.model_a), ("B", receipt.model_b))
        if (known := (details or {}).get(model)) is not None and (known.summary or known.link))
    wide = ' class="reveal-wide"' if about else ""
    body = (f'<div{wide}><span class="reveal-line">{vote}<span class="reveal-next"> Press <b>Next battle</b>'
            '<span class="key-hint"> (or N)</span> to continue.</span></span></div>')
    if about:  # the phone's line: the same vote and names, unfolding each model's description
        body += f'<details class="reveal-about"><summary>{vote}</summary>{about}</details>'
    lines: list[str] = []
    lines += counted_lines(receipt.excluded, receipt.reason)
    if expected:
        lines.append(f'<span class="reveal-expected">Expected outcome: <b>{name(expected)}</b></span>')
    if offer_board:
        lines.append(f'You have cast {offer_board} votes: <button class="your-board" type="button">See your own '
                     'leaderboard</button>')
    body += "".join(f"<div>{line}</div>" for line in lines)
    return (f'<div class="reveal voted" data-vote-id="{receipt.vote_id}">'  # for API clients (tools.load), not shown
            f"{body}{preload}</div>")


def counted_lines(excluded: bool, reason: str) -> list[str]:
    """The reveal's line on whether a vote counts (pairwise or four-image): set aside by the quality rules, with why;
    noted for the admin (a trusted account's); or nothing."""
    if excluded:
        return [f'<span class="arena-warning">⚠ This vote does not count: {html.escape(reason)}.</span>']
    if reason:
        return [f'<span class="arena-note">This vote counts; it is noted for the admin: {html.escape(reason)}.</span>']
    return []


def _card_link(link: str) -> str:
    """A link to a model's card, opened in a new tab ("" without one)."""
    return (f' <a class="model-card" href="{html.escape(link)}" target="_blank" rel="noopener noreferrer">'
            "model card ↗</a>" if link else "")


def votes_text(standing: Standing, kind: str = "") -> str:
    """"40 votes cast, 30 count": every vote and those the leaderboard counts (``kind``: "four-image " for the
    four-image page's votes)."""
    if not standing.cast:
        return f"no {kind}votes yet"
    cast = f"{standing.cast:,} {kind}vote{'s' if standing.cast != 1 else ''} cast"
    if standing.counted == standing.cast:
        return f"{cast}, {'all count' if standing.cast > 1 else 'it counts'}"
    return f"{cast}, {standing.counted:,} count{'s' if standing.counted == 1 else ''}"


def set_aside_text(standing: Standing, rules: QualityRules, kind: str = "",
                   bias_picks: str = "one side or one model") -> str:
    """Why the votes that do not count were set aside, rule by rule ("" when every vote counts); ``kind`` and
    ``bias_picks`` name the four-image page's votes and what its bias rule reads ("four-image ", "one slot")."""
    if not standing.excluded:
        return ""
    why = {
        RATE: f"past {rules.max_per_hour:,} votes in an hour or {rules.max_per_3_hours:,} in 3 hours",
        SPEED: f"in a run of {rules.fast_streak} or more votes less than {rules.fast_seconds:g} s apart",
        BIAS: f"set aside with all your votes because {rules.bias_share:.0%} or more of them pick {bias_picks} "
              f"(from {rules.bias_min_votes} votes on)",
        ADMIN: "set aside by the admin",
    }
    parts = "; ".join(f"{n} {why[rule]}" for rule, n in standing.set_aside.items())
    verb = "does" if standing.excluded == 1 else "do"
    return f"{standing.excluded} of your {kind}votes {verb} not count: {parts}."


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def cap_notice(standing: Standing, rules: QualityRules, trusted: bool = False) -> str:
    """The warning before a quality rule sets the next votes aside ("" when none is near): the hourly and 3-hour
    caps from a tenth before them (:func:`datamodel.standing.cap_margin`), and the side/model bias rule from half its
    minimum of votes on. A trusted account's rate flags only note its votes, so it is warned about the bias rule
    only."""
    notices = []
    caps = () if trusted else (
        (standing.last_hour, rules.max_per_hour, standing.hour_frees_at, "hour", "an hour"),
        (standing.last_3_hours, rules.max_per_3_hours, standing.three_hours_free_at, "3 hours", "3 hours"))
    for votes, cap, frees_at, last, span in caps:
        if cap <= 0 or votes < cap - cap_margin(cap):
            continue
        if votes >= cap:
            later = f" They count again in about {_minutes(frees_at - standing.now)}." if frees_at else ""
            notices.append(f"Your next votes do not count: you have cast {votes:,} votes in the last {last}, and "
                           f"this arena counts {cap:,} in {span}. Take a break.{later}")
        else:
            notices.append(f"You have cast {votes:,} votes in the last {last}: votes past {cap:,} in {span} do not "
                           f"count. {cap - votes} more count now, then take a break.")
        break  # the nearer cap is enough
    total = standing.cast
    if total >= max(1, rules.bias_min_votes // 2) and total < rules.bias_min_votes or (
            total >= rules.bias_min_votes and not standing.set_aside.get(BIAS)):
        for what, (value, n) in (("side", standing.side), ("model", standing.model)):
            if value and n >= rules.bias_share * total:
                notices.append(f"{n} of your {total} votes pick {what} {value}. From {rules.bias_min_votes} votes on, "
                               f"when {rules.bias_share:.0%} or more of an annotator's votes pick one side or one "
                               "model, all their votes are set aside: pick the image that is really better, "
                               "whichever side it is on.")
                break
    return " ".join(notices)


def status_markdown(name: str, standing: Standing, notice: str = "", *,
                    progress: tuple[int, int, str] | None = None, error: str = "", rules: QualityRules | None = None,
                    trusted: bool = False) -> str:
    """The status line: who is signed in, their votes cast and counted (:func:`votes_text`), their progress
    (``progress``: prompts voted on, prompts in all, the suite's title, or "all suites") with a message at its end,
    then, each as a warning of its own, why votes do not count (:func:`set_aside_text`), a quality rule that is near
    (:func:`cap_notice`), a speed warning (``notice``, :func:`speed_notice`) and why the last request was refused
    (``error``; a wait "in N s" counts down)."""
    rules = rules or QualityRules()
    status = f"Signed in as **{escape_markdown(name)}** · {votes_text(standing)}"
    if progress is not None:
        seen, total, title = progress
        status += f" · {min(seen, total)} of {total} prompts in {escape_markdown(title)}"
        if total and seen >= total:
            status += (f"\n\n**You have voted on every prompt in {escape_markdown(title)}: thank you!** Pick another "
                       "suite from the menu, or go on: prompts come round again.")
    warnings = [escape_markdown(text) for text in (set_aside_text(standing, rules),
                                                    cap_notice(standing, rules, trusted)) if text]
    if notice:
        warnings.append(notice)  # the app's own words
    if error:
        warnings.append(countdown_text(escape_markdown(error)))
    for text in warnings:
        status += f'\n\n<span class="arena-warning">⚠ {text}</span>'
    return status


_WAIT = re.compile(r"in (\d+) s\b")


def countdown_text(text: str) -> str:
    """A wait "in 14 s" in ``text`` as a span the page counts down (static/arena.html). The seconds are the span's
    text alone: Gradio's Markdown drops ``data-`` attributes, so the page reads and rewrites the text."""
    return _WAIT.sub(lambda m: f'in <span class="countdown">{m.group(1)}</span> s', text, count=1)


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
        raise ValueError(f"Cannot read the guidelines file {path}: {error}. Fix it, or unset "
                         "ARENA_GUIDELINES_FILE.") from None
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
        declared = SUITES.get(name, None)
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


def image_html(media_token: str | None, side: str, caption: str, details: ModelDetails | None = None) -> str:
    """One battle image, loaded through the battle's unguessable media token (relative URL, works under a root path),
    under its caption: the side, then after the vote the model's name and a link to its model card on one line, and
    its description under them (``details``; the page gives it two lines, the whole in its tooltip, and on a phone
    shows it in the reveal instead). The caption's height never changes, so the reveal moves nothing."""
    about = link = ""
    if details is not None:
        text = html.escape(details.summary)
        link = _card_link(details.link)
        about = f'<span class="model-about" title="{text}">{text}</span>' if text else ""
    label = html.escape(caption)
    head = (f'<figcaption><span class="model-line"><span class="model-name" title="{label}">{label}</span>{link}'
            f"</span>{about}</figcaption>")
    if media_token is None:
        return f'<figure class="battle-image">{head}</figure>'
    return f'<figure class="battle-image">{head}<img src="{image_url(media_token, side)}" alt="Image {side.upper()}"' \
           f' tabindex="0" role="button" aria-label="Image {side.upper()}: press Enter to enlarge">' \
           "</figure>"
