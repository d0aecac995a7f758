"""The leaderboard's plotly figures: the right traces with the right numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import ratings
from arena.leaderboard import plots

VOTES = pd.DataFrame({
    "model_a": ["x", "y", "x", "z", "y", "z", "x", "y", "x", "z"],
    "model_b": ["y", "x", "z", "x", "z", "y", "y", "z", "z", "y"],
    "outcome": ["A", "B", "A", "B", "tie", "A", "both_bad", "A", "B", "A"],
    "voter_kind": ["human"] * 5 + ["judge"] * 5,
    "subset": ["Easy", "Hard"] * 5,
})


def test_ratings_chart_has_one_trace_per_table_with_ci_bars():
    tables = {kind: ratings.fit_leaderboard(VOTES[VOTES["voter_kind"] == kind], rounds=50, tie_policy="half")
              for kind in ("human", "judge")}
    figure = plots.ratings_chart(tables)
    assert isinstance(figure, go.Figure)
    assert [trace.name for trace in figure.data] == ["human", "judge"]
    assert figure.layout.scattermode == "group"
    for trace, table in zip(figure.data, tables.values()):
        table = table.set_index("model").loc[list(trace.x)]
        np.testing.assert_allclose(trace.y, table["rating"])
        np.testing.assert_allclose(trace.error_y.array, table["upper"] - table["rating"])
        np.testing.assert_allclose(trace.error_y.arrayminus, table["rating"] - table["lower"])
    assert list(figure.layout.xaxis.categoryarray) == list(tables["human"]["model"])


def test_ratings_chart_with_empty_tables_and_provisional_markers():
    empty = ratings.fit_leaderboard(VOTES.iloc[:0])
    figure = plots.ratings_chart({"human": empty, "judge": empty})
    assert [len(trace.x) for trace in figure.data] == [0, 0]
    table = ratings.fit_leaderboard(VOTES, rounds=10, min_votes=1000)
    symbols = plots.ratings_chart({"all": table}).data[0].marker.symbol
    assert set(symbols) == {"circle-open"}
    with pytest.raises(ValueError, match="fit_leaderboard"):
        plots.ratings_chart({"bad": pd.DataFrame({"model": ["x"]})})


def test_heatmaps_show_the_matrices():
    fraction = plots.win_fraction_heatmap(VOTES)
    assert len(fraction.data) == 1 and isinstance(fraction.data[0], go.Heatmap)
    expected = ratings.win_fraction_matrix(VOTES)
    np.testing.assert_allclose(np.array(fraction.data[0].z, dtype=float), expected.to_numpy(), equal_nan=True)
    assert list(fraction.data[0].y) == list(expected.index)
    counts = plots.battle_count_heatmap(VOTES, order=["z", "y", "x"])
    np.testing.assert_array_equal(counts.data[0].z, ratings.battle_count_matrix(VOTES, ["z", "y", "x"]).to_numpy())
    confusion = pd.DataFrame(np.arange(16).reshape(4, 4), index=pd.Index(ratings.OUTCOMES, name="human"),
                             columns=pd.Index(ratings.OUTCOMES, name="judge"))
    figure = plots.confusion_heatmap(confusion)
    np.testing.assert_array_equal(figure.data[0].z, confusion.to_numpy())
    assert figure.layout.yaxis.title.text == "human" and figure.layout.xaxis.title.text == "judge"


def test_outcome_distribution_stacks_one_bar_trace_per_outcome():
    figure = plots.outcome_distribution(VOTES)
    assert [trace.name for trace in figure.data] == ["first (A) wins", "second (B) wins", "tie", "both bad"]
    assert figure.layout.barmode == "stack"
    shares = np.array([trace.y for trace in figure.data], dtype=float)
    np.testing.assert_allclose(shares.sum(axis=0), 1.0)
    assert [list(level) for level in figure.data[0].x] == [["human", "human", "judge", "judge"],
                                                           ["Easy", "Hard", "Easy", "Hard"]]
    single = plots.outcome_distribution(VOTES, by=("voter_kind",))
    assert list(single.data[0].x) == ["human", "judge"]
    with pytest.raises(ValueError, match="no such column"):
        plots.outcome_distribution(VOTES, by=("category",))


def test_outcome_distribution_puts_votes_without_a_group_value_under_a_dash():
    votes = VOTES.assign(category=["animals", None, np.nan, "animals", None, "food", "food", np.nan, "animals", None])
    figure = plots.outcome_distribution(votes, by=("category",))
    assert list(figure.data[0].x) == ["animals", "food", "—"]  # not "None" and "nan" as two groups
    counts = np.array([trace.customdata for trace in figure.data], dtype=int)
    assert counts.sum(axis=0).tolist() == [3, 2, 5]
