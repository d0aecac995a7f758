"""A sampling strategy is one declaration: a toy one, registered here, runs in the simulation and in the server.

The toy, ``least-shown-pair``, puts all the mass on the available pair with the fewest votes (the first of ties), so
whatever draws by its probabilities must go round the pairs in order, each pair once per round: the simulation and
the server's draw path (:func:`sampling.draws.draw_pairing`, :func:`arena.session.vote`) are checked to do exactly
that.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena import session as sessions
from datamodel.annotators import sign_in
from datamodel.votes import record_vote
from sampling.draws import draw_pairing, serve_battle
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from sampling.strategies import STRATEGIES, Strategy, get_strategy, pair_index, pair_probabilities
from tools import simulate


def least_shown_pair(*, available, pair_counts, state, **_):
    """P(k*) = 1 for k* = argmin_k {c_k : pair k available} (the first of ties), 0 for every other pair."""
    assert state is None  # needs_fit=False: the declaration is never handed a fit
    counts = np.where(available, pair_counts, np.inf)
    p = np.zeros(counts.shape)
    np.put_along_axis(p, np.argmin(counts, axis=-1)[..., None], 1.0, axis=-1)
    return np.where(available, p, 0.0)  # a row without any available pair stays all zeros


LEAST_SHOWN_PAIR = Strategy("least-shown-pair", "All votes to the pair with the fewest so far.", least_shown_pair,
                            needs_counts=True, needs_fit=False)


@pytest.fixture
def toy():
    """The toy strategy, registered for one test and taken out again (nothing leaks into other tests)."""
    spec = STRATEGIES.register(LEAST_SHOWN_PAIR)
    yield spec
    STRATEGIES.unregister(spec.name)


def test_the_declaration_is_all_the_registry_needs(toy):
    assert get_strategy("least-shown-pair") is toy and list(STRATEGIES)[-1] == "least-shown-pair"
    with pytest.raises(ValueError, match="choices: uniform, balanced, active, least-shown-pair"):
        get_strategy("thompson")
    with pytest.raises(ValueError, match="sampling strategy 'least-shown-pair' is declared twice"):
        STRATEGIES.register(Strategy("least-shown-pair", "another", least_shown_pair))
    available = np.array([True, True, False, True, True, True])
    p = pair_probabilities("least-shown-pair", available=available, pair_counts=np.array([3, 2, 0, 2, 5, 9]))
    assert p.tolist() == [0, 1, 0, 0, 0, 0]  # the unavailable pair with no votes is never chosen
    with pytest.raises(ValueError, match="needs the vote counts per pair"):
        pair_probabilities("least-shown-pair", available=available)


def test_unregistered_it_is_gone():
    STRATEGIES.register(LEAST_SHOWN_PAIR)
    STRATEGIES.unregister("least-shown-pair")
    assert "least-shown-pair" not in STRATEGIES and list(STRATEGIES) == ["uniform", "balanced", "active"]
    with pytest.raises(ValueError, match="choices: uniform, balanced, active \\(setting ARENA_SAMPLING\\)"):
        sessions.Sampler("least-shown-pair")


def test_declarations_are_checked_with_the_fix():
    with pytest.raises(ValueError, match="lowercase letters"):
        Strategy("Least Shown", "", least_shown_pair)
    with pytest.raises(ValueError, match="declare needs_counts=False"):
        Strategy("prompt-led", "", least_shown_pair, prompt_first=True)
    leaky = STRATEGIES.register(Strategy("leaky", "Mass on a pair that cannot be shown.",
                                        lambda *, available, **_: np.ones(available.shape) / available.shape[-1],
                                        needs_counts=False))
    try:
        with pytest.raises(ValueError, match="set P\\(k\\) = 0 where available\\[k\\] is False"):
            pair_probabilities("leaky", available=np.array([True, False, True]))
    finally:
        STRATEGIES.unregister(leaky.name)


def test_the_simulation_draws_what_the_declaration_says(toy):
    n = len(simulate.TRUE_ELO)
    k = n * (n - 1) // 2
    result = simulate.simulate_strategy("least-shown-pair", repetitions=3, max_votes=10 * k, step=100,
                                        redraw_every=1, bootstrap_rounds=10, coverage_at=None, seed=0)
    assert result.strategy == "least-shown-pair"
    assert result.pair_counts.shape == (3, k) and np.all(result.pair_counts == 10)  # ten full rounds, exactly
    assert result.outcome_shares.sum() == pytest.approx(1.0)


def test_the_simulation_command_takes_a_registered_strategy(toy, capsys):
    code = simulate.main(["--repetitions", "2", "--max-votes", "300", "--step", "100", "--bootstrap-rounds", "10",
                          "--coverage-at", "0", "--redraw-every", "1", "--strategies", "uniform,least-shown-pair"])
    assert code == 0
    assert any(line.startswith("least-shown-pair |") for line in capsys.readouterr().out.splitlines())


def _model_pair(db, *image_ids) -> tuple[int, int]:
    """The (sorted) model ids of a battle's two images."""
    return tuple(sorted(db.execute("SELECT model_id FROM images WHERE id = ?", [image]).fetchone()[0]
                        for image in image_ids))


def test_the_servers_draws_follow_the_declaration(small_arena, toy):
    db = small_arena.db
    model_ids = sorted(small_arena.model_ids.values())
    i, j = pair_index(len(model_ids))
    rounds = [(model_ids[a], model_ids[b]) for a, b in zip(i.tolist(), j.tolist())]
    stats, rng = SamplingStats(), random.Random(3)
    alice = sign_in(db, "alice", "token-alice", open_signup=True).id
    drawn = []
    for _ in range(2 * len(rounds)):  # draw, serve and vote, as the server does
        pairing = draw_pairing(db, rng, "least-shown-pair", suite="taxonomy", stats=stats)
        battle = serve_battle(db, rng, session_id="s", annotator_id=alice, pairing=pairing,
                              strategy="least-shown-pair")
        stats.note_vote(db, record_vote(db, battle.id, "A", session_id="s", rules=None))
        drawn.append(_model_pair(db, pairing.left_image_id, pairing.right_image_id))
    assert drawn == rounds + rounds  # all the mass on the least-shown pair: round and round, in pair order
    assert stats.pair_counts(stats.tables).tolist() == [2.0] * len(rounds)
    suites = {db.execute("SELECT suite FROM prompts WHERE id = ?", [battle[0]]).fetchone()[0]
              for battle in db.execute("SELECT prompt_id FROM battles")}
    assert suites == {"taxonomy"}


def test_a_session_draws_by_it_and_records_its_name(small_arena, toy):
    db = small_arena.db
    sampler = sessions.Sampler("least-shown-pair", SamplingStats(), PromptPool())
    assert sampler.reads_stats and sampler.declaration is toy
    s = sessions.start(db, "erin", "token-001", open_signup=True)
    s = sessions.next_battle(db, random.Random(0), s, sampler=sampler)
    for v in range(5):
        s = sessions.vote(db, s, "B", rng=random.Random(10 + v), sampler=sampler, rules=None)
        s = sessions.next_battle(db, random.Random(20 + v), s, sampler=sampler)
    assert {row[0] for row in db.execute("SELECT strategy FROM battles")} == {"least-shown-pair"}
    rows = db.execute("SELECT left_image_id, right_image_id FROM battles ORDER BY served_at").fetchall()
    pairs = [_model_pair(db, *row) for row in rows]
    assert len(set(pairs)) == len(pairs) == 6  # six battles, each of the six pairs once
