"""``python -m tools.ratings_bench``: our Bradley–Terry fit + bootstrap against the peer libraries, on the same votes.

Synthetic votes: 12 models whose true ratings are the taxonomy benchmark's published human Elo table (protocol T1,
Easy subset with definitions) stretched to span about 850–1150; pairs drawn uniformly, positions at random; 25% of
votes are not decisive (15% "tie", 10% "both_bad"); the rest are won with the Bradley–Terry probability of the
true ratings. Sizes 10k, 100k and 1M votes by default.

For each size it times, in one run on the same data:

- ours: :func:`ratings.fit_leaderboard` (``ridge=0``, the pure MLE) from the vote DataFrame to the finished table,
  with ``--rounds`` bootstrap rounds; one warm-up call, then the median of ``--repeats`` calls;
- the peers (``requirements-bench.txt``), each in a fresh process of the virtualenv ``.venv-bench-peers``, which this
  command creates and fills on first use (arena-rank pins numpy==2.3.3 and jax==0.8.1, which clash with the
  project's pins): fschat 0.2.36 ``compute_elo_mle_with_tie`` + ``get_bootstrap_result`` (the method the taxonomy
  benchmark's code uses), arena-rank ``BradleyTerry`` with ``ci_method="bootstrap"``, evalica ``bradley_terry`` +
  ``bootstrap``, and choix ``ilsr_pairwise``, ``opt_pairwise`` and ``ilsr_pairwise_dense``. How each is called
  and timed is in :mod:`tools.ratings_bench_peers`; slow peers run fewer rounds and are extrapolated, and the table
  says so;
  a peer whose fit and one round at this size would pass ``--timeout`` (judged from the previous size) is skipped.

It prints per size each method's wall time, its ratio to ours, and the largest rating difference from our fit after
aligning the anchor (both centred on mean 1000). All peers get the same votes and the same tie rule
(``--tie-policy``, default "half": all four libraries take a tie as half a win each way). fschat 0.2.36's
``compute_elo_mle_with_tie`` fits ``LogisticRegression(fit_intercept=False)``, i.e. with scikit-learn's default L2
penalty (C=1), so it is the one peer that is slightly regularised; arena-rank (its ``hessian_reg`` only touches the
sandwich CIs), evalica and choix (``alpha=0``) fit the unregularised MLE, like ours with ``ridge=0``.

After each size's table come the verdicts on the targets:

- speed: ours faster than every peer that ran (the fastest peer is named);
- agreement: within 0.5 Elo (max |Δ|) of every peer in :data:`SAME_MODEL_PEERS` that ran, i.e. the peers that fit
  the same unregularised model with the same tie rule (fschat is left out: its L2 penalty moves the ratings);
- at 1M votes, 1000 rounds in at most 0.3 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import numpy as np
import pandas as pd

from ratings.leaderboard import fit_leaderboard
from ratings.votes import OUTCOMES, TIE_POLICIES

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements-bench.txt"
PEER_VENV = ROOT / ".venv-bench-peers"
WORKER = Path(__file__).resolve().parent / "ratings_bench_peers.py"
PEERS = ("fschat", "arena-rank", "evalica", "choix-ilsr", "choix-opt", "choix-dense")
# The peers that fit the same unregularised Bradley–Terry model as ours (ridge=0) with the same tie rule: the 0.5 Elo
# target applies to them. fschat 0.2.36 keeps scikit-learn's default L2 penalty (C=1), so it is not among them.
SAME_MODEL_PEERS = ("arena-rank", "evalica", "choix-ilsr", "choix-opt", "choix-dense")
MAX_ELO_DIFFERENCE = 0.5

# Published human Elo, taxonomy benchmark (T1), Easy subset with definitions, stretched by 1.9 about the middle of its
# range and moved to centre 1000: about 850–1150.
PUBLISHED = {
    "DeepFloyd": 1056, "Playground": 1055, "FLUX": 1050, "SDXL-turbo": 1039, "SD3": 1033, "SDXL": 1015,
    "HDiT": 994, "PixArt": 990, "Kandinsky3": 961, "Retrieval": 960, "Openjourney": 941, "SD1.5": 900,
}
STRETCH = 1.9


def true_ratings() -> dict[str, float]:
    middle = (max(PUBLISHED.values()) + min(PUBLISHED.values())) / 2
    return {name: 1000.0 + STRETCH * (value - middle) for name, value in PUBLISHED.items()}


def synthetic_codes(n_votes: int, *, seed: int, tie_share: float = 0.15, both_bad_share: float = 0.10,
                    scale: float = 400.0) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(names, model_a, model_b, outcome codes) of ``n_votes`` synthetic votes (module docstring)."""
    rng = np.random.default_rng(seed)
    names = list(true_ratings())
    rating = np.array(list(true_ratings().values()))
    n = len(names)
    a = rng.integers(0, n, n_votes)
    b = (a + rng.integers(1, n, n_votes)) % n
    p_a = 1.0 / (1.0 + 10.0 ** ((rating[b] - rating[a]) / scale))
    kind = rng.random(n_votes)
    decisive = np.where(rng.random(n_votes) < p_a, 0, 1)
    outcome = np.where(kind < tie_share, 2, np.where(kind < tie_share + both_bad_share, 3, decisive))
    return names, a, b, outcome.astype(np.int8)


def synthetic_votes(n_votes: int, *, seed: int = 0) -> pd.DataFrame:
    """The synthetic votes as a vote table (see :mod:`ratings`)."""
    names, a, b, outcome = synthetic_codes(n_votes, seed=seed)
    labels = np.array(names, dtype=object)
    return pd.DataFrame({"model_a": labels[a], "model_b": labels[b],
                         "outcome": np.array(OUTCOMES, dtype=object)[outcome]})


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "").replace(",", "")
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    try:
        return int(float(text[:-1] if factor > 1 else text) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(f"Cannot read size {text!r}: write e.g. 10k, 100k, 1M or 25000.") from None


def time_ours(votes: pd.DataFrame, *, rounds: int, seed: int, tie_policy: str, repeats: int) -> tuple[float, dict]:
    fit_leaderboard(votes, tie_policy=tie_policy, rounds=rounds, seed=seed, ridge=0)  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        table = fit_leaderboard(votes, tie_policy=tie_policy, rounds=rounds, seed=seed, ridge=0)
        times.append(time.perf_counter() - started)
    return statistics.median(times), dict(zip(table["model"], table["rating"]))


def _requirements_hash() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()


def ensure_peer_venv(log=sys.stderr) -> Path:
    """The peers' interpreter, creating ``.venv-bench-peers`` and installing requirements-bench.txt when needed.

    Lines marked ``# no-deps`` are installed with ``pip install --no-deps`` in a second step. A stamp with the hash
    of the requirements file makes later runs skip the install until the file changes.
    """
    python = PEER_VENV / "bin" / "python"
    stamp = PEER_VENV / "requirements-bench.sha256"
    if python.exists() and stamp.exists() and stamp.read_text().strip() == _requirements_hash():
        return python
    print(f"Setting up {PEER_VENV.name} from {REQUIREMENTS.name} (once; a few minutes)...", file=log, flush=True)
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(PEER_VENV)
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines()]
    marked = {line.split("#")[0].strip() for line in REQUIREMENTS.read_text().splitlines() if "no-deps" in line}
    with_deps = [line for line in lines if line and line not in marked]
    without_deps = [line for line in lines if line and line in marked]
    for extra, packages in (([], with_deps), (["--no-deps"], without_deps)):
        if packages:
            command = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *extra, *packages]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(
                    f"Installing the bench peers failed ({' '.join(command[3:])}):\n{done.stderr[-2000:]}\n"
                    f"Fix requirements-bench.txt or the network, delete {PEER_VENV} and run again, "
                    "or pass --peers none."
                )
    stamp.write_text(_requirements_hash())
    return python


def run_peer(python: Path, data: Path, peer: str, *, rounds: int, budget: float, tie_policy: str, seed: int,
             timeout: float) -> dict:
    command = [str(python), str(WORKER), "--data", str(data), "--peer", peer, "--rounds", str(rounds),
               "--budget", str(budget), "--tie-policy", tie_policy, "--seed", str(seed)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=os.environ | {"TQDM_DISABLE": "1", "PYTHONWARNINGS": "ignore"})
    except subprocess.TimeoutExpired:
        return {"peer": peer, "error": f"timed out after {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"peer": peer, "error": f"failed: {last[:120]}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - started
    return result


def max_difference(ours: dict[str, float], theirs: dict[str, float]) -> float:
    common = [m for m in ours if m in theirs]
    x = np.array([ours[m] for m in common])
    y = np.array([theirs[m] for m in common])
    return float(np.abs((x - x.mean()) - (y - y.mean())).max())


def ratio_text(ratio: float) -> str:
    return f"{ratio:.2f}" if ratio < 10 else f"{ratio:,.0f}"


def format_row(method: str, seconds: float | None, ratio: str, diff: str, note: str) -> str:
    time_text = "—" if seconds is None else f"{seconds:.3f}" if seconds < 100 else f"{seconds:.0f}"
    return f"  {method:<64} {time_text:>9} {ratio:>9} {diff:>11}  {note}"


def verdict_lines(ours_s: float, results: dict[str, dict | None], ours: dict[str, float]) -> list[str]:
    """The speed and agreement verdicts of one size. ``results``: {peer: run_peer result} of the peers that were
    run (a result with "error", or None for a skipped peer, counts as not run)."""
    ran = {peer: result for peer, result in results.items() if result and "error" not in result}
    missing = sorted(set(results) - set(ran))
    left_out = f"; {', '.join(missing)} did not run" if missing else ""
    if ran:
        fastest_peer, fastest = min(ran.items(), key=lambda item: item[1]["total_s"])
        faster = all(ours_s < result["total_s"] for result in ran.values())
        speed = (f"  target faster than every peer: {'met' if faster else 'NOT met'} (ours {ours_s:.3f} s; "
                 f"fastest peer {fastest_peer} {fastest['total_s']:.3f} s, "
                 f"{ratio_text(fastest['total_s'] / ours_s)}× ours{left_out})")
    else:
        speed = f"  target faster than every peer: no peer ran{left_out or ' (--peers none)'}"
    same = {peer: max_difference(ours, result["ratings"]) for peer, result in ran.items() if peer in SAME_MODEL_PEERS}
    if same:
        worst_peer, worst = max(same.items(), key=lambda item: item[1])
        agree = (f"  target within {MAX_ELO_DIFFERENCE} Elo of the peers fitting the same unregularised model and tie "
                 f"rule ({', '.join(same)}): {'met' if worst <= MAX_ELO_DIFFERENCE else 'NOT met'} (largest max |Δ| "
                 f"{worst:.4f} Elo, {worst_peer}; fschat is not compared: L2-penalised)")
    else:
        agree = (f"  target within {MAX_ELO_DIFFERENCE} Elo of the peers fitting the same unregularised model and tie "
                 f"rule: no such peer ran ({', '.join(SAME_MODEL_PEERS)})")
    return [speed, agree]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.ratings_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10k,100k,1M", help="comma-separated vote counts (default 10k,100k,1M)")
    parser.add_argument("--rounds", type=int, default=1000, help="bootstrap rounds (default 1000)")
    parser.add_argument("--tie-policy", default="half", choices=TIE_POLICIES, help="tie rule for every method")
    parser.add_argument("--seed", type=int, default=0, help="seed of the votes and of every bootstrap")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help=f"comma-separated peers to run, or 'none' (default: {','.join(PEERS)})")
    parser.add_argument("--budget", type=float, default=20.0,
                        help="seconds of bootstrap per peer and size before extrapolating (default 20)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a peer process is stopped")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of ours (median; default 3)")
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    peers = [] if args.peers.strip().lower() == "none" else [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        parser.error(f"unknown peer(s) {', '.join(unknown)}: choose from {', '.join(PEERS)} or 'none'")
    python = ensure_peer_venv() if peers else None

    print(f"tools.ratings_bench: {len(PUBLISHED)} models, true ratings {min(true_ratings().values()):.0f}–"
          f"{max(true_ratings().values()):.0f}; 25% ties (15% tie + 10% both-bad); tie rule {args.tie_policy!r}; "
          f"{args.rounds} bootstrap rounds; seed {args.seed}")
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}; "
          "time = fit on all votes + bootstrap, from the vote table, wall clock")
    print("max |Δ| = largest rating difference from our unregularised fit, both centred on mean 1000")
    slow: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="ratings-bench-") as tmp:
        for size in sizes:
            names, a, b, outcome = synthetic_codes(size, seed=args.seed)
            labels = np.array(names, dtype=object)
            votes = pd.DataFrame({"model_a": labels[a], "model_b": labels[b],
                                  "outcome": np.array(OUTCOMES, dtype=object)[outcome]})
            ours_s, ours = time_ours(votes, rounds=args.rounds, seed=args.seed, tie_policy=args.tie_policy,
                                     repeats=args.repeats)
            print(f"\n{size:,} votes")
            print(f"  {'method':<64} {'time [s]':>9} {'× ours':>9} {'max |Δ| Elo':>11}  note")
            print(format_row("ratings.fit_leaderboard (ours)", ours_s, "1.0", "—", f"median of {args.repeats} runs"))
            data = Path(tmp) / f"votes-{size}.npz"
            np.savez(data, names=np.array(names), model_a=a, model_b=b, outcome=outcome)
            results: dict[str, dict | None] = {}
            for peer in peers:
                results[peer] = None
                if peer in slow:
                    done_size, fit_s = slow[peer]
                    if 2 * fit_s * size / done_size > args.timeout:  # a fit and one bootstrap round
                        print(format_row(peer, None, "—", "—", f"skipped: its {done_size:,}-vote fit took "
                                         f"{fit_s:.1f} s, so a fit and a round here would pass --timeout "
                                         f"{args.timeout:.0f} s"))
                        continue
                assert python is not None  # the peers' interpreter, made when there are peers
                result = results[peer] = run_peer(python, data, peer, rounds=args.rounds, budget=args.budget,
                                                  tie_policy=args.tie_policy, seed=args.seed, timeout=args.timeout)
                if "error" in result:
                    print(format_row(peer, None, "—", "—", result["error"]))
                    slow[peer] = (size, args.timeout)
                    continue
                slow[peer] = (size, result["fit_s"])
                name = f"{result['label']} [{result['version']}]"
                note = "" if result["rounds_run"] >= result["rounds"] else \
                    f"ran {result['rounds_run']} rounds, extrapolated to {result['rounds']}"
                print(format_row(name, result["total_s"], ratio_text(result["total_s"] / ours_s),
                                 f"{max_difference(ours, result['ratings']):.4f}", note), flush=True)
            for line in verdict_lines(ours_s, results, ours):
                print(line)
            if size >= 1_000_000:
                verdict = "met" if ours_s <= 0.3 else "NOT met"
                print(f"  target 1M votes × 1000 rounds ≤ 0.3 s on 2 cores: {ours_s:.3f} s with {args.rounds} "
                      f"rounds on {os.cpu_count()} CPUs ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
