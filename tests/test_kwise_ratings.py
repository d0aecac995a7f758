"""The four-image votes' rating protocol (``kwise-rank-breaking``): the rank-breaking, the fit against an independent
computation (choix's Bradley–Terry MLE of the broken pairs), consistency for Plackett–Luce data, and the bootstrap
redrawing whole four-image votes."""

import choix
import numpy as np
import pandas as pd
import pytest

from core.protocols import get_protocol
from ratings.kwise import KwiseVotes, broken_pairs, plackett_luce_best
from ratings.protocols.kwise_rank_breaking import ELO_PER_NAT
from ratings.votes import EncodedVotes


def _votes(shown, best, worst, models=("m0", "m1", "m2", "m3", "m4")):
    return KwiseVotes(tuple(models), np.asarray(shown, dtype=np.int64), np.asarray(best, dtype=np.int64),
                      np.asarray(worst, dtype=np.int64))


def test_best_beats_three_and_the_middle_two_beat_the_worst():
    votes = _votes([[3, 0, 4, 1], [2, 1, 0, 3]], best=[2, 0], worst=[1, -1])
    origin, winner, loser = broken_pairs(votes)
    first = sorted(zip(winner[origin == 0].tolist(), loser[origin == 0].tolist()))
    assert first == sorted([(4, 3), (4, 0), (4, 1), (3, 0), (1, 0)])  # best 4 over 3, 0, 1; middle 3 and 1 over 0
    second = sorted(zip(winner[origin == 1].tolist(), loser[origin == 1].tolist()))
    assert second == [(2, 0), (2, 1), (2, 3)]  # no worst: the best over the three others only


def _pl_votes(theta, count, rng, with_worst=True):
    n = len(theta)
    shown = np.array([rng.choice(n, 4, replace=False) for _ in range(count)])
    best = np.array([rng.choice(4, p=p) for p in plackett_luce_best(theta, shown)])
    worst = np.full(count, -1)
    if with_worst:  # the worst of the remaining three: reversed Plackett–Luce choice (weights e^-θ)
        for k in range(count):
            rest = [s for s in range(4) if s != best[k]]
            w = np.exp(-theta[shown[k, rest]])
            worst[k] = rest[rng.choice(3, p=w / w.sum())]
    return _votes(shown, best, worst, models=tuple(f"m{i}" for i in range(n)))


def _no_pairwise(models, kwise):
    empty = np.zeros(0, dtype=np.int64)
    return EncodedVotes(tuple(models), empty, empty, empty, kwise=kwise)


def test_the_fit_is_the_bradley_terry_mle_of_the_broken_pairs_and_the_pairwise_votes():
    rng = np.random.default_rng(3)
    theta = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    kwise = _pl_votes(theta, 300, rng)
    a, b = rng.integers(0, 5, 400), rng.integers(0, 5, 400)
    keep = a != b
    a, b = a[keep], b[keep]
    outcome = (rng.random(len(a)) > 1 / (1 + np.exp(theta[b] - theta[a]))).astype(np.int64)  # 0: A won
    outcome[::17] = 2  # ties leave the fit
    votes = EncodedVotes(kwise.models, a, b, outcome, kwise=kwise)
    fit = get_protocol("kwise-rank-breaking", rounds=0, ridge=0.0).fit(votes)
    _, winner, loser = broken_pairs(kwise)
    decisive = outcome < 2
    pairs = [(int(w), int(lo)) for w, lo in zip(winner, loser)]
    pairs += [(int(x), int(y)) if o == 0 else (int(y), int(x)) for x, y, o in zip(a[decisive], b[decisive],
                                                                                   outcome[decisive])]
    reference = choix.opt_pairwise(5, pairs, alpha=0.0, method="Newton-CG")
    expected = 1000 + ELO_PER_NAT * (reference - reference.mean())
    np.testing.assert_allclose(fit.rating, expected, atol=0.01)


def test_rank_breaking_recovers_plackett_luce_strengths():
    theta = np.array([1.0, 0.5, 0.0, -0.5, -1.0])
    kwise = _pl_votes(theta, 20000, np.random.default_rng(7))
    fit = get_protocol("kwise-rank-breaking", rounds=0).fit(_no_pairwise(kwise.models, kwise))
    truth = 1000 + ELO_PER_NAT * (theta - theta.mean())
    assert np.abs(fit.rating - truth).max() < 12  # Elo points, 20,000 votes


def test_the_bootstrap_redraws_whole_votes_and_covers_the_truth():
    theta = np.array([0.6, 0.2, 0.0, -0.3, -0.5])
    truth = 1000 + ELO_PER_NAT * (theta - theta.mean())
    inside = []
    for seed in range(30):
        kwise = _pl_votes(theta, 300, np.random.default_rng(100 + seed))
        fit = get_protocol("kwise-rank-breaking", rounds=200, seed=seed).fit(_no_pairwise(kwise.models, kwise))
        inside.append((fit.lower <= truth) & (truth <= fit.upper))
    assert np.mean(inside) >= 0.88  # 95% intervals, 150 model-intervals


def test_the_table_lists_a_model_seen_only_in_four_image_votes():
    kwise = KwiseVotes.from_rows([
        {"model_1": "x", "model_2": "y", "model_3": "z", "model_4": "w", "best": 1, "worst": 4},
        {"model_1": "w", "model_2": "z", "model_3": "y", "model_4": "x", "best": 4, "worst": None},
    ])
    votes = EncodedVotes(("x", "y"), np.array([0]), np.array([1]), np.array([0]), kwise=kwise)
    table = get_protocol("kwise-rank-breaking", rounds=20).rate(votes)
    assert set(table["model"]) == {"x", "y", "z", "w"}
    x = table.set_index("model").loc["x"]
    assert x["wins"] == 1 + 3 + 3 and x["losses"] == 0
    assert isinstance(table, pd.DataFrame) and (table["protocol"] == "kwise-rank-breaking").all()


@pytest.mark.parametrize("name", ["arena", "online-elo"])
def test_other_protocols_ignore_the_four_image_votes(name):
    kwise = _pl_votes(np.zeros(5), 10, np.random.default_rng(0))
    a, b, o = np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([0, 0, 1])
    with_kwise = get_protocol(name).rate(EncodedVotes(kwise.models, a, b, o, kwise=kwise))
    without = get_protocol(name).rate(EncodedVotes(kwise.models, a, b, o))
    pd.testing.assert_frame_equal(with_kwise, without)
