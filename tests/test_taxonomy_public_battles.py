"""The taxonomy paper's Tables 3-6 recomputed from the public half of the authors' labelled battles, through the
product's own commands, against an independent re-implementation of the authors' ``subset_elo.py``.

Data: tests/data/taxonomy/public_battles.csv (1,721 of the 3,370 battles; SOURCE.md there). Path: ``python -m arena
import-votes FILE --format taxonomy`` (the authors' hub-folder model names mapped by the taxonomy-paper preset), then
``python -m arena report taxonomy --json``. Reference: subset_elo.py (github.com/VityaVitalich/TaxoGen, commit
4ea3dfb; its notebooks/elo_latex_tables.ipynb prints Table 5 from that script's output) written here from its text:
per subset, the rows of one label column in file order, ``compute_mle_elo`` (battles duplicated, ``X[i, a] = +ln 10``
then ``X[i, b] = -ln 10``, y = 1 for an A win and for the first copy of a tie or a both-bad, scikit-learn
``LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8)``, 400 w + 1000), ``np.random.seed(42)`` then 100
rounds of ``df.sample(frac=1.0, replace=True)``, ``np.percentile`` 2.5 and 97.5, and ``astype(int)``.

Every score and bound is equal at the truncated integer, except a bound that the percentile takes from a bootstrap
round without a finite estimate: there a model (or a group of models) won or lost every battle it had in the
resample, the likelihood keeps rising as its rating runs off, and both fits stop wherever lbfgs's 100 iterations
leave them. Those bounds are named (:func:`degenerate_rounds`) and reported, not compared. On half the data the
tables cannot equal the printed ones; their rank agreement is printed and kept in docs/methods/taxonomy.md.
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.arena import empty_arena_env

from arena.commands import main as arena
from arena.reports import read_published
from arena.reports.taxonomy import PAPER_LABELS
from core.presets import get_preset

pytestmark = pytest.mark.slow  # 3,232 scikit-learn fits in the reference: about two minutes on two cores

sklearn = pytest.importorskip("sklearn", reason="scikit-learn (the dev extra) is the authors' own fit")

PUBLIC = Path(__file__).parent / "data" / "taxonomy" / "public_battles.csv"
TABLES = {"3": "result_gpt_def", "4": "result_gpt_nodef", "5": "result_human_def", "6": "result_human_nodef"}
SUBSETS = {"Easy": "appendix", "Hypo": "leafs_and_no_leafs", "Hyper": "predict_hypernym",
           "Mix": "simple_triplet_2parent", "P-Easy": "appendix_llama", "P-Hypo": "leafs_and_no_leafs_llama",
           "P-Hyper": "predict_hypernym_llama", "P-Mix": "simple_triplet_2parent_llama"}
ROUNDS = 100


# --- subset_elo.py, from its text ---------------------------------------------------------------------------------

def compute_mle_elo(df: pd.DataFrame) -> pd.Series:
    from sklearn.linear_model import LogisticRegression

    models = pd.concat([df["model_a"], df["model_b"]]).unique()
    models = pd.Series(np.arange(len(models)), index=models)
    df = pd.concat([df, df], ignore_index=True)
    n = df.shape[0]
    x = np.zeros([n, len(models)])
    x[np.arange(n), models[df["model_a"]]] = +math.log(10)
    x[np.arange(n), models[df["model_b"]]] = -math.log(10)
    y = np.zeros(n)
    y[(df["result"] == 0).to_numpy()] = 1.0
    tie = ((df["result"] == 2) | (df["result"] == 3)).to_numpy().copy()
    tie[len(tie) // 2:] = False
    y[tie] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lbfgs's ConvergenceWarning on a round without a finite estimate
        lr = LogisticRegression(fit_intercept=False, penalty=None, tol=1e-8).fit(x, y)
    return pd.Series(400 * lr.coef_[0] + 1000, index=models.index)


def degenerate_rounds(df: pd.DataFrame, rounds: list[pd.DataFrame]) -> list[bool]:
    """Per bootstrap round, whether its fit has no finite estimate: the models it holds, linked i -> j when i won a
    battle against j (a tie or a both-bad both ways), are not strongly connected."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    flags = []
    for battles in rounds:
        names = pd.unique(pd.concat([battles["model_a"], battles["model_b"]]))
        index = {name: k for k, name in enumerate(names)}
        a, b = battles["model_a"].map(index).to_numpy(), battles["model_b"].map(index).to_numpy()
        result = battles["result"].to_numpy()
        winner = np.concatenate([a[result != 1], b[result >= 1]])
        loser = np.concatenate([b[result != 1], a[result >= 1]])
        graph = csr_matrix((np.ones(len(winner)), (winner, loser)), shape=(len(names), len(names)))
        flags.append(connected_components(graph, connection="strong")[0] > 1)
    return flags


def subset_elo(data: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, set[str]]]:
    """The script's table for one subset: score, lower, upper per model as ``astype(int)`` casts them (NaN where a
    model is missing from a round: the script would stop there); and {model: bounds taken from a round without a
    finite estimate}."""
    score = compute_mle_elo(data)
    np.random.seed(42)
    drawn = [data.sample(frac=1.0, replace=True) for _ in range(ROUNDS)]
    np.random.seed(None)
    boot = pd.DataFrame([compute_mle_elo(battles) for battles in drawn])
    bad = np.array(degenerate_rounds(data, drawn))
    table: dict[str, tuple[float, float, float]] = {}
    unsure: dict[str, set[str]] = {}
    for model in score.index:
        column = boot[model].to_numpy()
        lower, upper = np.percentile(column, 2.5), np.percentile(column, 97.5)
        table[model] = (score[model], lower, upper)
        order = np.argsort(column, kind="stable")
        for name, q in (("lower", 2.5), ("upper", 97.5)):
            position = q / 100 * (ROUNDS - 1)  # np.percentile's linear interpolation between these two order stats
            used = order[[math.floor(position), math.ceil(position)]]
            if bad[used].any():
                unsure.setdefault(model, set()).add(name)
    frame = pd.DataFrame(table, index=["score", "lower", "upper"]).T
    return np.trunc(frame), unsure


# --- the product's path ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def recomputed(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        root = empty_arena_env(monkeypatch, tmp_path_factory.mktemp("public-battles"))
        assert arena(["import-votes", str(PUBLIC), "--format", "taxonomy", "--quiet"]) == 0
        assert arena(["report", "taxonomy", "--json", "--compare-published", "--no-figures", "--output",
                      str(root / "report.json")]) == 0
    return json.loads((root / "report.json").read_text())


@functools.cache
def public_battles() -> pd.DataFrame:
    data = pd.read_csv(PUBLIC)
    aliases = get_preset("taxonomy-paper").get("votes.aliases")
    for side in ("model_a", "model_b"):
        data[side] = data[side].map(lambda name: PAPER_LABELS[aliases[name]])
    return data


def reference(number: str) -> dict[str, tuple[pd.DataFrame, dict[str, set[str]]]]:
    """The script's output for one table: {column key: (its table, the bounds from rounds without an estimate)}
    (808 scikit-learn fits: computed in the test, so each table's test has its own time limit)."""
    data, column = public_battles(), TABLES[number]
    tables = {}
    for key, subset in SUBSETS.items():
        rows = data[data["subset"] == subset].rename(columns={column: "result"})
        tables[key] = subset_elo(rows[rows["result"].notna()])
    return tables


def cells(report: dict, number: str) -> dict[tuple[str, str], dict]:
    table = next(t for t in report["tables"] if t["number"] == number)
    return {(row["label"], key): cell for row in table["rows"] for key, cell in row["cells"].items()}


def parse(text: str) -> tuple[int, int | None, int | None]:
    """'1125 (+61/-59)' -> (1125, 1066, 1186); '1125' -> (1125, None, None); the report's marks (†, ‡) left out."""
    head, _, rest = text.replace("‡", "").removesuffix(" †").partition(" (")
    score = int(head)
    if not rest:
        return score, None, None
    up, down = rest.rstrip(")").split("/")
    return score, score - int(down.lstrip("-")), score + int(up.lstrip("+"))


def marked_bounds(text: str) -> set[str]:
    """The bounds the report marks ‡ (read from a bootstrap round without a finite estimate)."""
    _, _, rest = text.partition(" (")
    up, _, down = rest.partition("/")
    return {name for name, part in (("upper", up), ("lower", down)) if "‡" in part}


@pytest.mark.parametrize("number", sorted(TABLES))
def test_tables_3_to_6_equal_the_authors_script_on_the_public_battles(recomputed, number, capsys):
    ours = cells(recomputed, number)
    script = reference(number)
    named = []
    for key in SUBSETS:
        expected, unsure = script[key]
        for model, row in expected.iterrows():
            cell = ours[(model, key)]
            text = cell["text"].split(" (paper")[0]
            score, lower, upper = parse(text)
            assert score == row["score"], (number, key, model, cell["text"], row.to_dict())
            assert not text.endswith("†"), (number, key, model)  # every whole-subset fit has a finite estimate
            if lower is not None:  # the report marks exactly the bounds the script read from such rounds
                assert marked_bounds(text) == unsure.get(model, set()), (number, key, model, text)
            for name, value in (("lower", lower), ("upper", upper)):
                if name in unsure.get(model, ()):
                    named.append((f"Table {number} {model} {key} {name}", value, int(row[name])))
                    continue
                assert value == row[name], (number, key, model, name, cell["text"], row.to_dict())
    differing = [f"{where}: ours {mine}, script {theirs}" for where, mine, theirs in named if mine != theirs]
    with capsys.disabled():
        print(f"\nTable {number}: {len(named)} of {2 * 12 * len(SUBSETS)} bounds take a round without a finite "
              f"estimate and are not compared; {len(differing)} of them differ" + "".join(
                  f"\n  {line}" for line in differing))


def test_every_row_is_printed_under_the_papers_name_with_the_papers_value_beside(recomputed):
    published = read_published(Path(__file__).parents[1] / "arena" / "reports" / "published" / "taxonomy.csv")
    for number in TABLES:
        ours = cells(recomputed, number)
        systems = set(PAPER_LABELS.values()) - {"Qwen-Image"}  # Figure 9's system is in no table
        assert {label for label, _ in ours} == set(published.rows(number)) == systems
        for (label, key), cell in ours.items():
            assert cell["paper"] == published.get(number, label, key), (number, label, key)
        notes = next(t for t in recomputed["tables"] if t["number"] == number)["notes"]
        agreement = next(note for note in notes if note.startswith("Rank agreement with the paper"))
        rhos = [float(part.split()[1]) for part in agreement.split(": ", 1)[1].rstrip(".").split(", ")]
        assert len(rhos) == 8 and all(-1 <= rho <= 1 for rho in rhos)
