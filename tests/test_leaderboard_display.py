"""What a person reads on the leaderboard (issue 17, items 7 and 8): a compact table, numbers rounded to what the
votes support, unranked models without a rank (greyed, their ratings shown: issue 44), a chart bounded to the ranked
models, ranks and rank ranges explained, panels that say why they are empty, and menus whose choices follow the chosen
suite."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from support.votes import JUDGE, add_votes

from arena.leaderboard import plots
from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from arena.leaderboard.labels import RANK_RULE, interval_text, public_ranks, rating_step, round_rating
from arena.leaderboard.view import render_view

MAIN = ["Rank", "Rank range", "Model", "Rating", "95% interval", "Votes", "Both bad"]


def test_ratings_are_rounded_to_what_their_interval_supports():
    assert rating_step(995, 1005) == 1 and rating_step(900, 1100) == 10 and rating_step(-624, 879) == 100
    assert rating_step(float("nan"), 1000) == 1
    assert round_rating(751.4, -624.0, 879.0) == 800.0 and round_rating(1003.6, 995.0, 1010.0) == 1004.0
    assert interval_text(-624.3, 879.2) == "[-600, 900]"  # the "+128/−1625" as bounds, to the hundred
    assert interval_text(990.4, 1005.6) == "[990, 1006]" and interval_text(float("nan"), 3.0) == ""


def test_provisional_models_get_no_rank_and_do_not_push_rated_models_down():
    table = pd.DataFrame({"model": ["a", "b", "c", "d"], "rating": [2706.0, 1100.0, 1000.0, np.nan],
                          "lower": [2600.0, 1050.0, 900.0, np.nan], "upper": [2800.0, 1150.0, 1060.0, np.nan],
                          "provisional": [True, False, False, True]})
    ranks = public_ranks(table)
    assert ranks.isna().tolist() == [True, False, False, True]
    assert ranks[1] == 1 and ranks[2] == 1  # b and c overlap: they share rank 1; a (provisional) is above both
    table.loc[2, "upper"] = 1040.0  # c's whole interval now lies below b's
    assert public_ranks(table)[2] == 2
    assert "1 + the number of ranked models whose whole 95% interval lies above" in RANK_RULE
    ranked = table.assign(ranked=[False, True, True, False], provisional=[True, True, False, True])
    assert public_ranks(ranked).isna().tolist() == [True, False, False, True]  # the ranked column decides


def test_the_chart_leaves_provisional_models_out_and_bounds_its_axis_to_the_rated_ones():
    table = pd.DataFrame({"model": ["few", "x", "y"], "rating": [2706.0, 1040.0, 960.0],
                          "lower": [2174.0, 1000.0, 920.0], "upper": [2706.0, 1080.0, 1000.0],
                          "provisional": [True, False, False]})
    figure = plots.ratings_chart({"human": table}, provisional="hide")
    assert list(figure.data[0].x) == ["x", "y"]
    low, high = figure.layout.yaxis.range
    assert 880 <= low < 920 and 1080 < high <= 1120  # the axis ran from -1000 to 2000
    empty = plots.ratings_chart({"human": table.assign(provisional=True)}, provisional="hide")
    assert "enough votes" in empty.layout.annotations[0].text


def _view(arena, **options):
    options = LeaderboardOptions(rounds=20, **options)
    return render_view(compute_leaderboard(arena.db, options), options)


def test_the_main_table_is_compact_without_judge_columns_when_there_are_no_judge_votes(small_arena):
    import random

    from arena import session as sessions

    s = sessions.start(small_arena.db, "voter", "token-001", open_signup=True)
    for i in range(5):  # a 5-vote view: every model provisional (the 2706 "+0/-532")
        s = sessions.vote(small_arena.db, sessions.next_battle(small_arena.db, random.Random(i), s), "A")
    view = _view(small_arena)
    table = view["tables"]["table"]
    assert table["headers"] == MAIN
    assert sorted(row[2] for row in table["data"]) == sorted(small_arena.model_ids)
    assert all(row[0] is None and row[1] == "" for row in table["data"])  # no model has 100 votes: no rank
    voted = [row for row in table["data"] if row[5]]
    assert voted and all(isinstance(row[3], int) and row[4].startswith("[") for row in voted)  # greyed, not hidden
    assert all(row[4] == "no votes" for row in table["data"] if not row[5])
    assert all(isinstance(row[5], int) for row in table["data"])
    assert all(row[6] == "" or row[6].endswith("%") for row in table["data"])
    assert all("italic" in style for row in table["metadata"]["styling"] for style in row)  # every row grey
    assert "none is ranked: their ratings show greyed" in view["headline"]
    assert "Rank = 1 +" in view["notes"]["table"]
    chart = json.loads(view["figures"]["chart"])
    assert all(len(trace.get("x", [])) == 0 for trace in chart["data"])
    confusion = json.loads(view["figures"]["confusion"])
    assert confusion["data"] == [] and "No judge votes" in confusion["layout"]["annotations"][0]["text"]
    assert view["tables"]["metrics"]["headers"] == [] and "No automatic metric" in view["notes"]["metrics"]


def test_judge_columns_appear_with_judge_votes_and_numbers_are_short(small_arena):
    add_votes(small_arena)
    view = _view(small_arena, min_votes=5)
    table = view["tables"]["table"]
    assert table["headers"] == [*MAIN, "Judge Rank", "Judge Rank range", "Judge Rating", "Judge 95% interval",
                                "Judge Votes"]
    for row in table["data"]:
        assert row[3] is None or (isinstance(row[3], int) and len(str(row[3])) <= 5)
        assert row[4].startswith("[") or row[4].startswith("no votes")
    assert f"{JUDGE}" in view["summary"]


def test_an_empty_combination_of_filters_says_so(small_arena):
    add_votes(small_arena)
    view = _view(small_arena, suite="commonsense", subset="Easy")
    assert "No votes match these filters (Suite Commonsense-T2I + Subset Easy)" in view["notes"]["table"]  # titles
    outcomes = json.loads(view["figures"]["outcomes"])
    assert "No votes match" in outcomes["layout"]["annotations"][0]["text"]


def test_the_filter_menus_follow_the_chosen_suite(small_arena):
    from arena.web.leaderboard_tab import suite_choices

    by_suite = suite_choices(small_arena.db)
    assert by_suite["commonsense"]["Subset"] == ["Physical Laws"]
    assert by_suite["taxonomy"]["Subset"] == ["Easy"]
    assert by_suite["commonsense"]["Prompt variant"] == []
    assert by_suite["taxonomy"]["Prompt variant"] == ["with_definition", "without_definition"]
    assert by_suite["commonsense"]["Category"] == ["Physical Laws"] and by_suite["taxonomy"]["Category"] == []


def test_the_weak_prior_keeps_a_handful_of_sweeping_votes_near_the_mean():
    from ratings.leaderboard import fit_leaderboard, prior_ridge

    votes = pd.DataFrame({"model_a": ["x"] * 5 + ["y"] * 20, "model_b": ["y"] * 5 + ["z"] * 20,
                          "outcome": ["A"] * 5 + ["A"] * 12 + ["B"] * 8})
    pure = fit_leaderboard(votes, rounds=100, min_votes=1).set_index("model")
    prior = fit_leaderboard(votes, rounds=100, min_votes=1, ridge=prior_ridge(400)).set_index("model")
    assert pure.loc["x", "rating"] > 2000  # the 2706 of a 5-vote view
    assert 1100 < prior.loc["x", "rating"] < 1500 and prior.loc["x", "upper"] < 1600
    assert prior.loc["y", "rating"] > prior.loc["z", "rating"]  # the order the votes say is kept
    assert prior_ridge(0) == 1e-6


def test_the_web_leaderboard_uses_the_configured_prior_and_names_it(small_arena):
    from arena.leaderboard.compute import leaderboard_options

    options = leaderboard_options(small_arena.settings, rounds=20, min_votes=5)  # 18 battles: rank them
    assert options.prior_sd == small_arena.settings.rating_prior_sd == 400.0
    add_votes(small_arena)
    view = render_view(compute_leaderboard(small_arena.db, options), options)
    assert "weak normal prior, spread 400 points" in view["summary"]
    chart = json.loads(view["figures"]["chart"])
    low, high = chart["layout"]["yaxis"]["range"]
    assert 300 < low and high < 1700, (low, high)


def test_every_short_header_has_a_tooltip_and_every_chart_title_fits_a_phone(small_arena):
    """Issue 17: the Metrics and Agreement tables' short headers each have a tooltip with the full meaning (a metric's
    also says which way is better), and no chart title or message is a line too long for a phone's chart."""
    from support.votes import store_metrics

    from arena.leaderboard.view import header_tips
    from judges.metrics.registry import METRICS

    add_votes(small_arena)
    store_metrics(small_arena)
    view = _view(small_arena, min_votes=1)
    tips = header_tips({name: (direction, metric.title) for metric in METRICS.values()
                        for name, direction in metric.outputs().items()})
    for name, element in (("table", "lb-table"), ("metrics", "lb-metrics"), ("correlations", "lb-correlations"),
                          ("bias", "lb-bias"), ("pairs", "lb-annotator-pairs")):
        headers = view["tables"][name]["headers"]
        assert headers, name
        for header in headers:
            tip = tips[element].get(header) or tips[element].get(header.split(" [")[0].split(" (")[0])
            assert tip and tip != header, (name, header)
    # plain labels with the better direction's arrow (issue 29); the tooltip keeps the full meaning
    fid_tip = tips["lb-metrics"]["FID ↓"]
    assert "Fréchet Inception Distance" in fid_tip and "lower is better" in fid_tip
    assert "higher is better" in tips["lb-metrics"]["CLIP score ↑"]
    assert "consistency_std_S_a; lower is better" in tips["lb-metrics"]["Consistency SD, abstract ↓"]
    for name, figure in view["figures"].items():
        layout = json.loads(figure)["layout"]
        texts = [layout.get("title", {}).get("text") or "", *(a["text"] for a in layout.get("annotations", []))]
        lines = [line for text in texts for line in text.split("<br>")]
        assert all(len(line) <= 36 for line in lines), (name, lines)
