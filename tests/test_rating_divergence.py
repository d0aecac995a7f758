"""Ratings without a finite estimate: the unpenalised fit of a model that won (or lost) everything runs off, and the
taxonomy-paper protocol says so for the rating and for each bound it reads from such a bootstrap round."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.protocols import get_protocol
from ratings.divergence import bounds_from_rounds, finite_estimate, runaway_models
from ratings.votes import encode_votes


def test_the_groups_that_never_lost_or_never_won_outside_run_off():
    wins = np.zeros((5, 5))
    wins[0, 1] = wins[0, 2] = 3  # 0 never lost: a source
    wins[1, 2] = wins[2, 1] = 1  # 1 and 2 beat each other
    wins[2, 3] = 1  # the middle group {1, 2} beat 3 ...
    wins[3, 4] = wins[4, 3] = 2  # ... and {3, 4} never beat anyone outside: a sink
    assert not finite_estimate(wins)
    assert runaway_models(wins).tolist() == [True, False, False, True, True]  # two groups of two: no one largest
    wins[2, 4] = wins[4, 2] = 1  # {1, 2, 3, 4}: the largest group; 0 runs off against it
    assert runaway_models(wins).tolist() == [True, False, False, False, False]
    wins[3, 0] = 1  # now 3 beat 0: one strongly connected group
    assert finite_estimate(wins) and not runaway_models(wins).any()
    assert finite_estimate(np.zeros((3, 3))) and not runaway_models(np.zeros((3, 3))).any()


def test_a_bound_is_flagged_when_the_percentile_reads_a_round_without_an_estimate():
    samples = np.array([[1000.0, 990.0], [1010.0, 995.0], [9000.0, 1000.0], [1005.0, np.nan]])
    flagged = np.array([False, False, True, False])
    lower, upper = bounds_from_rounds(samples, flagged)
    # model 0: 2.5% reads the two smallest rounds (0 and 3), 97.5% the two largest (1 and 2: round 2 ran off)
    assert lower.tolist() == [False, False] and upper.tolist() == [True, False]  # model 1 has no bound (NaN)
    assert not any(flag.any() for flag in bounds_from_rounds(samples, np.zeros(4, dtype=bool)))


def votes(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"])


def test_the_taxonomy_protocol_names_the_model_that_won_everything_and_its_rounds():
    rng = np.random.default_rng(3)
    rows = [("champ", other, "A") if rng.random() < 0.5 else (other, "champ", "B")
            for other in ("b", "c", "d") for _ in range(4)]
    rows += [(x, y, rng.choice(["A", "B", "tie"])) for x in ("b", "c", "d") for y in ("b", "c", "d") if x != y
             for _ in range(3)]
    encoded = encode_votes(votes(rows))
    protocol = get_protocol("taxonomy-paper", rounds=20)
    fitted = protocol.fit(encoded)
    champ = list(encoded.models).index("champ")
    assert fitted.runaway.tolist() == [m == "champ" for m in encoded.models]
    assert fitted.rating[champ] > 3000  # where lbfgs stopped, not an estimate
    assert fitted.upper_runaway[champ] and fitted.lower_runaway[champ]  # every round has it winning everything
    table = protocol.result_table(encoded, fitted)
    assert table.iloc[0]["model"] == "champ" and table.equals(protocol.rate(encoded))
    # one loss brings it back: a finite estimate, nothing flagged
    fair = protocol.fit(encode_votes(votes(rows + [("b", "champ", "A")] * 2)))
    assert not fair.runaway.any() and fair.rating.max() < 2000
    # a penalised protocol always has a finite estimate and says nothing
    assert get_protocol("fastchat-2023", rounds=5).fit(encoded).runaway is None
