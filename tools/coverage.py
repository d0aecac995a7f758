"""``python -m tools.coverage``: are the leaderboard's 95% intervals right, and how many votes before a rank means
something? Seeded simulated arenas with known true ratings, three parts (``--parts``):

- ``intervals``: for ``lmarena-2025`` and ``arena``, the share of models whose true rating lies inside the 95%
  interval (coverage), with the sandwich and with the bootstrap, over ``--repetitions`` arenas of ``--votes`` votes;
  the mean interval width and the time per fit beside it.
- ``ppi``: the human + judge board (:mod:`ratings.ppi`) against the human-only one: a judge that agrees with people on
  most battles but is biased by ``--judge-bias`` Elo points toward one model votes on ``--judge-votes`` battles no
  person voted on and on every human battle; coverage, mean width, the λ chosen, the human votes the judge saves at
  equal width (the human-only width shrinks as 1/√votes), and the naive pool (human and judge votes fitted as one)
  for contrast.
- ``thresholds``: a model joins a board of eleven established ones (``--established`` votes among them) and collects
  n votes; per n, the median half-width of its interval, the median length of its rank range, how often the range
  holds its true rank and how often its point rank is 3 or more places off (n counts the newcomer's votes in the fit,
  as the thresholds do: ties and both-bad are left out under the default tie policy): the figures behind the defaults of
  ``ARENA_MIN_VOTES`` and ``ARENA_PROVISIONAL_VOTES``.

The truth is :data:`tools.simulate.TRUE_ELO` (the taxonomy benchmark's 12 systems, 156 points from first to last),
centred on 1000. Votes are drawn from the model each protocol fits, so that its estimand is the truth:

- ``drop`` arenas (``arena``, ties left out): 15% ties and 7% both-bad whatever the pair, the decisive votes
  Bradley–Terry;
- ``half`` arenas (``lmarena-2025``, ties ½): ties and both-bad 22% in all, a win σ(Δ) − 0.11, so the expected score is
  σ(Δ).

Pairs are drawn unevenly in the ``intervals`` part (the pairs among the four best models four times as often as the
others, as an arena that chases the top does), so the pair weights of ``lmarena-2025`` matter. Every part draws from
``numpy.random.default_rng([seed, part])``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ratings.leaderboard import prior_ridge
from ratings.ppi import NO_VOTE, ppi_fit
from ratings.protocols import get_protocol
from ratings.ranks import rank_ranges
from ratings.votes import EncodedVotes
from tools.simulate import TRUE_ELO, centred_truth

LN10 = math.log(10.0)
TIE, BOTH_BAD = 0.15, 0.07
PARTS = ("intervals", "ppi", "thresholds")
METHODS = (("lmarena-2025", "sandwich"), ("lmarena-2025", "bootstrap"), ("arena", "sandwich"), ("arena", "bootstrap"))
VOTE_STEPS = (10, 25, 50, 100, 200, 300, 500, 1000)


def truth() -> np.ndarray:
    return centred_truth(list(TRUE_ELO.values()))


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


def interval_coverage(repetitions: int, votes: int, seed: int, rounds: int = 1000) -> list[Coverage]:
    """The ``intervals`` part: coverage of each (protocol, method) of :data:`METHODS`."""
    rng = np.random.default_rng([seed, 0])
    true = truth()
    inside = {method: [] for method in METHODS}
    widths = {method: [] for method in METHODS}
    seconds = {method: 0.0 for method in METHODS}
    protocols = {(name, method): get_protocol(name, intervals=method, rounds=rounds, **(
        {"ridge": prior_ridge(400.0)} if name == "arena" else {})) for name, method in METHODS}
    for _ in range(repetitions):
        logs = {"half": arena_votes(rng, true, votes, "half", top_weight=4.0),
                "drop": arena_votes(rng, true, votes, "drop", top_weight=4.0)}
        for (name, method), protocol in protocols.items():
            started = time.perf_counter()
            fit = protocol.fit(logs["half" if name == "lmarena-2025" else "drop"])
            seconds[(name, method)] += time.perf_counter() - started
            inside[(name, method)].append(np.mean((fit.lower <= true) & (true <= fit.upper)))
            widths[(name, method)].append(np.mean(fit.upper - fit.lower))
    return [Coverage(f"{name} {method}", np.array(inside[(name, method)]), np.array(widths[(name, method)]),
                     seconds[(name, method)] / repetitions) for name, method in METHODS]


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


def ppi_coverage(repetitions: int, human_votes: int, judge_votes: int, seed: int, *, bias: float = 150.0,
                 agreement: float = 0.7, ridge: float | None = None) -> PPIResult:
    """The ``ppi`` part: the human + judge board, the human-only board and the naive pool, over ``repetitions``
    studies with a judge biased toward the sixth-best model (the middle of the board)."""
    rng = np.random.default_rng([seed, 1])
    true = truth()
    ridge = prior_ridge(400.0) if ridge is None else ridge
    results = {"ppi": ([], [], 0.0), "human": ([], [], 0.0), "pooled": ([], [], 0.0)}
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
            inside.append(np.mean(np.abs(rating - true) <= half))
            widths.append(np.mean(2 * half))
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


@dataclass(frozen=True)
class Threshold:
    votes: int
    half_width: float  # median, Elo points
    range_length: float  # median number of ranks in the rank range
    holds_true_rank: float  # share of repetitions
    rank_off: float  # share with |point rank − true rank| ≥ 3


def thresholds(repetitions: int, established: int, seed: int, steps: Sequence[int] = VOTE_STEPS) -> list[Threshold]:
    """The ``thresholds`` part: a newcomer (a model of the truth drawn at random) with n votes against uniformly
    drawn opponents, the others with ``established`` votes among them; the arena protocol, its default prior, tie
    policy drop, sandwich intervals."""
    rng = np.random.default_rng([seed, 2])
    true = truth()
    n = len(true)
    true_rank = np.argsort(np.argsort(-true)) + 1
    protocol = get_protocol("arena", intervals="sandwich", ridge=prior_ridge(400.0))
    rows = []
    for votes in steps:
        half, length, holds, off = [], [], [], []
        for _ in range(repetitions):
            new = int(rng.integers(n))
            others = np.delete(np.arange(n), new)
            a, b = pair_draws(rng, n - 1, established)
            a, b = others[a], others[b]
            rival = others[rng.integers(n - 1, size=votes)]
            # the newcomer's votes are all decisive: ``votes`` counts the votes in the fit, as the thresholds do
            mine = np.where(rng.random(votes) < win_probability(true, np.full(votes, new), rival), 0, 1)
            outcome = np.concatenate([outcomes(rng, true, a, b, "drop"), mine])
            a, b = np.concatenate([a, np.full(votes, new)]), np.concatenate([b, rival])
            fit = protocol.fit(EncodedVotes(tuple(map(str, range(n))), a, b, outcome))
            best, worst = rank_ranges(fit.lower, fit.upper, np.ones(n, dtype=bool))
            point = np.argsort(np.argsort(-fit.rating)) + 1
            half.append((fit.upper[new] - fit.lower[new]) / 2)
            length.append(worst[new] - best[new] + 1)
            holds.append(best[new] <= true_rank[new] <= worst[new])
            off.append(abs(point[new] - true_rank[new]) >= 3)
        rows.append(Threshold(votes, float(np.median(half)), float(np.median(length)), float(np.mean(holds)),
                              float(np.mean(off))))
    return rows


def interval_table(results: list[Coverage], repetitions: int, votes: int) -> str:
    lines = [f"95% interval coverage of the true ratings: {repetitions} simulated arenas of {votes} votes, 12 models "
             "(pairs among the top four drawn 4x as often)",
             f"{'protocol and intervals':26} | {'coverage':>8} | {'lowest arena':>12} | {'mean width':>10} | "
             f"{'ms per fit':>10}"]
    lines.append("-" * len(lines[-1]))
    for result in results:
        lines.append(f"{result.label:26} | {result.coverage.mean():8.1%} | {result.coverage.min():12.1%} | "
                     f"{result.width.mean():10.1f} | {1000 * result.seconds:10.1f}")
    return "\n".join(lines)


def ppi_table(result: PPIResult, repetitions: int, bias: float) -> str:
    needed, saved = result.saved()
    lines = [f"Human + judge (PPI++), {repetitions} simulated studies: {result.human_votes} human votes (each battle "
             f"also judged) and {result.judge_votes} judge-only votes; the judge favours one model by {bias:.0f} "
             "points",
             f"{'board':35} | {'coverage':>8} | {'mean width':>10} | {'ms per fit':>10}"]
    lines.append("-" * len(lines[-1]))
    for label, fit in (("human votes only", result.human), ("human + judge, PPI correction", result.ppi),
                       ("human + judge pooled, no correction", result.pooled)):
        lines.append(f"{label:35} | {fit.coverage.mean():8.1%} | {fit.width.mean():10.1f} | "
                     f"{1000 * fit.seconds:10.1f}")
    lines.append(f"lambda (PPI++ power tuning): mean {result.lam.mean():.2f}, range {result.lam.min():.2f}-"
                 f"{result.lam.max():.2f}. At equal width the human-only board needs {needed:,.0f} human votes: "
                 f"the judge saves {needed - result.human_votes:,.0f} ({saved:.0%}); simulated, the human-only "
                 f"board with {needed:,.0f} votes has a mean width of {result.confirmed_width:.1f}.")
    return "\n".join(lines)


def threshold_table(rows: list[Threshold], repetitions: int, established: int) -> str:
    lines = [f"A newcomer with n votes in the fit on a board of 11 models with {established} votes among them ({repetitions} "
             "repetitions per n; arena protocol, prior 400, sandwich intervals)",
             f"{'n votes':>7} | {'median ±':>8} | {'median rank range':>17} | {'range holds true rank':>21} | "
             f"{'point rank 3+ off':>17}"]
    lines.append("-" * len(lines[-1]))
    for row in rows:
        lines.append(f"{row.votes:7d} | {row.half_width:8.0f} | {row.range_length:17.0f} | "
                     f"{row.holds_true_rank:21.1%} | {row.rank_off:17.1%}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated parts (default {','.join(PARTS)})")
    parser.add_argument("--repetitions", type=int, default=200, help="simulated arenas per figure (default 200)")
    parser.add_argument("--votes", type=int, default=5000, help="votes per arena in the intervals part (default 5000)")
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds (default 1000)")
    parser.add_argument("--human-votes", type=int, default=2000, help="ppi: human votes (default 2000)")
    parser.add_argument("--judge-votes", type=int, default=20000, help="ppi: judge-only votes (default 20000)")
    parser.add_argument("--judge-bias", type=float, default=150.0, help="ppi: the judge's bias, Elo (default 150)")
    parser.add_argument("--agreement", type=float, default=0.7,
                        help="ppi: share of battles on which the judge's draw is the person's (default 0.7)")
    parser.add_argument("--established", type=int, default=20000,
                        help="thresholds: votes among the established models (default 20000)")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown or args.repetitions < 1:
        print(f"Unknown part(s) {', '.join(unknown)}: choose from {', '.join(PARTS)}." if unknown else
              "--repetitions must be at least 1.", file=sys.stderr)
        return 2
    blocks = []
    if "intervals" in parts:
        blocks.append(interval_table(interval_coverage(args.repetitions, args.votes, args.seed, args.rounds),
                                     args.repetitions, args.votes))
    if "ppi" in parts:
        blocks.append(ppi_table(ppi_coverage(args.repetitions, args.human_votes, args.judge_votes, args.seed,
                                             bias=args.judge_bias, agreement=args.agreement),
                                args.repetitions, args.judge_bias))
    if "thresholds" in parts:
        blocks.append(threshold_table(thresholds(args.repetitions, args.established, args.seed), args.repetitions,
                                      args.established))
    print("\n\n".join(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
