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
centred on 1000. Votes are drawn (:mod:`tools.judge_study`) from the model each protocol fits, so that its estimand
is the truth:

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
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.protocols import get_protocol
from ratings.leaderboard import prior_ridge
from ratings.ranks import rank_ranges
from ratings.votes import EncodedVotes
from tools.judge_study import (
    Coverage,
    arena_votes,
    outcomes,
    pair_draws,
    ppi_coverage,
    ppi_table,
    text_table,
    win_probability,
)
from tools.simulate import TRUE_ELO, centred_truth

PARTS = ("intervals", "ppi", "thresholds")
METHODS = (("lmarena-2025", "sandwich"), ("lmarena-2025", "bootstrap"), ("arena", "sandwich"), ("arena", "bootstrap"))
VOTE_STEPS = (10, 25, 50, 100, 200, 300, 500, 1000)


def truth() -> np.ndarray:
    return centred_truth(list(TRUE_ELO.values()))


def interval_coverage(repetitions: int, votes: int, seed: int, rounds: int = 1000) -> list[Coverage]:
    """The ``intervals`` part: coverage of each (protocol, method) of :data:`METHODS`."""
    rng = np.random.default_rng([seed, 0])
    true = truth()
    inside: dict[tuple[str, str], list[float]] = {method: [] for method in METHODS}
    widths: dict[tuple[str, str], list[float]] = {method: [] for method in METHODS}
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
            inside[(name, method)].append(float(np.mean((fit.lower <= true) & (true <= fit.upper))))
            widths[(name, method)].append(float(np.mean(fit.upper - fit.lower)))
    return [Coverage(f"{name} {method}", np.array(inside[(name, method)]), np.array(widths[(name, method)]),
                     seconds[(name, method)] / repetitions) for name, method in METHODS]


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
    return text_table(
        f"95% interval coverage of the true ratings: {repetitions} simulated arenas of {votes} votes, 12 models (pairs "
        "among the top four drawn 4x as often)",
        f"{'protocol and intervals':26} | {'coverage':>8} | {'lowest arena':>12} | {'mean width':>10} | "
        f"{'ms per fit':>10}",
        [f"{result.label:26} | {result.coverage.mean():8.1%} | {result.coverage.min():12.1%} | "
         f"{result.width.mean():10.1f} | {1000 * result.seconds:10.1f}" for result in results])


def threshold_table(rows: list[Threshold], repetitions: int, established: int) -> str:
    return text_table(
        f"A newcomer with n votes in the fit on a board of 11 models with {established} votes among them "
        f"({repetitions} repetitions per n; arena protocol, prior 400, sandwich intervals)",
        f"{'n votes':>7} | {'median ±':>8} | {'median rank range':>17} | {'range holds true rank':>21} | "
        f"{'point rank 3+ off':>17}",
        [f"{row.votes:7d} | {row.half_width:8.0f} | {row.range_length:17.0f} | {row.holds_true_rank:21.1%} | "
         f"{row.rank_off:17.1%}" for row in rows])


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
        blocks.append(ppi_table(ppi_coverage(truth(), args.repetitions, args.human_votes, args.judge_votes, args.seed,
                                             bias=args.judge_bias, agreement=args.agreement),
                                args.repetitions, args.judge_bias))
    if "thresholds" in parts:
        blocks.append(threshold_table(thresholds(args.repetitions, args.established, args.seed), args.repetitions,
                                      args.established))
    print("\n\n".join(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
