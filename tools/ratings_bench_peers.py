"""Worker of ``python -m tools.ratings_bench``: times one peer library on one synthetic vote set, in the peers'
virtualenv.

Run as a script by the interpreter of ``.venv-bench-peers`` (never imported by :mod:`ratings`, whose pins the peers
clash with): ``python ratings/bench_peers.py --data votes.npz --peer fschat --rounds 1000 --budget 30``. It prints
one JSON object on its last stdout line: the peer's ratings (fit on all votes) and its wall times.

Each peer gets the votes in its own documented input format (building that input is not timed), fits on all votes
(timed; a fit under 30 s is run twice and the second run timed, so JIT compilation and caches are warm, as they
are for our code), then runs its own bootstrap (timed): first one round as a probe, then all ``rounds`` when the
probe says they take at most ``budget`` seconds, otherwise ``r`` = budget / probe rounds (at least 4), and the time
of all ``rounds`` is extrapolated as start-up + per-round cost from the 1-round and r-round runs (the output says
so). choix has no bootstrap: its rounds resample the votes (or, for the dense variant, redraw the aggregated counts)
around ``choix`` fits.

Tie rules, as in :mod:`ratings.votes`: "drop" gives the peers only decisive votes; "half" gives them ties and
both-bad as ties (half a win each way in all four libraries); "half_ties_drop_both_bad" drops both-bad first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from importlib import metadata

if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)  # keep ratings/*.py (elo.py, plots.py, ...) from shadowing modules of the peers

os.environ.setdefault("TQDM_DISABLE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

A, B, TIE, BOTH_BAD = range(4)
LN10 = math.log(10.0)
SLOW_FIT_S = 30.0


def keep_mask(outcome: np.ndarray, tie_policy: str) -> np.ndarray:
    if tie_policy == "drop":
        return outcome <= B
    if tie_policy == "half_ties_drop_both_bad":
        return outcome != BOTH_BAD
    return np.ones(len(outcome), dtype=bool)


class Peer:
    """One peer: ``prepare`` builds its input (untimed), ``fit`` returns {model: rating}, ``bootstrap(r)`` runs r
    rounds; ``bootstrap_includes_fit`` says whether the bootstrap call also refits on all votes."""

    label = ""
    package = ""
    bootstrap_includes_fit = False

    def __init__(self, names: list[str], a: np.ndarray, b: np.ndarray, outcome: np.ndarray, seed: int):
        self.names, self.a, self.b, self.outcome, self.seed = names, a, b, outcome, seed

    def prepare(self) -> None:
        pass

    def fit(self) -> dict[str, float]:
        raise NotImplementedError

    def bootstrap(self, rounds: int) -> None:
        raise NotImplementedError


class FastChat(Peer):
    label = "fschat compute_elo_mle_with_tie + get_bootstrap_result"
    package = "fschat"
    WINNER = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)

    def prepare(self) -> None:
        import importlib.util
        import types
        from pathlib import Path

        # elo_analysis imports fastchat.model.model_registry, whose package __init__ loads torch/transformers model
        # adapters that the two functions we call never use; register the package without running that __init__.
        spec = importlib.util.find_spec("fastchat")
        if spec is None or spec.origin is None:
            raise ImportError("fschat is not installed in this interpreter (requirements-bench.txt installs it).")
        package = types.ModuleType("fastchat.model")
        package.__path__ = [str(Path(spec.origin).parent / "model")]
        sys.modules.setdefault("fastchat.model", package)
        from fastchat.serve.monitor import elo_analysis

        self.module = elo_analysis
        names = np.array(self.names, dtype=object)
        self.df = pd.DataFrame({"model_a": names[self.a], "model_b": names[self.b],
                                "winner": self.WINNER[self.outcome]})

    def fit(self) -> dict[str, float]:
        return self.module.compute_elo_mle_with_tie(self.df).to_dict()

    def bootstrap(self, rounds: int) -> None:
        np.random.seed(self.seed)  # get_bootstrap_result samples from the global random state
        self.module.get_bootstrap_result(self.df, self.module.compute_elo_mle_with_tie, rounds)


class ArenaRank(Peer):
    label = "arena-rank BradleyTerry (ci_method='bootstrap')"
    package = "arena-rank"
    WINNER = np.array(["model_a", "model_b", "tie", "both_bad"], dtype=object)

    def prepare(self) -> None:
        import multiprocessing

        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset

        # arena-rank bootstraps in a multiprocessing.Pool; forking a process that runs JAX's threads deadlocks
        # (the pool's workers hang at 0% CPU), so use "forkserver", Python 3.14's default start method on Linux.
        multiprocessing.set_start_method("forkserver", force=True)

        self.classes = BradleyTerry, PairDataset
        names = np.array(self.names, dtype=object)
        self.df = pd.DataFrame({"model_a": names[self.a], "model_b": names[self.b],
                                "winner": self.WINNER[self.outcome]})

    def fit(self) -> dict[str, float]:
        bradley_terry, pair_dataset = self.classes
        self.dataset = pair_dataset.from_pandas(self.df)
        self.model = bradley_terry(n_competitors=len(self.dataset.competitors))
        self.model.fit(self.dataset)
        scaled = np.asarray(self.model.params["ratings"]) * self.model.alpha + self.model.init_rating
        return dict(zip(self.dataset.competitors, scaled.tolist()))

    def bootstrap(self, rounds: int) -> None:
        self.model.compute_ratings_and_cis(self.dataset, ci_method="bootstrap", num_bootstrap=rounds, seed=self.seed)


class Evalica(Peer):
    label = "evalica bradley_terry + bootstrap"
    package = "evalica"
    bootstrap_includes_fit = True

    def prepare(self) -> None:
        import evalica

        self.evalica = evalica
        names = np.array(self.names, dtype=object)
        winner = np.array([evalica.Winner.X, evalica.Winner.Y, evalica.Winner.Draw, evalica.Winner.Draw], dtype=object)
        self.xs, self.ys = names[self.a].tolist(), names[self.b].tolist()
        self.winners = winner[self.outcome].tolist()

    def fit(self) -> dict[str, float]:
        scores = self.evalica.bradley_terry(self.xs, self.ys, self.winners, tie_weight=0.5).scores
        return {m: 1000.0 + 400.0 * math.log10(s) for m, s in scores.items()}

    def bootstrap(self, rounds: int) -> None:
        self.evalica.bootstrap(self.evalica.bradley_terry, self.xs, self.ys, self.winners, tie_weight=0.5,
                               n_resamples=rounds, bootstrap_method="percentile", random_state=self.seed)


class ChoixPairs(Peer):
    """choix on (winner, loser) pairs; under a "half" rule each decisive vote is listed twice and each tie once each
    way, which has the same MLE as counting a tie half a win to each side."""

    package = "choix"
    function = "ilsr_pairwise"
    label = "choix ilsr_pairwise (vote pairs)"

    def _pairs(self, a: np.ndarray, b: np.ndarray, outcome: np.ndarray) -> list[tuple[int, int]]:
        decisive = outcome <= B
        winner = np.where(outcome == A, a, b)[decisive]
        loser = np.where(outcome == A, b, a)[decisive]
        ties = outcome > B
        if ties.any():  # only under a "half" rule do ties reach the peers
            winner = np.concatenate([winner, winner, a[ties], b[ties]])
            loser = np.concatenate([loser, loser, b[ties], a[ties]])
        return list(zip(winner.tolist(), loser.tolist()))

    def _fit_pairs(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        import choix

        if self.function == "opt_pairwise":
            return choix.opt_pairwise(len(self.names), pairs, alpha=0.0)
        return choix.ilsr_pairwise(len(self.names), pairs)

    def fit(self) -> dict[str, float]:
        theta = self._fit_pairs(self._pairs(self.a, self.b, self.outcome))
        return dict(zip(self.names, (1000.0 + 400.0 * (theta - theta.mean()) / LN10).tolist()))

    def bootstrap(self, rounds: int) -> None:
        rng = np.random.default_rng(self.seed)
        for _ in range(rounds):
            pick = rng.integers(0, len(self.a), len(self.a))
            self._fit_pairs(self._pairs(self.a[pick], self.b[pick], self.outcome[pick]))


class ChoixOpt(ChoixPairs):
    function = "opt_pairwise"
    label = "choix opt_pairwise (vote pairs)"


class ChoixDense(Peer):
    label = "choix ilsr_pairwise_dense (aggregated counts)"
    package = "choix"

    def fit(self) -> dict[str, float]:
        import choix

        n = len(self.names)
        decisive = self.outcome <= B
        winner = np.where(self.outcome == B, self.b, self.a)[decisive]
        loser = np.where(self.outcome == B, self.a, self.b)[decisive]
        self.decisive = np.bincount(winner * n + loser, minlength=n * n).reshape(n, n)
        ties = np.bincount(self.a[~decisive] * n + self.b[~decisive], minlength=n * n).reshape(n, n)
        self.ties = np.triu(ties + ties.T)  # one cell per unordered pair
        theta = choix.ilsr_pairwise_dense(self._wins(self.decisive, self.ties))
        return dict(zip(self.names, (1000.0 + 400.0 * (theta - theta.mean()) / LN10).tolist()))

    @staticmethod
    def _wins(decisive: np.ndarray, ties: np.ndarray) -> np.ndarray:
        return decisive + 0.5 * (ties + ties.T)  # a tie is half a win to each side

    def bootstrap(self, rounds: int) -> None:
        import choix

        n = len(self.names)
        counts = np.concatenate([self.decisive.ravel(), self.ties.ravel()])
        rng = np.random.default_rng(self.seed)
        for row in rng.multinomial(counts.sum(), counts / counts.sum(), size=rounds):
            choix.ilsr_pairwise_dense(self._wins(row[: n * n].reshape(n, n), row[n * n:].reshape(n, n)))


PEERS: dict[str, type[Peer]] = {
    "fschat": FastChat, "arena-rank": ArenaRank, "evalica": Evalica,
    "choix-ilsr": ChoixPairs, "choix-opt": ChoixOpt, "choix-dense": ChoixDense,
}


def _time_bootstrap(peer: Peer, rounds: int, fit_s: float) -> float:
    """Seconds of ``peer.bootstrap(rounds)``, less one fit when that call also refits on all votes."""
    started = time.perf_counter()
    peer.bootstrap(rounds)
    elapsed = time.perf_counter() - started
    return max(elapsed - fit_s, 0.0) if peer.bootstrap_includes_fit else elapsed


def run(peer: Peer, rounds: int, budget: float) -> dict:
    """Fit, then bootstrap one round as a probe: all ``rounds`` if the probe says they take at most ``budget``
    seconds; otherwise r = budget / probe rounds (at least 4), and the time of ``rounds`` is extrapolated as
    start-up + per-round cost from the 1-round and r-round runs."""
    peer.prepare()
    started = time.perf_counter()
    ratings = peer.fit()
    fit_s = time.perf_counter() - started
    if fit_s < SLOW_FIT_S:  # that run warmed JIT compilers and caches; time a second one
        started = time.perf_counter()
        ratings = peer.fit()
        fit_s = time.perf_counter() - started
    result = {"label": peer.label, "version": metadata.version(peer.package), "fit_s": fit_s, "rounds": rounds,
              "ratings": ratings}
    probe_s = _time_bootstrap(peer, 1, fit_s)
    if rounds <= 1 or probe_s * rounds <= budget:
        boot_s = probe_s if rounds <= 1 else _time_bootstrap(peer, rounds, fit_s)
        return result | {"boot_s": boot_s, "rounds_run": rounds, "total_s": fit_s + boot_s}
    run_rounds = int(min(rounds - 1, max(4, budget // max(probe_s, 1e-6))))
    boot_s = _time_bootstrap(peer, run_rounds, fit_s)
    per_round = (boot_s - probe_s) / (run_rounds - 1)
    if per_round <= 0:  # timing noise: fall back to scaling in proportion
        per_round, startup = boot_s / run_rounds, 0.0
    else:
        startup = max(boot_s - per_round * run_rounds, 0.0)
    return result | {"boot_s": boot_s, "rounds_run": run_rounds, "total_s": fit_s + startup + per_round * rounds,
                     "startup_s": startup, "per_round_s": per_round}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="npz with names, model_a, model_b, outcome (codes 0..3)")
    parser.add_argument("--peer", required=True, choices=sorted(PEERS))
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of bootstrap before scaling up")
    # ratings.votes.TIE_POLICIES, written out: this script runs beside the peer libraries and imports nothing of ours
    parser.add_argument("--tie-policy", default="half", choices=["drop", "half", "half_ties_drop_both_bad"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    data = np.load(args.data, allow_pickle=False)
    keep = keep_mask(data["outcome"], args.tie_policy)
    peer = PEERS[args.peer]([str(n) for n in data["names"]], data["model_a"][keep].astype(np.int64),
                            data["model_b"][keep].astype(np.int64), data["outcome"][keep].astype(np.int64), args.seed)
    result = run(peer, args.rounds, args.budget)
    print(json.dumps(result | {"peer": args.peer}))


if __name__ == "__main__":
    main()
