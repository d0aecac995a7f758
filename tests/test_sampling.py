"""Sampling strategies: the pure weight functions (seeded, deterministic) and the database edge."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

import ratings
import sampling
from datamodel.annotators import sign_in
from datamodel.battles import Pairing
from datamodel.vote_table import votes_frame
from datamodel.votes import record_vote
from sampling.draws import NoBattleAvailable, Replica, draw_pairing, draw_uniform, serve_battle
from sampling.sampler import SamplingStats
from sampling.strategies import (
    FitState,
    SamplingParams,
    balanced_pair_probabilities,
    bounded_shares,
    fit_state,
    pair_index,
    pair_probabilities,
    prompt_probabilities,
)

pytestmark = pytest.mark.both_engines

# ---------------------------------------------------------------------------------------------------------------
# Pure functions


def test_pair_index_and_counts():
    i, j = pair_index(4)
    assert list(zip(i.tolist(), j.tolist())) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    counts = np.zeros((4, 4, 4), dtype=int)
    counts[0, 1, 0] = 3  # 0 beat 1 shown as A
    counts[1, 0, 2] = 2  # a tie with 1 shown as A
    counts[3, 2, 3] = 1
    assert sampling.pair_votes(counts).tolist() == [5, 0, 0, 0, 0, 1]
    assert sampling.model_votes(sampling.pair_votes(counts), 4).tolist() == [5, 5, 1, 1]
    assert sampling.n_models_of(66) == 12
    with pytest.raises(ValueError, match="not a number of model pairs"):
        sampling.n_models_of(7)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1e3, allow_nan=False), min_size=2, max_size=15),
    st.floats(1.0, 10.0),
    st.data(),
)
def test_bounded_shares_sum_to_one_within_bounds_and_keep_order(weights, cap, data):
    weights = np.array(weights)
    available = np.array(data.draw(st.lists(st.booleans(), min_size=len(weights), max_size=len(weights))))
    if not available.any():
        available[0] = True
    u = 1.0 / available.sum()
    p = bounded_shares(weights, available, u / cap, u * cap)
    assert p.sum() == pytest.approx(1.0)
    assert np.all(p[~available] == 0)
    assert np.all(p[available] >= u / cap - 1e-9) and np.all(p[available] <= u * cap + 1e-9)
    w = weights[available]
    q = p[available]
    order = np.argsort(w, kind="stable")
    assert np.all(np.diff(q[order]) >= -1e-9)  # a heavier pair never gets less


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 15, 66, 435]), st.sampled_from([1.0, 2.0, 16.0, np.inf]))
def test_a_batch_is_solved_as_each_of_its_rows_alone(seed, pairs, cap):
    """The batch solver (the simulation's) and the one-row solver (the server's) give the same shares."""
    rng = np.random.default_rng(seed)
    weights = np.exp(rng.normal(0.0, rng.uniform(0.1, 12.0), (5, pairs)))
    weights[rng.random((5, pairs)) < 0.2] = 0.0  # zero weights get the floor, or what the cap leaves over
    available = rng.random((5, pairs)) > 0.1
    available[:, 0] = True
    u = 1.0 / available.sum(axis=1, keepdims=True)
    low, high = (u / cap if np.isfinite(cap) else np.zeros_like(u)), u * cap
    batch = bounded_shares(weights, available, low, high)
    for row in range(5):
        alone = bounded_shares(weights[row], available[row], low[row, 0], high[row, 0])
        assert batch[row] == pytest.approx(alone, abs=1e-12)


def test_bounded_shares_edge_cases_and_batches():
    assert bounded_shares(np.zeros(3), np.ones(3, bool), 0.0, np.inf).tolist() == pytest.approx([1 / 3] * 3)
    assert bounded_shares(np.ones(3), np.zeros(3, bool), 0.0, np.inf).tolist() == [0, 0, 0]
    plain = bounded_shares(np.array([1.0, 3.0]), np.ones(2, bool), 0.0, np.inf)
    assert plain.tolist() == pytest.approx([0.25, 0.75])
    capped = bounded_shares(np.array([1.0, 100.0, 1.0, 1.0]), np.ones(4, bool), 0.0, 0.4)
    assert capped.tolist() == pytest.approx([0.2, 0.4, 0.2, 0.2])
    rows = bounded_shares(np.array([[1.0, 2.0, 3.0], [5.0, 0.0, 0.0]]), np.ones(3, bool), 0.1, 0.5)
    assert rows.sum(axis=1) == pytest.approx([1, 1])
    assert rows[1].tolist() == pytest.approx([0.5, 0.25, 0.25])
    with pytest.raises(ValueError, match="cap of at least 1"):
        bounded_shares(np.ones(4), np.ones(4, bool), 0.0, 0.2)


def test_uniform_pairs_and_unknown_strategy():
    available = np.array([True, False, True, True, True, True])
    p = pair_probabilities("uniform", available=available)
    assert p.tolist() == pytest.approx([0.2, 0, 0.2, 0.2, 0.2, 0.2])
    with pytest.raises(ValueError, match="choices: uniform, balanced, active"):
        pair_probabilities("thompson", available=available)
    with pytest.raises(ValueError, match="needs the vote counts per pair"):
        pair_probabilities("balanced", available=available)


def test_balanced_favours_pairs_and_models_with_fewer_votes_within_the_cap():
    n = 4
    pair_counts = np.array([40, 10, 10, 10, 10, 0])  # pair (0,1) flooded, (2,3) starved
    available = np.ones(6, bool)
    p = balanced_pair_probabilities(pair_counts, available, cap=4.0)
    assert p.sum() == pytest.approx(1.0)
    assert p.argmax() == 5 and p.argmin() == 0
    assert p.min() >= (1 / 6) / 4 - 1e-9 and p.max() <= 4 / 6 + 1e-9
    assert balanced_pair_probabilities(np.full(6, 7), available).tolist() == pytest.approx([1 / 6] * 6)
    # a model with fewer votes lifts all of its pairs, even at equal pair counts
    counts = np.array([5, 5, 5, 5, 5, 5])
    counts_model_3_starved = np.array([8, 8, 2, 8, 2, 2])
    q = balanced_pair_probabilities(counts_model_3_starved, available)
    i, j = pair_index(n)
    assert q[(i == 3) | (j == 3)].min() > q[(i != 3) & (j != 3)].max()
    assert balanced_pair_probabilities(counts, available).tolist() == pytest.approx([1 / 6] * 6)


def _state(ratings_elo, sd):
    ratings_elo = np.asarray(ratings_elo, dtype=float)
    cov = np.diag(np.full(len(ratings_elo), float(sd) ** 2))
    return FitState(ratings_elo, cov, ratings_elo / 173.7, np.ones(len(ratings_elo)), 100)


def test_active_prefers_close_pairs_with_uncertain_ranks_and_keeps_the_floor():
    state = _state([1100, 1000, 995, 990, 800], sd=10)
    available = np.ones(10, bool)
    counts = np.full(10, 60)  # 240 battles a model: past the 200 of the warm-up
    params = SamplingParams()
    p = pair_probabilities("active", available=available, pair_counts=counts, state=state, params=params)
    i, j = pair_index(5)
    by_pair = {(a, b): x for a, b, x in zip(i.tolist(), j.tolist(), p)}
    assert p.sum() == pytest.approx(1.0)
    assert max(by_pair, key=by_pair.get) in {(1, 2), (1, 3), (2, 3)}  # the dense group of overlapping intervals
    assert by_pair[(1, 2)] > 3 * by_pair[(0, 1)]
    w = sampling.active_pair_weights(state.ratings, state.cov)
    weight = {(a, b): x for a, b, x in zip(i.tolist(), j.tolist(), w)}
    assert weight[(1, 2)] > weight[(1, 3)] > weight[(0, 1)] > weight[(0, 4)]
    u = 1 / 10
    assert p.min() >= params.active_floor * u / params.balance_cap - 1e-12  # nobody starves
    assert p.max() <= (1 - params.active_floor) * params.active_cap * u + params.active_floor * params.balance_cap * u
    # wider intervals spread the votes: everything looks uncertain, the draw is close to uniform
    vague = pair_probabilities("active", available=available, pair_counts=counts, state=_state(state.ratings, 500))
    assert vague.max() / vague.min() < 3.0
    # without a state yet, active is balanced; so it is while a model has fewer than 200 battles
    assert pair_probabilities("active", available=available, pair_counts=counts).tolist() == pytest.approx(
        balanced_pair_probabilities(counts, available).tolist())
    young = np.array([60, 60, 60, 46, 60, 60, 46, 60, 46, 60])  # model 4 (pairs 3, 6, 8, 9): 198 battles
    early = pair_probabilities("active", available=available, pair_counts=young, state=state, params=params)
    assert early.tolist() == pytest.approx(balanced_pair_probabilities(young, available).tolist())
    alone = pair_probabilities("active", available=available, pair_counts=young, state=state,
                               params=SamplingParams(warmup_battles=0))  # no warm-up: the fit counts at once
    assert alone.tolist() != pytest.approx(early.tolist())
    # the burn-in is its own knob: 198 battles are past a burn-in of 150, whatever the warm-up's threshold
    burnt = pair_probabilities("active", available=available, pair_counts=young, state=state,
                               params=SamplingParams(active_burnin=150))
    assert burnt.tolist() == pytest.approx(alone.tolist())
    held = pair_probabilities("active", available=available, pair_counts=young, state=state,
                              params=SamplingParams(warmup_battles=0, active_burnin=200))
    assert held.tolist() == pytest.approx(early.tolist())
    with pytest.raises(ValueError, match="active_burnin"):
        SamplingParams(active_burnin=-1)


def test_active_stops_spending_on_a_near_tie_once_it_is_resolved_to_within_the_resolution():
    """P_k = Φ(−(|ΔR| + s)/σ_k): a pair the fit has tied, with σ_k well under s, is settled (a coin flip no vote
    budget resolves, and either order is within s); a pair 15 Elo apart with wide intervals is not."""
    ratings_elo = np.array([1000.0, 1000.0, 900.0, 885.0])
    cov = np.diag([2.0**2, 2.0**2, 10.0**2, 10.0**2])
    params = SamplingParams()
    p = sampling.misorder_probabilities(ratings_elo, cov, resolution=params.active_resolution)
    i, j = pair_index(4)
    by_pair = {(a, b): x for a, b, x in zip(i.tolist(), j.tolist(), p)}
    assert by_pair[(0, 1)] == pytest.approx(ndtr(-params.active_resolution / np.sqrt(8.0)))
    assert by_pair[(0, 1)] < 0.01 < by_pair[(2, 3)]
    w = sampling.active_pair_weights(ratings_elo, cov)
    assert w[(i == 2) & (j == 3)][0] > 10 * w[(i == 0) & (j == 1)][0]
    # with wide intervals the same tie is as uncertain as it gets
    wide = sampling.misorder_probabilities(ratings_elo, np.diag([200.0**2] * 4), resolution=params.active_resolution)
    assert wide[0] > 0.45


def test_active_hands_its_focused_share_back_to_balanced_as_the_ranking_settles():
    """f = (1 − ε)·min(1, M/m), M = Σ_k P_k: with every pair ordered beyond the resolution the draw is balanced's
    (a fixed design, whose votes the bootstrap reads correctly); with an unsettled group it focuses as before."""
    available, counts = np.ones(10, bool), np.full(10, 60)
    params = SamplingParams()
    assert params.active_settle > 0
    balanced = balanced_pair_probabilities(counts, available)
    settled = _state([1100, 1000, 900, 800, 700], sd=2)
    p = pair_probabilities("active", available=available, pair_counts=counts, state=settled, params=params)
    assert p.tolist() == pytest.approx(balanced.tolist(), abs=1e-6)
    unsettled = _state([1000, 998, 996, 994, 992], sd=10)  # M well above m
    misordered = sampling.misorder_probabilities(unsettled.ratings, unsettled.cov, resolution=10.0).sum()
    assert misordered > params.active_settle
    focused = pair_probabilities("active", available=available, pair_counts=counts, state=unsettled, params=params)
    never = pair_probabilities("active", available=available, pair_counts=counts, state=unsettled,
                               params=SamplingParams(active_settle=0))  # 0: the focused share is always 1 − ε
    assert focused.tolist() == pytest.approx(never.tolist())
    # in between, the focused share falls in proportion to M
    half = _state([1000, 990, 900, 800, 700], sd=4)
    m = sampling.misorder_probabilities(half.ratings, half.cov, resolution=10.0).sum()
    assert 0 < m < params.active_settle
    mixed = pair_probabilities("active", available=available, pair_counts=counts, state=half, params=params)
    full = pair_probabilities("active", available=available, pair_counts=counts, state=half,
                              params=SamplingParams(active_settle=0))
    share = (1 - params.active_floor) * m / params.active_settle
    expected = balanced + share / (1 - params.active_floor) * (full - balanced)
    assert mixed.tolist() == pytest.approx(expected.tolist())
    with pytest.raises(ValueError, match="active_settle"):
        SamplingParams(active_settle=-1)


def test_active_explores_a_model_without_a_rating():
    state = _state([1050, 1000, 950, np.nan], sd=5)
    p = sampling.misorder_probabilities(state.ratings, state.cov, resolution=10.0)
    i, j = pair_index(4)
    assert p[(i == 3) | (j == 3)].tolist() == [0.5, 0.5, 0.5]
    w = sampling.active_pair_weights(state.ratings, state.cov)
    assert w[(i == 3) | (j == 3)].min() > w[(i != 3) & (j != 3)].max()


def test_batched_weights_match_row_by_row():
    rng = np.random.default_rng(3)
    ratings_batch = 1000 + 40 * rng.normal(size=(3, 5))
    cov = np.stack([np.diag(rng.uniform(5, 30, 5) ** 2) for _ in range(3)])
    counts = rng.integers(0, 30, size=(3, 10))
    state = FitState(ratings_batch, cov, ratings_batch / 173.7, np.ones((3, 5)), 0)
    available = np.ones(10, bool)
    together = pair_probabilities("active", available=available, pair_counts=counts, state=state)
    for r in range(3):
        alone = pair_probabilities("active", available=available, pair_counts=counts[r],
                                   state=FitState(ratings_batch[r], cov[r], state.theta[r], state.fit_votes[r], 0))
        assert together[r] == pytest.approx(alone)


def test_fit_state_agrees_with_the_ratings_package():
    rng = np.random.default_rng(0)
    true = np.array([0.6, 0.2, 0.0, -0.3, -0.5])
    n = len(true)
    a = rng.integers(0, n, 4000)
    b = (a + rng.integers(1, n, 4000)) % n
    p_a = 1 / (1 + np.exp(-(true[a] - true[b])))
    outcome = np.where(rng.random(4000) < 0.15, 2, np.where(rng.random(4000) < p_a, 0, 1))
    counts = ratings.count_tensor(a, b, outcome, n)
    state = fit_state(counts, params=SamplingParams(ridge=1e-6))
    fit = ratings.fit_bradley_terry(counts, rounds=400, seed=1)
    lower, upper = fit.interval()
    assert state.ratings == pytest.approx(fit.ratings, abs=0.01)
    assert state.widths == pytest.approx(upper - lower, rel=0.15)  # Wald ≈ bootstrap
    assert state.votes == 4000 and state.fit_votes.sum() == 2 * (outcome != 2).sum()
    batched = fit_state(np.stack([counts, counts]), params=SamplingParams(ridge=1e-6))
    assert batched.ratings.shape == (2, n) and batched.cov.shape == (2, n, n)
    assert batched.ratings[1] == pytest.approx(state.ratings)
    empty = fit_state(np.zeros((3, 3, 4), dtype=int))
    assert np.isnan(empty.ratings).all() and np.isnan(empty.widths).all()


def test_prompt_probabilities_pick_the_least_shown_prompts():
    p = prompt_probabilities([2, 1, 1, 3], [9, 5, 4, 0])
    assert p.tolist() == [0, 0, 1, 0]
    assert prompt_probabilities([0, 0, 0], [1, 1, 1]).tolist() == pytest.approx([1 / 3] * 3)
    assert prompt_probabilities([], []).size == 0


def test_params_are_checked_with_the_fix_in_the_message():
    with pytest.raises(ValueError, match="at least 1"):
        SamplingParams(balance_cap=0.5)
    with pytest.raises(ValueError, match="share between 0 and 1"):
        SamplingParams(active_floor=1.5)
    with pytest.raises(ValueError, match="tie_policy"):
        SamplingParams(tie_policy="sometimes")


# ---------------------------------------------------------------------------------------------------------------
# The database edge


def _annotator(db, name):
    return sign_in(db, name, f"token-for-{name}", open_signup=True).id


def _cast(db, pairing, annotator_id, outcome="A", session="s", stats=None):
    """Serve ``pairing`` and vote on it; with ``stats``, count the vote there as arena.session.vote does."""
    battle = serve_battle(db, random.Random(0), session_id=session, annotator_id=annotator_id, pairing=pairing)
    receipt = record_vote(db, battle.id, outcome, session_id=session, rules=None)
    if stats is not None:
        stats.note_vote(db, receipt)
    return battle


def _models_of(db, pairing):
    rows = dict(db.execute("SELECT id, model_id FROM images WHERE id IN (?, ?)",
                           [pairing.left_image_id, pairing.right_image_id]).fetchall())
    return rows[pairing.left_image_id], rows[pairing.right_image_id]


def test_uniform_is_exactly_draw_uniform(small_arena):
    db = small_arena.db
    for suite in (None, "taxonomy"):
        a, b = random.Random(11), random.Random(11)
        assert [draw_pairing(db, a, "uniform", suite=suite) for _ in range(20)] == \
            [draw_uniform(db, b, suite=suite) for _ in range(20)]


@pytest.mark.parametrize("strategy", ["balanced", "active"])
def test_adaptive_draws_are_seeded_valid_and_respect_the_suite(small_arena, strategy):
    db = small_arena.db
    first = [draw_pairing(db, random.Random(5), strategy, suite="commonsense") for _ in range(3)]
    again = [draw_pairing(db, random.Random(5), strategy, suite="commonsense") for _ in range(3)]
    assert first == again and all(type(p) is Pairing for p in first)
    suites = dict(db.execute("SELECT id, suite FROM prompts").fetchall())
    rng = random.Random(2)
    stats = SamplingStats()
    for _ in range(40):
        pairing = draw_pairing(db, rng, strategy, suite="commonsense", stats=stats)
        assert suites[pairing.prompt_id] == "commonsense"
        left, right = _models_of(db, pairing)
        assert left != right
        prompts = {r[0] for r in db.execute("SELECT prompt_id FROM images WHERE id IN (?, ?)",
                                            [pairing.left_image_id, pairing.right_image_id])}
        assert prompts == {pairing.prompt_id}


def test_models_are_chosen_among_those_with_an_image_for_the_prompt(small_arena):
    db = small_arena.db
    ids = small_arena.model_ids
    prompts = small_arena.prompt_ids
    with db.conn:  # delta has images for the first prompt only; charlie for none of the first two
        db.execute("DELETE FROM images WHERE model_id = ? AND prompt_id != ?", [ids["delta-model"], prompts[0]])
        db.execute("DELETE FROM images WHERE model_id = ? AND prompt_id IN (?, ?)",
                   [ids["charlie-model"], prompts[0], prompts[1]])
    have = {(p, m) for p, m in db.execute("SELECT prompt_id, model_id FROM images")}
    rng = random.Random(0)
    stats = SamplingStats()
    seen = Counter()
    for strategy in ("balanced", "active"):
        for _ in range(60):
            pairing = draw_pairing(db, rng, strategy, stats=stats)
            left, right = _models_of(db, pairing)
            assert (pairing.prompt_id, left) in have and (pairing.prompt_id, right) in have
            seen[frozenset((left, right))] += 1
    assert frozenset((ids["delta-model"], ids["alpha-model"])) in seen  # delta still gets its battles


def test_no_battle_available_says_what_to_add(small_arena):
    with pytest.raises(NoBattleAvailable, match="Generate or import images"):
        draw_pairing(small_arena.db, random.Random(0), "active", suite="no-such-suite")


def test_balanced_evens_out_pairs_and_prompts_per_pair(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    rng = random.Random(4)
    stats = SamplingStats()
    for _ in range(120):
        _cast(db, draw_pairing(db, rng, "balanced", suite="taxonomy", stats=stats), alice, stats=stats)
    assert stats.tables.votes == 120 and stats.in_flight == 0  # each vote counted, its battle no longer in flight
    table = sampling.votes_per_pair(db, suite="taxonomy")
    assert len(table) == 6 and table["votes"].sum() == 120
    assert table["votes"].max() - table["votes"].min() <= 2  # uniform would spread about ±9 here
    per_prompt_pair = Counter()
    for row in votes_frame(db).itertuples():
        per_prompt_pair[(row.prompt_id, tuple(sorted((row.model_a, row.model_b))))] += 1
    for pair in {key[1] for key in per_prompt_pair}:
        shown = [per_prompt_pair[(prompt, pair)] for prompt in small_arena.prompt_ids[:3]]
        assert max(shown) - min(shown) <= 1  # each taxonomy prompt about equally often per pair


def test_balanced_moves_votes_to_a_starved_pair(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    ids = small_arena.model_ids
    image = dict(db.execute("SELECT model_id, id FROM images WHERE prompt_id = ?", [small_arena.prompt_ids[0]]))
    flooded = Pairing(small_arena.prompt_ids[0], image[ids["alpha-model"]], image[ids["bravo-model"]])
    for _ in range(30):
        _cast(db, flooded, alice)
    rng = random.Random(9)
    stats = SamplingStats()  # counts read once, then only the draws are noted (in flight)
    pairs = Counter(frozenset(_models_of(db, draw_pairing(db, rng, "balanced", stats=stats))) for _ in range(120))
    share = pairs[frozenset((ids["alpha-model"], ids["bravo-model"]))] / 120
    assert share < 0.08  # uniform would give it 1/6; balanced keeps it near its floor, 1/6 / 4, until the rest catch up


def test_replication_reserves_someone_elses_single_vote(small_arena):
    db = small_arena.db
    alice, bob = _annotator(db, "alice"), _annotator(db, "bob")
    rng = random.Random(1)
    assert type(draw_pairing(db, rng, "uniform", replication_share=1.0, annotator_id=bob)) is Pairing  # nothing yet
    once = _cast(db, draw_uniform(db, rng), alice, session="a")
    for _ in range(5):
        replica = draw_pairing(db, rng, "active", replication_share=1.0, annotator_id=bob)
        assert isinstance(replica, Replica)
        assert (replica.prompt_id, replica.left_image_id, replica.right_image_id) == \
            (once.prompt_id, once.left.image_id, once.right.image_id)
    assert type(draw_pairing(db, rng, "active", replication_share=1.0, annotator_id=alice)) is Pairing  # own vote
    _cast(db, replica, bob, outcome="A", session="b")  # now two votes: not re-served again
    assert type(draw_pairing(db, rng, "balanced", replication_share=1.0, annotator_id=None)) is Pairing
    votes = votes_frame(db)
    assert votes["pair_key"].nunique() == 1 and len(votes) == 2
    agreement = ratings.inter_annotator_agreement(votes)
    assert agreement is not None
    with pytest.raises(ValueError, match="share between 0 and 1"):
        draw_pairing(db, rng, "uniform", replication_share=2.0)


def test_replication_share_is_about_right(small_arena):
    db = small_arena.db
    alice, bob = _annotator(db, "alice"), _annotator(db, "bob")
    rng = random.Random(3)
    for _ in range(30):
        _cast(db, draw_uniform(db, rng), alice)
    replicas = sum(isinstance(draw_pairing(db, rng, "uniform", replication_share=0.3, annotator_id=bob), Replica)
                   for _ in range(400))
    assert 0.22 < replicas / 400 < 0.38


def test_stats_count_noted_votes_and_refit_on_schedule(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    now = [0.0]
    stats = SamplingStats(refit_votes=10, refit_seconds=60.0, clock=lambda: now[0])
    stats.refresh(db)
    assert stats.tables.votes == 0 and stats.state is not None and stats.state.votes == 0
    first_state = stats.state
    rng = random.Random(0)
    for _ in range(4):
        _cast(db, draw_uniform(db, rng), alice, stats=stats)
    stats.refresh(db)
    assert stats.tables.votes == 4 and stats.state is first_state  # counted at once, but 4 < 10 changes: no refit
    tables = stats.tables
    _cast(db, draw_uniform(db, rng), alice)  # recorded past the stats (another process, another app replica)...
    now[0] = 0.5
    stats.refresh(db)
    assert stats.tables.votes == 4  # ...not counted before sync_seconds (1 s) have passed since the last catch-up...
    now[0] = 6.0
    stats.refresh(db)
    assert stats.tables.votes == 5 and stats.tables is tables  # ...then read from vote_changes, with no full re-read
    now[0] = 70.0
    stats.refresh(db)
    assert stats.state is not first_state and stats.state.votes == 5  # a minute passed with new votes
    stats.refresh(db, force=True)
    assert stats.tables.votes == 5  # a full read counts the same
    # a thread that finds a refit running does not wait
    stats._refit_lock.acquire()
    try:
        assert stats.maybe_refit(force=True) is False
    finally:
        stats._refit_lock.release()
    assert stats.maybe_refit(force=True) is True


def test_battles_in_flight_spread_draws_without_votes(small_arena):
    db = small_arena.db
    distinct = []
    for seed in range(20):
        stats = SamplingStats()
        rng = random.Random(seed)
        draws = [draw_pairing(db, rng, "balanced", suite="taxonomy", stats=stats) for _ in range(6)]
        distinct.append(len({frozenset(_models_of(db, p)) for p in draws}))
        assert stats.in_flight == 6 and stats.tables.votes == 0
    assert np.mean(distinct) >= 5.0  # six draws without votes in between; six uniform draws cover 4.0 pairs on average


def test_admin_tables_show_the_gaps(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    ids = small_arena.model_ids
    image = dict(db.execute("SELECT model_id, id FROM images WHERE prompt_id = ?", [small_arena.prompt_ids[0]]))
    pairing = Pairing(small_arena.prompt_ids[0], image[ids["alpha-model"]], image[ids["bravo-model"]])
    _cast(db, pairing, alice, "A")
    _cast(db, pairing, alice, "tie")
    models = sampling.votes_per_model(db)
    assert models["model"].tolist()[-2:] == ["alpha-model", "bravo-model"]
    assert models.set_index("model").loc["alpha-model", ["votes", "wins", "ties"]].tolist() == [2, 1, 1]
    assert models.set_index("model").loc["charlie-model", "votes"] == 0
    pairs = sampling.votes_per_pair(db)
    assert len(pairs) == 6 and pairs["votes"].tolist() == [0, 0, 0, 0, 0, 2]
    assert pairs.iloc[-1][["model_1", "model_2", "prompts", "decisive"]].tolist() == \
        ["alpha-model", "bravo-model", 5, 1]
    prompts = sampling.votes_per_prompt(db)
    assert len(prompts) == 5 and prompts["votes"].sum() == 2
    top = prompts.set_index("prompt_id").loc[small_arena.prompt_ids[0]]
    assert (top["votes"], top["pairs_voted"], top["max_per_pair"], top["replicated"], top["models"]) == (2, 1, 2, 1, 4)
    assert sampling.votes_per_prompt(db, suite="commonsense")["votes"].sum() == 0
    note = sampling.strategy_note(votes_frame(db))
    assert note == "Votes by sampling strategy: uniform 2 (100%)."
    assert sampling.strategy_note(votes_frame(db).iloc[:0]) == "No votes yet."
