"""A simulated study of human and judge votes with known true ratings: the vote draws of :mod:`tools.coverage` and
the human + judge (PPI) comparison that ``python -m tools.coverage --parts ppi`` and ``python -m tools.simulate
--judge-votes N`` print.

Votes follow the model each rating protocol fits, so that its estimand is the truth (module docstring of
:mod:`tools.coverage`): ``drop`` arenas have 15% ties and 7% both-bad votes whatever the pair and Bradley–Terry
decisive votes; ``half`` arenas have 22% ties and both-bad in all and a win σ(Δ) − 0.11, so the expected score is σ(Δ).
In the PPI study a judge votes on every human battle and on ``judge_votes`` battles no person saw; on a share
``agreement`` of battles its draw is the person's, and it sees one model ``bias`` points better than it is.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ratings.leaderboard import prior_ridge
from ratings.ppi import NO_VOTE, ppi_fit
from ratings.votes import EncodedVotes

LN10 = math.log(10.0)
TIE, BOTH_BAD = 0.15, 0.07


def win_probability(ratings: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return expit((ratings[a] - ratings[b]) * LN10 / 400.0)


def pair_draws(rng: np.random.Generator, n_models: int, votes: int, top_weight: float = 1.0,
               top: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """``votes`` pairs (first, second) of distinct models; the pairs among the ``top`` best (lowest indices, the
    truth is sorted) drawn ``top_weight`` times as often as the others."""
    first, second = np.triu_indices(n_models, k=1)
    share = np.where((first < top) & (second < top), top_weight, 1.0)
    drawn = rng.choice(len(first), size=votes, p=share / share.sum())
    return first[drawn], second[drawn]


def outcomes(rng: np.random.Generator, ratings: np.ndarray, a: np.ndarray, b: np.ndarray, ties: str,
             u: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
    """Outcome codes (0: a won, 1: b won, 2: tie, 3: both bad) under the ``ties`` model of the module docstring;
    ``u`` and ``v`` (uniform draws) may be given to share them with another voter."""
    u = rng.random(len(a)) if u is None else u
    v = rng.random(len(a)) if v is None else v
    p = win_probability(ratings, a, b)
    either = TIE + BOTH_BAD
    if ties == "half":  # a win σ − 0.11, a tie or both-bad 0.22, a loss the rest: the expected score is σ
        code = np.where(u < p - either / 2, 0, np.where(u < p + either / 2, 2, 1))
        return np.where((code == 2) & (v >= TIE / either), 3, code)
    return np.where(v < TIE, 2, np.where(v < either, 3, np.where(u < p, 0, 1)))  # ties whatever the pair


def arena_votes(rng: np.random.Generator, ratings: np.ndarray, votes: int, ties: str,
                top_weight: float = 1.0) -> EncodedVotes:
    """A simulated log (random sides) of ``votes`` votes."""
    first, second = pair_draws(rng, len(ratings), votes, top_weight)
    outcome = outcomes(rng, ratings, first, second, ties)
    swap = rng.random(votes) < 0.5
    flipped = np.array([1, 0, 2, 3])[outcome]
    names = tuple(f"m{k:02d}" for k in range(len(ratings)))
    return EncodedVotes(names, np.where(swap, second, first), np.where(swap, first, second),
                        np.where(swap, flipped, outcome))


@dataclass(frozen=True)
class Coverage:
    label: str
    coverage: np.ndarray  # per repetition: the share of models whose truth is inside
    width: np.ndarray  # per repetition: the mean 95% width, Elo points
    seconds: float  # per fit


@dataclass(frozen=True)
class PPIResult:
    ppi: Coverage
    human: Coverage
    pooled: Coverage
    lam: np.ndarray
    human_votes: int
    judge_votes: int

    confirmed_width: float = float("nan")  # the human-only board's mean width with saved()[0] human votes, simulated

    def saved(self) -> tuple[float, float]:
        """Human votes the human-only board would need for the PPI board's mean width, and the share saved."""
        ratio = (self.human.width.mean() / self.ppi.width.mean()) ** 2
        return self.human_votes * ratio, 1.0 - 1.0 / ratio


def human_and_judge(rng: np.random.Generator, true: np.ndarray, human_votes: int, judge_votes: int, bias: float,
                    agreement: float, favoured: int):
    """One simulated study: the human votes (with the judge's vote on each of their battles) and the judge's votes on
    battles no person saw, oriented (lo < hi). The judge sees the favoured model ``bias`` points better than it is,
    and on a share ``agreement`` of battles its draw is the person's (so it agrees beyond what the ratings imply)."""
    total = human_votes + judge_votes
    first, second = pair_draws(rng, len(true), total)
    u, v = rng.random(total), rng.random(total)
    people = outcomes(rng, true, first, second, "drop", u, v)
    same = rng.random(total) < agreement
    seen = true.copy()
    seen[favoured] += bias
    judge = outcomes(rng, seen, first, second, "drop", np.where(same, u, rng.random(total)),
                     np.where(same, v, rng.random(total)))
    return first, second, people[:human_votes], judge


def ppi_coverage(true: np.ndarray, repetitions: int, human_votes: int, judge_votes: int, seed: int, *,
                 bias: float = 150.0, agreement: float = 0.7, ridge: float | None = None) -> PPIResult:
    """The human + judge board, the human-only board and the naive pool, over ``repetitions`` studies of the true
    ratings ``true`` (best first) with a judge biased toward the sixth-best model (the middle of the board)."""
    rng = np.random.default_rng([seed, 1])
    ridge = prior_ridge(400.0) if ridge is None else ridge
    # name -> (each study's coverage, each study's mean width, the fit's seconds)
    results: dict[str, tuple[list[float], list[float], float]] = {
        "ppi": ([], [], 0.0), "human": ([], [], 0.0), "pooled": ([], [], 0.0)}
    lams = []
    none = np.zeros(0, dtype=np.int64)
    for _ in range(repetitions):
        first, second, people, judge = human_and_judge(rng, true, human_votes, judge_votes, bias, agreement, 5)
        h = slice(0, human_votes)
        j = slice(human_votes, None)
        fits = {}
        started = time.perf_counter()
        fits["ppi"] = ppi_fit(len(true), first[h], second[h], people, judge[h], first[j], second[j], judge[j],
                              ridge=ridge)
        spent = {"ppi": time.perf_counter() - started}
        started = time.perf_counter()
        fits["human"] = ppi_fit(len(true), first[h], second[h], people, np.full(human_votes, NO_VOTE), none, none,
                                none, ridge=ridge)
        spent["human"] = time.perf_counter() - started
        started = time.perf_counter()
        fits["pooled"] = ppi_fit(len(true), first, second, np.concatenate([people, judge[j]]),
                                 np.full(len(first), NO_VOTE), none, none, none, ridge=ridge)
        spent["pooled"] = time.perf_counter() - started
        lams.append(fits["ppi"].lam)
        for name, fit in fits.items():
            rating = 1000.0 + 400.0 / LN10 * fit.theta
            half = 1.959963984540054 * 400.0 / LN10 * np.sqrt(np.diag(fit.covariance))
            inside, widths, seconds = results[name]
            inside.append(float(np.mean(np.abs(rating - true) <= half)))
            widths.append(float(np.mean(2 * half)))
            results[name] = (inside, widths, seconds + spent[name])
    made = {name: Coverage(name, np.array(inside), np.array(widths), seconds / repetitions)
            for name, (inside, widths, seconds) in results.items()}
    result = PPIResult(made["ppi"], made["human"], made["pooled"], np.array(lams), human_votes, judge_votes)
    needed = int(round(result.saved()[0]))
    confirmed = []
    for _ in range(repetitions):  # the human-only board with that many votes, simulated: its width
        first, second, people, _judge = human_and_judge(rng, true, needed, 0, bias, agreement, 5)
        fit = ppi_fit(len(true), first, second, people, np.full(needed, NO_VOTE), none, none, none, ridge=ridge)
        confirmed.append(np.mean(2 * 1.959963984540054 * 400.0 / LN10 * np.sqrt(np.diag(fit.covariance))))
    return dataclasses.replace(result, confirmed_width=float(np.mean(confirmed)))


def text_table(title: str, header: str, rows: list[str], footer: str = "") -> str:
    """A printed table: its title, header, a rule as wide as the header, its rows and an optional last line."""
    return "\n".join([title, header, "-" * len(header), *rows, *([footer] if footer else [])])


def ppi_table(result: PPIResult, repetitions: int, bias: float) -> str:
    needed, saved = result.saved()
    rows = [f"{label:35} | {fit.coverage.mean():8.1%} | {fit.width.mean():10.1f} | {1000 * fit.seconds:10.1f}"
            for label, fit in (("human votes only", result.human), ("human + judge, PPI correction", result.ppi),
                               ("human + judge pooled, no correction", result.pooled))]
    return text_table(
        f"Human + judge (PPI++), {repetitions} simulated studies: {result.human_votes} human votes (each battle also "
        f"judged) and {result.judge_votes} judge-only votes; the judge favours one model by {bias:.0f} points",
        f"{'board':35} | {'coverage':>8} | {'mean width':>10} | {'ms per fit':>10}", rows,
        f"lambda (PPI++ power tuning): mean {result.lam.mean():.2f}, range {result.lam.min():.2f}-"
        f"{result.lam.max():.2f}. At equal width the human-only board needs {needed:,.0f} human votes: the judge saves "
        f"{needed - result.human_votes:,.0f} ({saved:.0%}); simulated, the human-only board with {needed:,.0f} votes "
        f"has a mean width of {result.confirmed_width:.1f}.")
