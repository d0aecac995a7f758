"""Rating protocols (ratings.protocols): each against an independent computation with the library its authors used,
the known answers of evalica's fixtures and of the Bradley–Terry worked example, and the registry's declarations."""

from __future__ import annotations

import math
import sys
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from support.shared import SHARED

from core.protocols import PROTOCOLS, get_protocol
from ratings.leaderboard import leaderboard_from_counts
from ratings.protocols import CHOICES, RESULT_COLUMNS
from ratings.protocols.base import legacy_bootstrap_rows
from ratings.votes import encode_votes, vote_counts

sklearn = pytest.importorskip("sklearn", reason="scikit-learn (the dev extra) is the reference for fastchat-2023 "
                                                "and taxonomy-paper: pip install 'scikit-learn==1.9.1'")
from sklearn.linear_model import LogisticRegression  # noqa: E402

RATINGS_DATA = SHARED / "data" / "ratings"
WINNER = {"A": "model_a", "B": "model_b", "tie": "tie", "both_bad": "tie (bothbad)"}


def battle_log(n_votes: int, seed: int, names: list[str], *, tie_share: float = 0.3) -> pd.DataFrame:
    """Votes in time order with every outcome, models of spread strengths."""
    rng = np.random.default_rng(seed)
    n = len(names)
    true = np.linspace(800, 1200, n)
    a = rng.integers(0, n, n_votes)
    b = (a + rng.integers(1, n, n_votes)) % n
    p_a = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
    draw = rng.random(n_votes)
    outcome = np.where(draw < tie_share / 2, "tie", np.where(draw < tie_share, "both_bad",
                                                            np.where(rng.random(n_votes) < p_a, "A", "B")))
    return pd.DataFrame({"model_a": np.array(names)[a], "model_b": np.array(names)[b], "outcome": outcome})


def read_fixture(name: str) -> pd.DataFrame:
    path = RATINGS_DATA / f"{name}.csv"
    if not path.exists():
        pytest.fail(f"{path} is missing: the evalica fixtures belong in ../shared/data/ratings (see its README).")
    frame = pd.read_csv(path, dtype=str)
    return pd.DataFrame({"model_a": frame["left"], "model_b": frame["right"],
                         "outcome": frame["winner"].map({"left": "A", "right": "B", "tie": "tie"})})


def ratings_of(table: pd.DataFrame, column: str = "rating") -> pd.Series:
    return table.set_index("model")[column]


# --- independent computations, written from the published descriptions (protocols.md) with the authors' libraries ---

def sklearn_duplicated_fit(battles: pd.DataFrame, **lr_options) -> pd.Series:
    """The duplicated battle table fitted by scikit-learn's LogisticRegression, as FastChat 2023 and the taxonomy code
    describe it: x = ±ln 10, an A win y = 1 in both copies, a tie or both-bad y = 1 in the first copy only."""
    names = pd.concat([battles["model_a"], battles["model_b"]]).unique()
    column = pd.Series(np.arange(len(names)), index=names)
    doubled = pd.concat([battles, battles], ignore_index=True)
    rows = len(doubled)
    x = np.zeros((rows, len(names)))
    x[np.arange(rows), column[doubled["model_a"]].to_numpy()] = math.log(10)
    x[np.arange(rows), column[doubled["model_b"]].to_numpy()] = -math.log(10)
    y = (doubled["outcome"] == "A").to_numpy(dtype=float)
    first_copy_tie = doubled["outcome"].isin(["tie", "both_bad"]).to_numpy() & (np.arange(rows) < rows // 2)
    y[first_copy_tie] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: the early stop is the point
        model = LogisticRegression(fit_intercept=False, **lr_options).fit(x, y)
    return pd.Series(400 * model.coef_[0] + 1000, index=names)


def pandas_bootstrap(battles: pd.DataFrame, fit, rounds: int = 100, seed: int = 42) -> pd.DataFrame:
    """Rounds of ``battles.sample(frac=1.0, replace=True)`` after ``np.random.seed(seed)``, one fit per round."""
    np.random.seed(seed)
    try:
        return pd.DataFrame([fit(battles.sample(frac=1.0, replace=True)) for _ in range(rounds)])
    finally:
        np.random.seed(None)


def fastchat_2024_reference(battles: pd.DataFrame, rounds: int = 100, anchor=("mixtral-8x7b-instruct-v0.1", 1114)):
    """FastChat's September 2024 Bradley–Terry as described: unique rows with counts via np.unique, SciPy L-BFGS-B on
    the summed log-loss (gtol 1e-6, 100 iterations), counts / N in a multinomial bootstrap from default_rng(0)."""
    codes, names = pd.factorize(pd.concat([battles["model_a"], battles["model_b"]]))
    n_rows = len(battles)
    schedule = np.ones((n_rows, 3), dtype=np.int32)
    schedule[:, 0], schedule[:, 1] = codes[:n_rows], codes[n_rows:]
    schedule[(battles["outcome"] == "A").to_numpy(), 2] = 2
    schedule[(battles["outcome"] == "B").to_numpy(), 2] = 0
    unique, counts = np.unique(schedule, return_counts=True, axis=0)
    a, b, y = unique[:, 0], unique[:, 1], unique[:, 2] / 2.0

    def fit(weights):
        def objective(w):
            p = expit(math.log(10) * (w[a] - w[b]))
            loss = -np.sum((np.log(p) * y + np.log(1 - p) * (1 - y)) * weights)
            g = -math.log(10) * (y - p) * weights
            grad = np.zeros_like(w)
            np.add.at(grad, a, g)
            np.add.at(grad, b, -g)
            return loss, grad
        return minimize(objective, np.zeros(len(names)), jac=True, method="L-BFGS-B",
                        options={"maxiter": 100, "gtol": 1e-6}).x

    def scaled(w):
        r = 400 * np.asarray(w) + 1000
        if anchor and anchor[0] in list(names):
            r = r + (anchor[1] - r[..., [list(names).index(anchor[0])]])
        return r

    full = pd.Series(scaled(fit(counts.astype(float))), index=names)
    draws = np.random.default_rng(seed=0).multinomial(n_rows, counts / counts.sum(), size=rounds)
    boot = pd.DataFrame(scaled(np.array([fit(d / n_rows) for d in draws.astype(float)])), columns=names)
    return full, boot.quantile(0.025), boot.quantile(0.975)


def fastchat_online_elo(battles: pd.DataFrame, k=4, scale=400, base=10, init=1000) -> dict:
    """FastChat's compute_elo as described: one update per battle in order, ties and both-bad S = ½."""
    rating: defaultdict[str, float] = defaultdict(lambda: init)
    for model_a, model_b, outcome in battles[["model_a", "model_b", "outcome"]].itertuples(index=False):
        ra, rb = rating[model_a], rating[model_b]
        ea = 1 / (1 + base ** ((rb - ra) / scale))
        eb = 1 / (1 + base ** ((ra - rb) / scale))
        sa = {"A": 1.0, "B": 0.0}.get(outcome, 0.5)
        rating[model_a] += k * (sa - ea)
        rating[model_b] += k * (1 - sa - eb)
    return dict(rating)


# --- each protocol against its reference, to 0.01 Elo, intervals included -------------------------------------------

def test_legacy_bootstrap_rows_are_pandas_sample_after_np_random_seed():
    frame = pd.DataFrame({"row": np.arange(997)})
    np.random.seed(42)
    pandas_rows = [frame.sample(frac=1.0, replace=True)["row"].to_numpy() for _ in range(5)]
    np.random.seed(None)
    ours = list(legacy_bootstrap_rows(len(frame), 5, 42))
    assert all(np.array_equal(p, o) for p, o in zip(pandas_rows, ours))


def test_fastchat_2023_matches_sklearn_default_logistic_regression_with_its_early_stop():
    votes = read_fixture("llmfao")  # 8,931 judgments, 59 models, ties
    reference = sklearn_duplicated_fit(votes)
    ours = ratings_of(get_protocol("fastchat-2023", rounds=0).rate_frame(votes)).reindex(reference.index)
    assert np.abs(ours - reference).max() < 0.01
    # the early stop is reproduced, not a converged fit: the converged L2 fit differs by more than the tolerance
    converged = sklearn_duplicated_fit(votes, tol=1e-12, max_iter=10_000)
    assert np.abs(converged - reference).max() > 0.1


def test_fastchat_2023_bootstrap_intervals_match_pandas_resampling():
    votes = battle_log(400, seed=3, names=["alpha", "beta", "gamma", "delta", "eps"])
    table = get_protocol("fastchat-2023").rate_frame(votes).set_index("model")
    boot = pandas_bootstrap(votes, sklearn_duplicated_fit)
    assert np.abs(table["lower"] - boot.quantile(0.025).reindex(table.index)).max() < 0.01
    assert np.abs(table["upper"] - boot.quantile(0.975).reindex(table.index)).max() < 0.01
    assert np.abs(table["rating"] - sklearn_duplicated_fit(votes).reindex(table.index)).max() < 0.01


def test_fastchat_2023_pins_llama_13b_at_800_when_present_and_a_user_anchor_must_exist():
    votes = battle_log(300, seed=4, names=["llama-13b", "vicuna-13b", "alpaca-13b"])
    table = get_protocol("fastchat-2023", rounds=5).rate_frame(votes).set_index("model")
    assert table.loc["llama-13b", ["rating", "lower", "upper"]].tolist() == pytest.approx([800, 800, 800])
    reference = sklearn_duplicated_fit(votes)
    shifted = reference + (800 - reference["llama-13b"])
    assert np.abs(table["rating"] - shifted.reindex(table.index)).max() < 0.01
    with pytest.raises(ValueError, match="Cannot anchor on 'gpt-4'.*Pick one of"):
        get_protocol("fastchat-2023", anchor=("gpt-4", 1200.0), anchor_required=True).rate_frame(votes)


def test_taxonomy_paper_matches_the_authors_procedure_and_truncates():
    """The released arena_elo.py as protocols.md (T1) describes it: sklearn without penalty at tol 1e-8 on the
    duplicated battles (ties AND both-bad one win each way), 100 pandas resamples from np.random.seed(42),
    np.percentile 2.5/97.5, then score, lower, upper cast with astype(int)."""
    votes = battle_log(360, seed=7, names=["SD3", "SDXL", "PixArt", "Playground", "FLUX", "HDiT"], tie_share=0.4)
    fit = lambda battles: sklearn_duplicated_fit(battles, C=np.inf, tol=1e-8)  # noqa: E731  (C=inf: penalty=None)
    score = fit(votes)
    boot = pandas_bootstrap(votes, fit)
    lower = pd.Series({m: np.percentile(boot[m], 2.5) for m in score.index})
    upper = pd.Series({m: np.percentile(boot[m], 97.5) for m in score.index})
    protocol = get_protocol("taxonomy-paper")
    encoded = encode_votes(votes)
    exact = protocol.fit(encoded)
    index = list(encoded.models)
    for values, reference in ((exact.rating, score), (exact.lower, lower), (exact.upper, upper)):
        assert np.abs(pd.Series(values, index=index) - reference.reindex(index)).max() < 0.01
    table = protocol.rate_frame(votes).set_index("model")
    truncated = pd.DataFrame({"score": score, "lower": lower, "upper": upper}).astype(int)  # the authors' cast
    assert not (np.abs(np.concatenate([exact.rating, exact.lower, exact.upper]) % 1 - 0.5) > 0.4999).any()
    for model, row in truncated.iterrows():
        assert table.loc[model, ["rating", "lower", "upper"]].tolist() == [row.score, row.lower, row.upper]
        assert table.loc[model, "printed"] == f"{row.score} (+{row.upper - row.score}/-{row.score - row.lower})"


def test_taxonomy_paper_truncates_towards_zero_not_to_nearest():
    protocol = get_protocol("taxonomy-paper")
    assert protocol.round(np.array([999.99, 1000.5, 1012.7, np.nan])).tolist()[:3] == [999.0, 1000.0, 1012.0]
    assert protocol.printed(1125.0, 1066.0, 1186.0) == "1125 (+61/-59)"  # Table 3, Playground, first column


def test_fastchat_2024_matches_scipy_bt_with_multinomial_bootstrap_and_anchor():
    names = ["mixtral-8x7b-instruct-v0.1", "gpt-4", "claude-2", "llama-2-70b", "vicuna-33b"]
    votes = battle_log(500, seed=11, names=names)
    rating, lower, upper = fastchat_2024_reference(votes)
    table = get_protocol("fastchat-2024").rate_frame(votes).set_index("model")
    for column, reference in (("rating", rating), ("lower", lower), ("upper", upper)):
        assert np.abs(table[column] - reference.reindex(table.index)).max() < 0.01, column
    assert table.loc["mixtral-8x7b-instruct-v0.1", "rating"] == pytest.approx(1114)
    unanchored = get_protocol("fastchat-2024", anchor=None, rounds=0).rate_frame(votes)
    assert ratings_of(unanchored).mean() == pytest.approx(1000)


def test_online_elo_matches_fastchat_compute_elo_and_its_bootstrap():
    votes = battle_log(300, seed=5, names=["a", "b", "c", "d"])
    table = get_protocol("online-elo").rate_frame(votes).set_index("model")
    reference = pd.Series(fastchat_online_elo(votes))
    assert np.abs(table["rating"] - reference.reindex(table.index)).max() < 0.01
    boot = pandas_bootstrap(votes, fastchat_online_elo)
    assert np.abs(table["lower"] - boot.quantile(0.025).reindex(table.index)).max() < 0.01
    assert np.abs(table["upper"] - boot.quantile(0.975).reindex(table.index)).max() < 0.01
    # it depends on the order of the votes, unlike the Bradley–Terry protocols
    backwards = get_protocol("online-elo", rounds=0).rate_frame(votes.iloc[::-1])
    assert np.abs(ratings_of(backwards).reindex(table.index) - table["rating"]).max() > 0.5


def with_self_battles(votes: pd.DataFrame, rows: dict[int, tuple[str, str]]) -> pd.DataFrame:
    """``votes`` with row k replaced by a battle of a model against itself (model, outcome)."""
    votes = votes.copy()
    for k, (model, outcome) in rows.items():
        votes.loc[k, ["model_a", "model_b", "outcome"]] = [model, model, outcome]
    return votes


SELF_BATTLES = {3: ("beta", "A"), 40: ("gamma", "B"), 41: ("beta", "tie"), 77: ("delta", "both_bad")}


@pytest.mark.parametrize("name,options", [("fastchat-2023", {}), ("taxonomy-paper", {"C": np.inf, "tol": 1e-8})])
def test_duplicated_table_protocols_rate_a_self_battle_as_the_design_matrix_leaves_it(name, options):
    """compute_elo_mle_with_tie (and subset_elo.py) write X[i, a] = +ln 10, then X[i, b] = −ln 10: a self-battle's
    row keeps only −ln 10. The reference builds that matrix and fits it with scikit-learn, bootstrap included."""
    votes = with_self_battles(battle_log(400, seed=3, names=["alpha", "beta", "gamma", "delta", "eps"]), SELF_BATTLES)
    fit = lambda battles: sklearn_duplicated_fit(battles, **options)  # noqa: E731
    table = get_protocol(name, rounds=30).rate_frame(votes).set_index("model")
    exact = get_protocol(name, rounds=30).fit(encode_votes(votes, self_battles=True))
    models = list(encode_votes(votes, self_battles=True).models)
    boot = pandas_bootstrap(votes, fit, rounds=30)
    reference = {"rating": fit(votes), "lower": boot.quantile(0.025), "upper": boot.quantile(0.975)}
    if name == "taxonomy-paper":
        reference.update(lower=pd.Series({m: np.percentile(boot[m], 2.5) for m in boot}),
                         upper=pd.Series({m: np.percentile(boot[m], 97.5) for m in boot}))
    # Without a penalty (taxonomy-paper) a round that draws a self-battle's one-sided rows and too few of the
    # opposite ones has no finite optimum: every rating drifts together, and scikit-learn and the protocol both stop
    # at lbfgs's 100th iteration, a fraction of a point apart. The full fit is finite and equal to 0.01.
    bound_tolerance = 0.01 if name == "fastchat-2023" else 0.25
    for column, values in (("rating", exact.rating), ("lower", exact.lower), ("upper", exact.upper)):
        tolerance = 0.01 if column == "rating" else bound_tolerance
        assert np.abs(pd.Series(values, index=models) - reference[column].reindex(models)).max() < tolerance, column
    # the self-battles matter: leaving them out moves the ratings by more than the tolerance
    kept = votes[votes["model_a"] != votes["model_b"]]
    assert np.abs(fit(kept).reindex(models) - fit(votes).reindex(models)).max() > 0.01
    assert table.loc["beta", "votes"] == (votes[["model_a", "model_b"]] == "beta").any(axis=1).sum() - 2
    assert table.loc["beta", "fit_votes"] == (votes[["model_a", "model_b"]] == "beta").any(axis=1).sum()


def test_fastchat_2024_and_online_elo_rate_self_battles_as_their_code_does():
    names = ["mixtral-8x7b-instruct-v0.1", "gpt-4", "claude-2", "beta", "gamma", "delta"]
    votes = with_self_battles(battle_log(500, seed=11, names=names), SELF_BATTLES)
    rating, lower, upper = fastchat_2024_reference(votes)
    table = get_protocol("fastchat-2024").rate_frame(votes).set_index("model")
    for column, reference in (("rating", rating), ("lower", lower), ("upper", upper)):
        assert np.abs(table[column] - reference.reindex(table.index)).max() < 0.01, column
    online = get_protocol("online-elo", rounds=20).rate_frame(votes).set_index("model")
    assert np.abs(online["rating"] - pd.Series(fastchat_online_elo(votes)).reindex(online.index)).max() < 0.01
    boot = pandas_bootstrap(votes, fastchat_online_elo, rounds=20)
    assert np.abs(online["lower"] - boot.quantile(0.025).reindex(online.index)).max() < 0.01


def test_the_arena_protocol_leaves_flagged_votes_and_self_battles_out():
    votes = battle_log(300, seed=6, names=["alpha", "beta", "gamma", "delta"])
    flagged = with_self_battles(votes, {5: ("beta", "A"), 6: ("gamma", "tie")})
    flagged["flag"] = ""
    flagged.loc[[9, 10], "flag"] = "identical_images"
    clean = flagged[(flagged["flag"] == "") & (flagged["model_a"] != flagged["model_b"])]
    arena = get_protocol("arena", rounds=50)
    with_flags = arena.rate_frame(flagged).set_index("model")
    without = arena.rate_frame(clean.drop(columns="flag")).set_index("model")
    pd.testing.assert_frame_equal(with_flags[["rating", "lower", "upper", "fit_votes"]],
                                  without[["rating", "lower", "upper", "fit_votes"]])
    # the published protocols count a flagged record that is not a self-battle like any vote
    fastchat = get_protocol("fastchat-2023", rounds=0)
    unflagged = flagged.drop(columns="flag")
    pd.testing.assert_series_equal(ratings_of(fastchat.rate_frame(flagged)), ratings_of(fastchat.rate_frame(unflagged)))
    with pytest.raises(ValueError, match="compare a model with itself"):
        encode_votes(unflagged)  # outside a protocol a self-battle is still refused


@pytest.mark.parametrize("tie_policy", ["drop", "half", "half_ties_drop_both_bad"])
def test_arena_protocol_gives_the_leaderboards_numbers_unchanged(tie_policy):
    votes = battle_log(500, seed=2, names=["m1", "m2", "m3", "m4", "m5", "m6"])
    models, counts = vote_counts(votes)
    before = leaderboard_from_counts(list(models), counts, tie_policy=tie_policy, rounds=200, seed=0)
    after = get_protocol("arena", tie_policy=tie_policy, rounds=200).rate_frame(votes, min_votes=10)
    pd.testing.assert_series_equal(before["rating"], after["rating"])
    pd.testing.assert_series_equal(before["lower"], after["lower"])
    pd.testing.assert_series_equal(before["upper"], after["upper"])
    assert before["model"].tolist() == after["model"].tolist()
    assert before["provisional"].tolist() == after["provisional"].tolist()


# --- known answers --------------------------------------------------------------------------------------------------

CONVERGED = {  # the protocols whose fit is the Bradley–Terry MLE with ties as half a win, to within 0.01 Elo
    "arena": dict(tie_policy="half", ridge=0.0, rounds=0),
    "taxonomy-paper": dict(rounds=0),
}


@pytest.mark.parametrize("fixture", ["simple", "food", "llmfao"])
@pytest.mark.parametrize("protocol", sorted(CONVERGED))
def test_evalica_bradley_terry_goldens(fixture, protocol):
    """evalica's bradley_terry scores (ties half a win, normalised to sum 1): log-strength differences × 400/ln 10 are
    Elo differences. The taxonomy protocol's fit is compared before its truncation."""
    votes = read_fixture(fixture)
    golden = pd.read_csv(RATINGS_DATA / f"{fixture}-golden.csv", dtype={"item": str})
    golden = golden[golden["algorithm"] == "bradley_terry"].set_index("item")["score"]
    expected = 400 / math.log(10) * np.log(golden)
    chosen = get_protocol(protocol, **CONVERGED[protocol])
    encoded = encode_votes(votes)
    rating = pd.Series(chosen.fit(encoded).rating, index=list(encoded.models)).reindex(expected.index)
    assert np.abs((rating - rating.mean()) - (expected - expected.mean())).max() < 0.01


def test_fastchat_2024_on_evalica_goldens_within_its_own_stop():
    """FastChat 2024 stops at gtol 1e-6 on the summed loss: on the small fixtures that is the MLE to 0.01 Elo."""
    for fixture in ("simple", "food"):
        votes = read_fixture(fixture)
        golden = pd.read_csv(RATINGS_DATA / f"{fixture}-golden.csv", dtype={"item": str})
        golden = golden[golden["algorithm"] == "bradley_terry"].set_index("item")["score"]
        expected = 400 / math.log(10) * np.log(golden)
        rating = ratings_of(get_protocol("fastchat-2024", rounds=0).rate_frame(votes)).reindex(expected.index)
        assert np.abs((rating - rating.mean()) - (expected - expected.mean())).max() < 0.01


def worked_example() -> pd.DataFrame:
    """The Bradley–Terry worked example (arena-rank's test, after Wikipedia): A–B 2:3, A–D 1:4, B–C 5:3, C–D 1:3."""
    games = [("A", "B", 2, 3), ("A", "D", 1, 4), ("B", "C", 5, 3), ("C", "D", 1, 3)]
    rows = []
    for first, second, first_wins, second_wins in games:
        rows += [(first, second, "A")] * first_wins + [(first, second, "B")] * second_wins
    return pd.DataFrame(rows, columns=["model_a", "model_b", "outcome"])


@pytest.mark.parametrize("protocol,settings", [("arena", dict(ridge=0.0, rounds=0)),
                                               ("fastchat-2024", dict(rounds=0)),
                                               ("taxonomy-paper", dict(rounds=0))])
def test_worked_example_strengths(protocol, settings):
    """Strengths at geometric mean 1: A 0.640, B 1.043, C 0.660, D 2.270 (printed to three decimals)."""
    encoded = encode_votes(worked_example())
    rating = get_protocol(protocol, **settings).fit(encoded).rating
    theta = (rating - 1000) * math.log(10) / 400
    strengths = dict(zip(encoded.models, np.exp(theta - theta.mean())))
    assert [round(strengths[m], 3) for m in "ABCD"] == [0.640, 1.043, 0.660, 2.270]


# --- the registry ---------------------------------------------------------------------------------------------------

def test_registry_lists_the_seven_protocols_each_stating_its_choices():
    assert list(PROTOCOLS) == ["arena", "fastchat-2023", "fastchat-2024", "taxonomy-paper", "online-elo",
                               "lmarena-2025", "kwise-rank-breaking"]
    for name, protocol in PROTOCOLS.items():
        assert protocol.name == name
        choices = protocol.choices()
        assert list(choices) == list(CHOICES) and all(len(text) > 3 for text in choices.values()), name
        module_doc = sys.modules[type(protocol).__module__].__doc__.lower()
        for word in ("tie", "penalty", "scale", "anchor", "bootstrap", "rounding"):
            assert word in module_doc, (name, word)


def test_unknown_protocol_and_unknown_setting_say_what_to_do():
    with pytest.raises(ValueError, match="unknown rating protocol 'elo'; choices: arena, fastchat-2023"):
        get_protocol("elo")
    with pytest.raises(ValueError, match="has no setting ridge; its settings are"):
        get_protocol("fastchat-2023", ridge=1.0)


def test_result_table_columns_and_counts():
    votes = worked_example()
    for name in PROTOCOLS:
        table = get_protocol(name, rounds=3).rate_frame(votes)
        assert list(table.columns) == list(RESULT_COLUMNS)
        assert set(table["protocol"]) == {name}
        assert table.set_index("model").loc["D", ["votes", "wins", "losses"]].tolist() == [9, 7, 2]
    empty = get_protocol("fastchat-2023").rate_frame(votes.iloc[:0])
    assert list(empty.columns) == list(RESULT_COLUMNS) and len(empty) == 0
