"""The robustness audit (ratings.robustness): on arenas built to be fragile and robust, the votes it lists really
change the top places when removed from the vote table and rated again by the protocol itself."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.protocols import get_protocol
from ratings.robustness import audit_top, greedy_drops, take_votes
from ratings.votes import count_tensor, encode_votes


def arena_log(strengths: dict[str, float], votes_per_pair: int, seed: int, *, pair_votes: dict | None = None,
              tie_share: float = 0.15) -> pd.DataFrame:
    """Every pair of models meets ``votes_per_pair`` times (``pair_votes`` overrides a pair), outcomes from
    Bradley–Terry on ``strengths`` (Elo) with ties."""
    rng = np.random.default_rng(seed)
    names = list(strengths)
    rows = []
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            a, b = names[x], names[y]
            n = (pair_votes or {}).get((a, b), votes_per_pair)
            p = 1 / (1 + 10 ** ((strengths[b] - strengths[a]) / 400))
            draw = rng.random(n)
            outcome = np.where(draw < tie_share, "tie", np.where(rng.random(n) < p, "A", "B"))
            swap = rng.random(n) < 0.5
            rows.append(pd.DataFrame({"model_a": np.where(swap, b, a), "model_b": np.where(swap, a, b),
                                      "outcome": np.where(swap, pd.Series(outcome).map(
                                          {"A": "B", "B": "A", "tie": "tie"}), outcome)}))
    return pd.concat(rows, ignore_index=True).sample(frac=1, random_state=seed).reset_index(drop=True)


def audit(protocol, votes: pd.DataFrame, k: int = 3):
    encoded = encode_votes(votes)
    counts = count_tensor(encoded.model_a, encoded.model_b, encoded.outcome, encoded.n_models)
    return audit_top(counts, encoded.models, np.ones(encoded.n_models, bool), protocol.point_model, k=k)


def without(votes: pd.DataFrame, drops) -> pd.DataFrame:
    """The vote table less the listed (model_a, model_b, outcome, count) votes, the last ones of each kind."""
    keep = np.ones(len(votes), dtype=bool)
    for a, b, outcome, count in drops:
        rows = np.flatnonzero((votes["model_a"] == a).to_numpy() & (votes["model_b"] == b).to_numpy()
                              & (votes["outcome"] == outcome).to_numpy())
        assert len(rows) >= count
        keep[rows[len(rows) - count:]] = False
    return votes[keep]


def holders(protocol, votes: pd.DataFrame) -> list[str]:
    table = protocol.with_settings(rounds=0).rate_frame(votes) if "rounds" in protocol.settings() else \
        protocol.rate_frame(votes)
    return list(table.sort_values("rating", ascending=False)["model"])


FRAGILE = {"top": 1100.0, "second": 1099.0, "third": 1000.0, "fourth": 900.0}
ROBUST = {"top": 1300.0, "second": 1100.0, "third": 950.0, "fourth": 800.0}


@pytest.mark.parametrize("name", ["arena", "lmarena-2025"])
def test_a_fragile_top_changes_with_a_few_votes_and_the_listed_votes_do_it(name):
    protocol = get_protocol(name)
    votes = arena_log(FRAGILE, 200, 0, pair_votes={("top", "second"): 30})
    result = audit(protocol, votes)
    first = result.places[0]
    assert first.model == holders(protocol, votes)[0]
    assert first.votes is not None and first.votes <= 10
    assert abs(first.approximate - first.votes) <= 2  # a few votes: the influence function is all but exact
    assert sum(n for *_, n in first.drops) == first.votes
    after = holders(protocol, without(votes, first.drops))
    assert after[0] != first.model and after[0] == first.successor  # confirmed by the protocol's own refit
    assert result.total_votes == len(votes)


@pytest.mark.parametrize("name", ["arena", "lmarena-2025"])
def test_a_robust_top_needs_many_votes_and_the_refits_confirm_each_place(name):
    protocol = get_protocol(name)
    votes = arena_log(ROBUST, 400, 1)
    result = audit(protocol, votes)
    assert [p.place for p in result.places] == [1, 2, 3]
    for place in result.places:
        assert place.votes is not None and place.votes >= 60, place
        # hundreds of votes: the first-order approximation is the right size, the refits find the count
        assert place.votes / 3 <= place.approximate <= 3 * place.votes, place
        after = holders(protocol, without(votes, place.drops))
        assert after[place.place - 1] != place.model


def test_the_greedy_order_takes_the_most_harmful_votes_first():
    effects = np.zeros((2, 2, 4))
    effects[0, 1, 0] = -0.5  # a vote where model 0 beat 1: dropping it lowers 0's lead the most
    effects[1, 0, 1] = -0.2
    effects[0, 1, 1] = +0.3  # dropping a loss of 0 would raise its lead: never taken
    counts = np.zeros((2, 2, 4), dtype=np.int64)
    counts[0, 1, 0], counts[1, 0, 1], counts[0, 1, 1] = 2, 10, 5
    order, available, needed = greedy_drops(effects, counts, gap=1.5)
    assert needed == 5  # 2 × 0.5 + 3 × 0.2 ≥ 1.5
    drops = take_votes(order, available, needed, counts.shape)
    assert drops[0, 1, 0] == 2 and drops[1, 0, 1] == 3 and drops[0, 1, 1] == 0
    assert greedy_drops(effects, counts, gap=100.0)[2] is None


def test_a_protocol_without_a_point_model_is_not_audited():
    assert get_protocol("online-elo").point_model(np.zeros((2, 2, 4))) is None
