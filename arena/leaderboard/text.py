"""The leaderboard as text: the summary sentence above the table (which votes, which fit, which judge, the
agreement figures), the agreement panel and the whole board as the command line prints it
(:func:`leaderboard_text`). Pure formatting of a computed :class:`~arena.leaderboard.compute.Leaderboard`: no
figure, no database.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from arena.leaderboard.compute import Leaderboard, LeaderboardOptions, rating_protocol
from arena.leaderboard.fits import MODE_TITLES, robustness_text
from arena.leaderboard.labels import plural
from datamodel.vote_arrays import ARENA_SOURCE
from ratings.protocols import DEFAULT_PROTOCOL


def _number(value, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def judge_text(board: Leaderboard) -> str:
    """Which judge voter the judge column shows, and why."""
    if board.judge is None:
        return "Judge column: no judge votes yet"
    votes = board.judges.get(board.judge, 0)
    why = "chosen" if board.judge_chosen else "the judge with the most votes"
    others = ", ".join(f"{name} ({n})" for name, n in board.judges.items() if name != board.judge)
    return f"Judge column: {board.judge} ({votes} votes, {why})" + (f"; other judges: {others}" if others else "")


PENDING_INTER = ("Inter-annotator agreement: being computed (a large board is shown first); it shows here by "
                 "itself in a few seconds.")


def inter_annotator_text(inter: dict | None) -> str:
    """P̄, Fleiss' κ, the annotators' rating Spearman and the number of battles they share, in one sentence; None:
    still being computed (:func:`arena.leaderboard.compute.compute_leaderboard`'s ``staged``)."""
    if inter is None:
        return PENDING_INTER
    return (
        f"Inter-annotator: {plural(inter.get('n_items', 0), 'battle')} seen by several annotators "
        f"({plural(inter.get('n_pairs', 0), 'pair')} of votes), mean pairwise agreement "
        f"{_number(inter.get('agreement'))}, Fleiss' κ {_number(inter.get('fleiss_kappa'))}, Spearman ρ between an "
        f"annotator's own ratings and everyone else's {_number(inter.get('consensus_spearman'))} (mean over "
        f"{plural(inter.get('consensus_annotators', 0), 'annotator')})."
    )


def prior_text(prior_sd: float) -> str:
    """The weak prior as the summary names it ("" without one)."""
    return f"; weak normal prior, spread {prior_sd:.0f} points, on each rating" if prior_sd > 0 else ""


def sources_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """Where the votes come from, when any is imported or a filter is set ("" for the arena's own votes alone)."""
    parts = []
    if set(board.sources) - {ARENA_SOURCE}:
        parts.append("by source: " + ", ".join(f"{name} {n}" for name, n in board.sources.items()))
    if options.source:
        parts.append(f"source {options.source} only")
    if options.anonymous_only:
        parts.append("anonymous votes only")
    return f" ({'; '.join(parts)})" if parts else ""


def flagged_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """What the protocol did with the imported votes an import flagged ("" when there are none)."""
    if not board.flagged:
        return ""
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(board.flagged.items()))
    return (f" {plural(sum(board.flagged.values()), 'imported vote')} flagged ({reasons}): "
            f"{rating_protocol(options).flagged_rule}; the other statistics leave them out.")


def protocol_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """What fitted the ratings: today's sentence for the arena protocol, the protocol's choices for another."""
    if board.protocol == DEFAULT_PROTOCOL:
        intervals = ("95% intervals from the sandwich covariance of the human + judge estimate" if board.mode == "ppi"
                     else "95% intervals in closed form (sandwich: the CLT of the fit)"
                     if options.intervals == "sandwich"
                     else f"95% CIs from {options.rounds} bootstrap rounds (seed {options.seed})")
        return (f"Bradley–Terry ELO (400 per 10× odds, mean 1000{prior_text(options.prior_sd)}), ties and both-bad: "
                f"{options.tie_policy}, {intervals}." + flagged_text(board, options))
    protocol = rating_protocol(options)
    choices = protocol.choices()
    anchor = choices["anchor"] if not options.anchor else f"{options.anchor} (asked for)"
    return (f"Rating protocol {protocol.name} ({protocol.title}): ties: {choices['ties']}; penalty: "
            f"{choices['penalty']}; scale: {choices['scale']}; anchor: {anchor}; 95% intervals: "
            f"{choices['bootstrap']}; rounding: {choices['rounding']}." + flagged_text(board, options))


def mode_text(board: Leaderboard) -> str:
    """Which votes made the human column, and which correction (for the human + judge board)."""
    if board.mode != "ppi":
        return "Human column: human votes only."
    ppi = board.ppi
    return (f"Human column: {MODE_TITLES['ppi']}: {plural(ppi['human'], 'human vote')} ({ppi['paired']:,} of them "
            f"on battles {board.judge or 'the judge'} also voted on) and {plural(ppi['judge_only'], 'judge vote')} on "
            "battles no person voted on, the judge's bias corrected on the paired battles by prediction-powered "
            f"inference (PPI++, λ = {ppi['lambda']:.2f}).")


def ranking_text(options: LeaderboardOptions) -> str:
    """How the board ranks: the thresholds and the order."""
    order = "the lower bound of their 95% interval" if options.order == "lower" else "rating"
    return (f" Ranked: models with at least {options.min_votes} votes in the fit, ordered by {order}; provisional "
            f"below {max(options.min_votes, options.provisional_votes)}; rank ranges: the ranks their intervals "
            "allow.")


def summary_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """One paragraph: what was fitted, from which votes, drawn by which strategy, and how the voters agree."""
    counts, total = board.votes, sum(board.votes.values())
    strategies = ", ".join(f"{name} {n} ({n / max(1, total):.0%})"
                           for name, n in sorted(board.strategies.items(), key=lambda item: -item[1])) or "none yet"
    agreement = board.agreement
    return (
        f"{plural(counts.get('human', 0), 'human vote')} · {plural(counts.get('judge', 0), 'judge vote')}"
        f"{' (excluded votes included)' if options.include_excluded else ''}{sources_text(board, options)}. "
        f"{judge_text(board)}. {protocol_text(board, options)} {mode_text(board)}{ranking_text(options)} "
        f"Votes by sampling strategy: "
        f"{strategies}. Metric columns and their correlations: {board.metric_slice} (image metrics averaged over "
        f"those prompts' images; model-level metrics from their row for that slice). Human–judge agreement "
        f"({board.judge or 'no judge'}) on {plural(agreement['n'], 'pair')} of votes on shared battles: "
        f"{_number(agreement['agreement'])} (Cohen's κ {_number(agreement['kappa'])}). "
        f"{inter_annotator_text(board.inter_annotator)}"
    )


def _frame_text(frame: pd.DataFrame, empty: str, **kwargs) -> str:
    if frame is None or len(frame) == 0:
        return f"  ({empty})"
    text = frame.to_string(float_format=lambda v: f"{v:.3f}", na_rep="n/a", **kwargs)
    return "\n".join("  " + line for line in text.splitlines())


def agreement_text(board: Leaderboard) -> str:
    """The agreement panel as text (for the CLI): position bias per voter kind and subset, the human–judge
    confusion matrix with raw agreement and Cohen's κ, and inter-annotator agreement with Cohen's κ per pair."""
    agreement, inter = board.agreement, board.inter_annotator
    confusion = agreement["confusion"].copy()
    confusion.index = [f"human {o}" for o in confusion.index]
    confusion.columns = [f"judge {o}" for o in confusion.columns]
    return "\n".join([
        "Position bias (share of votes; first_win_rate = A / (A + B); p: binomial test against 0.5):",
        _frame_text(board.position_bias, "no votes", index=False),
        "",
        f"Human–judge agreement ({board.judge or 'no judge'}), outcomes oriented to the first model by name, on "
        f"{agreement['n']} pairs of votes on shared battles: raw agreement {_number(agreement['agreement'])}, "
        f"Cohen's κ {_number(agreement['kappa'])}",
        _frame_text(confusion if agreement["n"] else None, "no battle voted on by a human and the judge"),
        "",
        inter_annotator_text(inter),
        "Cohen's κ per pair of annotators who share the most battles:",
        _frame_text(None if inter is None else inter.get("pairs"), "being computed" if inter is None else
                    "no pair of annotators shares enough battles" if inter.get("n_items")
                    else "no battle seen by two annotators", index=False),
    ])


def format_table(table: pd.DataFrame, max_rows: int | None = None) -> str:
    """The leaderboard as fixed-width text (for the CLI)."""
    shown = table.drop(columns=[c for c in table.columns if c.endswith("provisional")])
    for kind in ("Human", "Judge"):
        provisional = table[f"{kind} provisional"] & table[f"{kind} votes"].gt(0)
        shown[f"{kind} ELO"] = [
            "" if pd.isna(v) else f"{v:.0f}{'*' if p else ''}" for v, p in zip(table[f"{kind} ELO"], provisional)
        ]
    text = shown.head(max_rows).to_string(index=False, na_rep="", float_format=lambda v: f"{v:.3g}")
    return text + ("\n* provisional: fewer of its votes entered the fit than ARENA_PROVISIONAL_VOTES (ties do not "
                   "under 'drop'); a model without a rank has fewer than ARENA_MIN_VOTES")


def leaderboard_text(board: Leaderboard, options: LeaderboardOptions) -> str:
    """The whole leaderboard as text (the command line): summary, table, rank correlations, agreement panel."""
    correlations = board.correlations.to_string(index=False, float_format=lambda v: f"{v:.3f}")
    robustness = robustness_text(board.audit)
    return "\n\n".join([summary_text(board, options), *([board.plan] if board.plan else []),
                        format_table(board.table) + (f"\n{robustness}" if robustness else ""),
                        f"Rank correlation with the human ELO:\n{correlations}", agreement_text(board)])
