"""``python -m arena report taxonomy``: the taxonomy paper's Tables 2-16 from the database, in the paper's layout.

The paper is ../shared/reference/papers/taxonomy-image-generation.txt; its printed numbers are in
``published/taxonomy.csv`` (``--compare-published``). Which data each table reads, under the chosen preset:

- Tables 3-6, ELO of the GPT judge (3, 4) and of the humans (5, 6) with (3, 5) and without (4, 6) the definition, one
  fit per subset with the preset's rating protocol (``taxonomy-paper``: the released ``arena_elo.py``, printed
  ``score (+up/-down)``). The votes are those the leaderboard reads (:func:`datamodel.vote_arrays.read_vote_arrays`):
  the arena's own and the imported ones (the paper's labels: ``import-votes --format taxonomy``), or one source's
  (``--source``), in the order the leaderboard rates them (an import's rows in file order). Human votes: every human
  vote not excluded; judge votes: the preset's judge voter (its model, template version and single order), else the
  judge voter with the most votes, named in the header.
- Table 7, FID and IS on the deduplicated full set with the definition (Table 7's numbers are Table 8's "def"
  columns); Table 8, the full set with and without; Tables 9 and 10, per subset with the definition (their columns
  in the paper's order: Hypo, Hyper, Mix, Easy). Rows written by ``--fid-is-slices paper``.
- Tables 11, 12, 15 and 14: the means of the per-image hypernym, lemma and cohyponym CLIPScores and of the
  specificity per model and subset; Table 13 the same over every subset. The paper does not say which variant's
  images its CLIP tables score; the authors scored both (``main_clipscore_def_imageof.csv``,
  ``main_clipscore_imageof.csv``) and their notebook's means of the second, the images made **without** the
  definition, are the printed cells (tests/data/taxonomy/clip_means_without_definition.csv). These tables read the
  preset's ``report.variant`` (taxonomy-paper: ``without_definition``), or ``--variant``, and say which.
- Table 16: Mann-Whitney U p-values between the models' per-image rewards (images made with the definition, as the
  released ``reward.py`` scored them), printed to 3 decimals (below 0.0005: 0, as the paper prints it).
- Table 2: the top model of each metric and subset, from the cells of the tables above (its Reward rows from the
  mean reward per subset and variant, which the paper prints no table of): ties at the printed precision list two
  models with a slash, more than two read "Draw", and ``*`` marks an ELO top whose runner-up lies inside its 95%
  interval (the paper does not say how it chose its stars).

Under another preset (``--preset arena``) the same tables read that preset's metrics: the raw cosines of
``clip_lemma`` and the others instead of CLIPScore, the pooled FID/IS, the arena's rating fit; each cell a run does
not have is "—" with the reason and the command that makes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from arena.reports import REPORTS, Cell, Column, Report, ReportOptions, ReportSpec, Table
from core.presets import Preset
from datamodel.catalog import image_provenance, published_prompt_count, suites_summary
from datamodel.imported_votes import import_sources, imported_slices
from datamodel.metrics import image_metric_frame, image_metric_means, model_level_rows, scorer_versions
from datamodel.vote_arrays import VoteArrays, read_vote_arrays

SUITE = "taxonomy"
WITH, WITHOUT = "with_definition", "without_definition"
# (column key as in the published file, the suite's subset, the group heading)
SUBSETS = (("Easy", "Easy", "Ground Truth"), ("Hypo", "Hyponymy", "Ground Truth"),
           ("Hyper", "Hypernymy", "Ground Truth"), ("Mix", "Synset-Mixing", "Ground Truth"),
           ("P-Easy", "P-Easy", "Predicted"), ("P-Hypo", "P-Hypo", "Predicted"),
           ("P-Hyper", "P-Hyper", "Predicted"), ("P-Mix", "P-Mix", "Predicted"))
SUBSET_OF = {key: subset for key, subset, _ in SUBSETS}
# the paper's name of each system (paper Table 1; the registry entries its taxonomy-paper preset runs)
PAPER_LABELS = {
    "sd-v1-5": "SD1.5", "sdxl": "SDXL", "sdxl-turbo": "SDXL-turbo", "kandinsky-3": "Kandinsky3",
    "playground-v2.5": "Playground", "openjourney": "Openjourney", "deepfloyd-if": "DeepFloyd", "sd3": "SD3",
    "pixart-sigma-512": "PixArt", "hunyuan-dit": "HDiT", "flux-dev": "FLUX", "retrieval": "Retrieval",
    "qwen-image": "Qwen-Image",  # Figure 9 only
}
RUNAWAY, BOUND_RUNAWAY = "†", "‡"  # a rating without a finite estimate; a bound read from a round without one
PUBLISH_HINT = "python -m judges metrics --suite taxonomy --preset {preset}"


def subset_columns(order: Iterable[str] | None = None, predicted_prefix: bool = True) -> list[Column]:
    """The eight subset columns (Ground Truth, then Predicted), in ``order`` of keys, labelled as the paper prints
    them (``P-Easy`` or, with ``predicted_prefix`` False, ``Easy`` under Predicted)."""
    groups = {key: group for key, _, group in SUBSETS}
    keys = list(order or (key for key, _, _ in SUBSETS))
    return [Column(key, key if predicted_prefix else key.removeprefix("P-"), groups[key]) for key in keys]


def label_of(model: str) -> str:
    return PAPER_LABELS.get(model, model)


def strip_zeros(text: str) -> str:
    """'0.950' -> '0.95', '0.000' -> '0' (how Table 16 prints its p-values)."""
    return text.rstrip("0").rstrip(".") if "." in text else text


# --- the data a report reads ---------------------------------------------------------------------------------------


@dataclass
class Sources:
    """What the tables read under one preset: metric names and scorers, the rating protocol, the judge voter, and
    the provenance lines saying so."""

    preset: Preset
    clip: dict[str, str]  # role (lemma, hypernym, cohyponym, specificity) -> stored metric name
    protocol: Any  # ratings.protocols.RatingProtocol, or None when the build has none of that name
    protocol_problem: str = ""
    judge: str | None = None
    judge_note: str = ""
    lines: list[str] = field(default_factory=list)
    chosen: dict[str, str] = field(default_factory=dict)  # metric name -> scorer read
    present: set[tuple[str, str]] = field(default_factory=set)  # (subset, variant) with prompts or imported votes
    source: str | None = None  # the votes rated: None every vote, "arena" the arena's own, else one import
    clip_variant: str = WITH  # the images the CLIP tables (11-15) read: --variant, else the preset's report.variant
    clip_variant_given: bool = False  # whether --variant chose it
    read: dict[tuple, VoteArrays] = field(default_factory=dict, repr=False)  # filters -> their votes, read once

    def votes(self, db, **filters) -> VoteArrays:
        """The suite's votes the leaderboard would read with these filters (``variant``, ``subset``), not excluded:
        read from the database once per set of filters (a report asks for three: every variant, each of the two),
        which the tables then slice in memory."""
        key = tuple(sorted(filters.items()))
        if key not in self.read:
            arrays = read_vote_arrays(db, source=self.source, suite=SUITE, **filters)
            self.read[key] = arrays.take(~arrays.excluded)
        return self.read[key]

    def hint(self) -> str:
        return PUBLISH_HINT.format(preset=self.preset.name)

    def absent_subset(self, subset: str | None, variant: str) -> str:
        """Why a cell of ``subset`` (None: any) and ``variant`` is empty when the database has no such prompts, or
        ''."""
        if subset is None:
            if any(v == variant for _, v in self.present):
                return ""
            return f"no prompts {variant.replace('_', ' ')} in the database"
        if (subset, variant) in self.present:
            return ""
        return (f"the database has no {subset} concepts (the published ones: python -m arena suites import "
                "taxonomy-bench main_bench.csv)")


def _clip_names(preset: Preset) -> dict[str, str]:
    if "clipscore" in (preset.get("metrics.names") or ()):
        return {role: f"clipscore_{role}" for role in ("lemma", "hypernym", "cohyponym", "specificity")}
    return {role: f"clip_{role}" for role in ("lemma", "hypernym", "cohyponym", "specificity")}


def _protocol(preset: Preset, settings):
    """The preset's rating protocol; the arena's own with the settings' tie policy, prior and bootstrap."""
    name = preset.get("rating.protocol", "arena")
    try:
        from core.protocols import get_protocol
    except ImportError:  # a build without the rating-protocol registry
        return None, f"this build has no rating protocol registry, so no {name} fit"
    try:
        if name == "arena" and settings is not None:
            from ratings.leaderboard import prior_ridge

            return get_protocol(name, tie_policy=settings.tie_policy, rounds=settings.bootstrap_rounds,
                                seed=settings.seed, ridge=prior_ridge(settings.rating_prior_sd)), ""
        return get_protocol(name), ""
    except ValueError as error:
        return None, str(error)


def _preset_judge(preset: Preset, settings) -> str | None:
    """The voter name the preset's pairwise judge votes under (None when the preset has no pairwise judge)."""
    if preset.get("judge.task") not in (None, "pairwise"):
        return None
    from judges.pairwise import pairwise_judge_name
    from judges.prompts import Templates

    templates = Templates()
    for key, source in (preset.get("judge.templates") or {}).items():
        templates = templates.replace(**{key: templates.text(source)})
    model = preset.get("judge.model") or (settings.judge_model if settings is not None else "gpt-4o-mini")
    options = preset.get("judge.options") or {}
    return pairwise_judge_name(model, preset.get("judge.name") or "gpt-judge", bool(options.get("single_order")),
                               templates)


def judge_counts(arrays: VoteArrays) -> pd.Series:
    """Votes per judge voter of ``arrays``."""
    codes = -1 - arrays.voter[~arrays.human]
    counts = np.bincount(codes, minlength=len(arrays.judges)) if len(codes) else np.zeros(len(arrays.judges), int)
    return pd.Series(counts, index=list(arrays.judges), dtype=int).loc[lambda c: c > 0]


def _judge_voter(arrays: VoteArrays, preset: Preset, settings) -> tuple[str | None, str]:
    counts = judge_counts(arrays)
    wanted = _preset_judge(preset, settings)
    if wanted and wanted in counts.index:
        return wanted, f"judge votes: {int(counts[wanted])} from {wanted}, the preset's judge"
    if len(counts):
        chosen = sorted(counts.index, key=lambda name: (-counts[name], name))[0]
        why = f"the preset's judge {wanted} has none" if wanted else "the preset names no judge"
        return chosen, f"judge votes: {int(counts[chosen])} from {chosen}, the judge with the most votes ({why})"
    return None, "judge votes: none yet" + (f" (the preset's judge is {wanted})" if wanted else "")


def sources(db, options: ReportOptions) -> Sources:
    preset = options.preset
    protocol, problem = _protocol(preset, options.settings)
    if options.source not in (None, "arena") and options.source not in import_sources(db):
        raise LookupError(f"No votes from source {options.source!r}. Sources: "
                          f"{', '.join(['arena', *import_sources(db)])}; import the paper's labels with python -m "
                          "arena import-votes FILE --format taxonomy (source taxonomy).")
    found = Sources(preset, _clip_names(preset), protocol, problem, source=options.source,
                    clip_variant=options.variant or preset.get("report.variant") or WITH,
                    clip_variant_given=options.variant is not None)
    every = found.votes(db)
    found.judge, found.judge_note = _judge_voter(every, preset, options.settings)
    summary = [row for row in suites_summary(db) if row["suite"] == SUITE]
    found.present = {(row["subset"], row["variant"]) for row in summary}
    if options.source != "arena":
        found.present |= imported_slices(db, SUITE, options.source)
    concepts = sum(row["prompts"] for row in summary if row["variant"] == WITH)
    published = published_prompt_count(db, SUITE)
    from suites.taxonomy import reconstructed_subsets

    rebuilt = reconstructed_subsets(db)
    data = f"Data: suite taxonomy, {concepts} concepts with the definition"
    data += f" ({published} prompts imported from main_bench.csv)" if published else ""
    if rebuilt:
        data += (f"; subsets {', '.join(rebuilt)} built from WordNet by this project: a reconstruction, not the "
                 "published concepts")
    found.lines.append(data + ".")
    images = image_provenance(db, SUITE)
    if images:
        found.lines.append("Images: " + "; ".join(
            f"{row['model']} {row['images']} ({row['source']}" + (f", preset {row['presets']}" if row['presets'] else
                                                                  ", imported") + ")" for row in images) + ".")
    humans = {variant: int(found.votes(db, variant=variant).human.sum()) for variant in (WITH, WITHOUT)}
    by_source = ", ".join(f"{name} {n}" for name, n in vote_sources(every).items())
    found.lines.append(f"Votes: {humans[WITH]} human votes with the definition, {humans[WITHOUT]} without; "
                       f"{found.judge_note} (source {options.source or 'every source'}"
                       + (f": {by_source}" if by_source else "") + ").")
    if protocol is not None:
        choices = protocol.choices()
        found.lines.append(f"Ratings: protocol {protocol.name} ({choices['ties']}; {choices['bootstrap']}; "
                           f"{choices['rounding']}).")
    else:
        found.lines.append(f"Ratings: none ({problem}).")
    return found


def _pick_scorer(frame: pd.DataFrame, name: str, sources: Sources, wanted: Callable[[str], bool] = lambda s: True):
    """The rows of metric ``name`` from one scorer: those ``wanted`` accepts (the preset's), the one with most rows."""
    rows = frame[(frame["name"] == name) & frame["scorer"].map(wanted)]
    if rows.empty:
        return rows
    counts = rows.groupby("scorer")["n"].sum() if "n" in rows.columns else rows["scorer"].value_counts()
    scorer = sorted(counts.index, key=lambda s: (-counts[s], s))[0]
    sources.chosen[name] = scorer
    return rows[rows["scorer"] == scorer]


# --- building the tables ------------------------------------------------------------------------------------------


def vote_sources(arrays: VoteArrays) -> dict[str, int]:
    """Votes per source of ``arrays`` (the arena's own first), only sources with votes."""
    counts = np.bincount(arrays.source, minlength=len(arrays.sources) + 1)
    return {name: int(n) for name, n in zip(("arena", *arrays.sources), counts) if n}


def _models(db, found: Sources) -> list[str]:
    """Every model with an image or a vote in the suite."""
    names = {row["model"] for row in image_provenance(db, SUITE)}
    votes = found.votes(db)
    shown = np.union1d(votes.model_a, votes.model_b).astype(int)
    names |= {votes.models[i] for i in shown}
    return sorted(names)


def _table(number: str, title: str, columns: list[Column], models: list[str],
           cells: Callable[[str], dict[str, Cell]]) -> Table:
    table = Table(number, title, columns)
    for model in models:
        table.add_row(label_of(model), cells(model))
    return table


def elo_tables(db, models: list[str], found: Sources) -> tuple[list[Table], dict]:
    """Tables 3-6, and the fits behind them for Table 2: {(kind, variant, column key or 'Mean'): result table}."""
    fits: dict[tuple[str, ...], Any] = {}  # and {("reason", kind, variant, key): why there is no fit}
    specs = (("3", "judge", WITH, "ELO score for GPT Preferences for subsets with definition in input"),
             ("4", "judge", WITHOUT, "ELO score for GPT Preferences for subsets with no definition in input"),
             ("5", "human", WITH, "ELO score for Human Preferences for subsets with definition in input"),
             ("6", "human", WITHOUT, "ELO score for Human Preferences for subsets with no definition in input"))
    tables = []
    for number, kind, variant, title in specs:
        who = "GPT" if kind == "judge" else "human"
        reasons: dict[str, str] = {}
        of_variant = found.votes(db, variant=variant)
        everything = of_variant.take(of_variant.human if kind == "human" else of_variant.judge(found.judge))
        for key, subset in [(key, subset) for key, subset, _ in SUBSETS] + [("Mean", None)]:
            if found.protocol is None:
                reasons[key] = f"no ratings: {found.protocol_problem}"
            elif kind == "judge" and found.judge is None:
                reasons[key] = ("no judge votes yet: python -m judges pairwise --suite taxonomy --preset "
                                f"{found.preset.name}")
            elif found.absent_subset(subset, variant):
                reasons[key] = found.absent_subset(subset, variant)
            elif not len(everything):
                reasons[key] = (f"no human votes {variant.replace('_', ' ')} yet (vote in the arena, or import the "
                                "paper's labels: python -m arena import-votes FILE --format taxonomy)"
                                if kind == "human" else f"no votes of {found.judge} {variant.replace('_', ' ')}")
            else:
                part = everything if subset is None else everything.take(
                    everything.subset == (everything.subsets.index(subset) if subset in everything.subsets else -1))
                if not len(part):
                    reasons[key] = f"no {who} votes on {subset or 'any subset'} {variant.replace('_', ' ')}"
                else:
                    fits[(kind, variant, key)] = rate_flagged(found.protocol, part.encoded())
            if key in reasons:
                fits[("reason", kind, variant, key)] = reasons[key]
        table = Table(number, title, subset_columns())

        def cell(model: str, key: str, kind: str = kind, variant: str = variant, who: str = who,
                 reasons: dict[str, str] = reasons) -> Cell:  # this iteration's (it is called in it only)
            if key in reasons:
                return Cell.absent(reasons[key])
            fit = fits[(kind, variant, key)]
            if model not in fit.index or not fit.loc[model, "printed"]:
                return Cell.absent(f"{label_of(model)} has no {who} votes on {SUBSET_OF[key]} "
                                   f"{variant.replace('_', ' ')}" if model not in fit.index
                                   else f"{label_of(model)}: not rated")
            return Cell(marked(fit.loc[model]), float(fit.loc[model, "rating"]))

        for model in models:
            table.add_row(label_of(model), {key: cell(model, key) for key, _, _ in SUBSETS})
        if any(not c.is_missing and "(" not in c.text for _, cells in table.rows for c in cells.values()):
            table.notes.append("A rating without an interval: the model is missing from some bootstrap rounds (the "
                               "released arena_elo.py would stop there).")
        table.notes += runaway_notes({key: fits.get((kind, variant, key)) for key, _, _ in SUBSETS})
        tables.append(table)
    return tables, fits


def rate_flagged(protocol, votes) -> pd.DataFrame:
    """The protocol's result table of ``votes`` (indexed by model) with the fit's marks of ratings without a finite
    estimate (:mod:`ratings.divergence`): columns ``runaway``, ``lower_runaway``, ``upper_runaway`` (all False for a
    protocol whose fit always has one)."""
    fitted = protocol.fit(votes)
    table = protocol.result_table(votes, fitted)
    index = {model: i for i, model in enumerate(votes.models)}
    for column in ("runaway", "lower_runaway", "upper_runaway"):
        flags = getattr(fitted, column, None)
        table[column] = [bool(flags[index[m]]) if flags is not None else False for m in table["model"]]
    return table.set_index("model")


def marked(row: pd.Series) -> str:
    """A fit's printed rating with its marks: † after a rating that ran off, ‡ after a bound read from a bootstrap
    round without a finite estimate (``1125 (+61‡/-59) †``)."""
    text = row["printed"]
    if "(" in text and (row.get("upper_runaway") or row.get("lower_runaway")):
        head, _, rest = text.partition(" (+")
        up, _, down = rest.rstrip(")").partition("/-")
        text = (f"{head} (+{up}{BOUND_RUNAWAY if row.get('upper_runaway') else ''}"
                f"/-{down}{BOUND_RUNAWAY if row.get('lower_runaway') else ''})")
    return f"{text} {RUNAWAY}" if row.get("runaway") else text


def runaway_notes(fits: dict[str, pd.DataFrame | None]) -> list[str]:
    """The notes under an ELO table saying which columns' fits have no finite estimate and who ran off, and what ‡
    means (only when a cell carries the mark)."""
    notes, bounds = [], False
    for key, fit in fits.items():
        if fit is None or "runaway" not in fit:
            continue
        bounds = bounds or bool(fit["lower_runaway"].any() or fit["upper_runaway"].any())
        off = fit[fit["runaway"]]
        if off.empty:
            continue
        up = [label_of(m) for m, r in off["rating"].items() if r > 1000]
        down = [label_of(m) for m, r in off["rating"].items() if r <= 1000]
        said = "; ".join(part for part in (
            f"{' and '.join(up)} never lost a battle to the other models" if up else "",
            f"{' and '.join(down)} never won one" if down else "") if part)
        notes.append(f"{RUNAWAY} {key}: no finite estimate (the unpenalised fit): {said}; "
                     f"{'its rating' if len(off) == 1 else 'their ratings'} ran off where lbfgs stopped, and the "
                     "others are shifted with it (the ratings average 1000).")
    if bounds:
        notes.append(f"{BOUND_RUNAWAY} a bound read from bootstrap rounds without a finite estimate (a resample in "
                     "which some models won or lost every battle they had): where lbfgs stopped, not an estimate.")
    return notes


def _weighted(part: pd.DataFrame) -> dict[str, float]:
    """{model: mean over images} from per-slice means and counts."""
    out = {}
    for model, rows in part.groupby("model"):
        if rows["n"].sum():
            out[model] = float((rows["value"] * rows["n"]).sum() / rows["n"].sum())
    return out


def clip_variant_note(found: Sources) -> str:
    """Which images the CLIP tables read, where that choice came from, and how to print the other."""
    variant = found.clip_variant
    other = WITHOUT if variant == WITH else WITH
    chosen = found.preset.get("report.variant")
    why = ("--variant" if found.clip_variant_given else
           f"the preset {found.preset.name}'s report.variant" if chosen else
           f"the preset {found.preset.name} names no report.variant")
    if not found.clip_variant_given and chosen == WITHOUT:
        why += ": the printed tables are the means of the authors' main_clipscore_imageof.csv, these images"
    return (f"Images made {_variant_words(variant)} ({why}); the authors scored both variants: --variant {other} "
            f"prints the images made {_variant_words(other)}.")


def _variant_words(variant: str) -> str:
    return variant.replace("_", " the ")


def clip_means(db, found: Sources, variant: str) -> dict[str, pd.DataFrame]:
    """{role: the per-model, per-subset means (with counts) of the preset's CLIP metric of that role} on the images
    of ``variant``, one scorer each (:func:`_pick_scorer`)."""
    names = found.clip
    frame = image_metric_means(db, SUITE, names.values())
    frame = frame[frame["variant"] == variant]
    prefix_ok = (lambda scorer: "[prefix" not in scorer) if names["lemma"].startswith("clipscore") else (lambda s: True)
    return {role: _pick_scorer(frame, name, found, prefix_ok) for role, name in names.items()}


def clip_tables(db, models: list[str], found: Sources) -> list[Table]:
    """Tables 11-15 on the images of ``found.clip_variant``."""
    names = found.clip
    variant = found.clip_variant
    picked = clip_means(db, found, variant)
    scale = "CLIPScore" if names["lemma"].startswith("clipscore") else "raw cosine (the arena preset's clip metrics)"
    def missing(role: str, subset: str | None) -> str:
        return found.absent_subset(subset, variant) or (
            f"no {names[role]} rows on images made {_variant_words(variant)} yet: {found.hint()}"
            if picked[role].empty else
            f"no {names[role]} of this model on {subset or 'any subset'} images made {_variant_words(variant)}")
    tables = []
    for number, role, title in (("11", "hypernym", "Hypernym CLIPScore Across Different Subsets"),
                                ("12", "lemma", "Lemma CLIPScore Across Different Subsets"),
                                ("14", "specificity", "Specificity Scores Across Different Models and Subsets"),
                                ("15", "cohyponym", "Cohyponym CLIPScore Across Different Subsets")):
        rows = picked[role]
        values = {(r.model, r.subset): r.value for r in rows.itertuples()}

        def cells(model: str, role=role, values=values) -> dict[str, Cell]:
            return {key: Cell.number(values.get((model, subset)), reason=missing(role, subset))
                    for key, subset, _ in SUBSETS}

        table = _table(number, title, subset_columns(predicted_prefix=number != "12"), models, cells)
        table.notes.append(f"{names[role]} ({scale}), mean per model and subset. {clip_variant_note(found)}")
        tables.append(table)
    summary = Table("13", "Summary of CLIPscore Metrics Across Models",
                    [Column("lemma", "CLIP-Score"), Column("hypernym", "Hypernym CLIP-Score"),
                     Column("cohyponym", "Cohyponym CLIP-Score"), Column("specificity", "Specificity")])
    overall = {role: _weighted(picked[role]) for role in names}
    for model in models:
        summary.add_row(label_of(model), {role: Cell.number(overall[role].get(model), reason=missing(role, None))
                                          for role in names})
    summary.notes.append(f"Means over every subset's images made {_variant_words(variant)} ({scale}). "
                         + clip_variant_note(found))
    return sorted(tables + [summary], key=lambda t: int(t.number))


def fid_is_rows(db) -> pd.DataFrame:
    """The suite's model-level FID and IS rows."""
    return pd.DataFrame(model_level_rows(db, ("fid", "inception_score"), suite=SUITE),
                        columns=["model", "name", "scorer", "scorer_version", "suite", "subset", "variant", "value",
                                 "details"])


def fid_is_values(db, found: Sources) -> dict[tuple[str, str, str, str], float]:
    """{(fid | inception_score, model, subset, variant): value} of the per-slice rows (``--fid-is-slices paper``), one
    scorer per metric (the one with the most rows)."""
    rows = fid_is_rows(db)
    sliced = rows[rows["variant"] != ""]
    value: dict[tuple[str, str, str, str], float] = {}
    for name in ("fid", "inception_score"):
        part = sliced[sliced["name"] == name]
        if part.empty:
            continue
        counts = part["scorer"].value_counts()
        scorer = sorted(counts.index, key=lambda s: (-counts[s], s))[0]
        found.chosen[name] = scorer
        for r in part[part["scorer"] == scorer].itertuples():
            value[(name, r.model, r.subset, r.variant)] = r.value
    return value


def fid_is_tables(db, models: list[str], found: Sources) -> list[Table]:
    """Tables 7-10 from the model-level rows of ``--fid-is-slices paper``."""
    rows = fid_is_rows(db)
    sliced = rows[rows["variant"] != ""]
    value = fid_is_values(db, found)
    reference = found.preset.get("metrics.option.fid_reference", "retrieval")
    has = {name: any(key[0] == name for key in value) for name in ("fid", "inception_score")}
    has_reference = any(row["model"] == reference for row in image_provenance(db, SUITE))

    def reason(name: str, subset: str, variant: str) -> str:
        label = "FID" if name == "fid" else "IS"
        if found.absent_subset(subset or None, variant):
            return found.absent_subset(subset or None, variant)
        if name == "fid" and not has_reference:
            return (f"no {reference} images, FID's reference set: import them (python -m arena import-images "
                    f"FOLDER --suite taxonomy), then {found.hint()}")
        if not has[name]:
            return f"no {label} per subset and variant yet: {found.hint()} (--fid-is-slices paper)"
        return f"no {label} of this model on {subset or 'the full set'} {variant.replace('_', ' ')} (too few images?)"

    def cell(name: str, model: str, subset: str, variant: str, template: str) -> Cell:
        if name == "fid" and model == reference:
            return Cell.absent(f"{label_of(model)} is FID's reference set (the paper prints -)")
        return Cell.number(value.get((name, model, subset, variant)), template, reason=reason(name, subset, variant))

    seven = Table("7", "FID and IS metrics for different models on the full dataset without repetitions",
                  [Column("IS", "Inception Score"), Column("FID", "FID")])
    eight = Table("8", "Comparing FID and IS for datasets with and without definition",
                  [Column("IS def", "def", "IS"), Column("IS no_def", "no_def", "IS"),
                   Column("FID def", "def", "FID"), Column("FID no_def", "no_def", "FID")])
    nine = Table("9", "Inception Score per subsets with definitions",
                 subset_columns(("Hypo", "Hyper", "Mix", "Easy", "P-Hypo", "P-Hyper", "P-Mix", "P-Easy"), False))
    ten = Table("10", "Fréchet Inception Distance Score per subsets with definitions",
                subset_columns(("Hypo", "Hyper", "Mix", "Easy", "P-Hypo", "P-Hyper", "P-Mix", "P-Easy"), False))
    for model in models:
        label = label_of(model)
        seven.add_row(label, IS=cell("inception_score", model, "", WITH, "{:.1f}"),
                      FID=cell("fid", model, "", WITH, "{:.0f}"))
        eight.add_row(label, {"IS def": cell("inception_score", model, "", WITH, "{:.1f}"),
                              "IS no_def": cell("inception_score", model, "", WITHOUT, "{:.1f}"),
                              "FID def": cell("fid", model, "", WITH, "{:.0f}"),
                              "FID no_def": cell("fid", model, "", WITHOUT, "{:.0f}")})
        nine.add_row(label, {key: cell("inception_score", model, SUBSET_OF[key], WITH, "{:.1f}")
                             for key, _, _ in SUBSETS})
        if model != reference:
            ten.add_row(label, {key: cell("fid", model, SUBSET_OF[key], WITH, "{:.0f}") for key, _, _ in SUBSETS})
    seven.notes.append("The deduplicated full set with the definition (Table 7's numbers are Table 8's def columns).")
    per_subset = sliced[(sliced["name"] == "fid") & (sliced["subset"] != "")]
    sets = {details.get("reference_set", "subset") for details in per_subset["details"]}
    if sets:
        ten.notes.append("FID's real set on each subset: " + " and ".join(
            "the whole deduplicated retrieval set, as the authors' fid_is_subsets.py" if s == "full" else
            "the subset's own retrieval images (--fid-subset-reference subset)" for s in sorted(sets)) + ".")
    pooled = rows[(rows["variant"] == "") & (rows["subset"] == "")]
    if not pooled.empty and sliced.empty:
        seven.notes.append("Only pooled FID/IS rows (over both variants) are in the database; they are not these "
                           "tables' slices.")
    return [seven, eight, nine, ten]


def reward_values(db, found: Sources) -> pd.DataFrame:
    """Per-image rewards of the preset's reward scorer: image_id, model, subset, variant, value."""
    lemma = found.preset.get("metrics.option.reward_prompt", "text") == "lemma"
    frame = image_metric_frame(db, "reward", suite=SUITE).dropna(subset=["value"])
    frame = frame[frame["scorer"].str.endswith(":lemma-prompt") == lemma]
    if frame.empty:
        return frame
    counts = frame["scorer"].value_counts()
    scorer = sorted(counts.index, key=lambda s: (-counts[s], s))[0]
    found.chosen["reward"] = scorer
    return frame[frame["scorer"] == scorer]


def mann_whitney_table(models: list[str], rewards: pd.DataFrame, found: Sources) -> Table:
    """Table 16 from the rewards of the images made with the definition."""
    from scipy.stats import mannwhitneyu

    order = ["SDXL-turbo", "Retrieval", "SD1.5", "HDiT", "Playground", "Openjourney", "Kandinsky3", "SDXL", "PixArt",
             "DeepFloyd", "SD3", "FLUX"]
    ranked = sorted(models, key=lambda m: (order.index(label_of(m)) if label_of(m) in order else len(order), m))
    table = Table("16", "P-value of Mann-Whitney mean differences test in rewards for models. Values below 0.000 are "
                  "marked as 0", [Column(label_of(m)) for m in ranked])
    samples = {model: group["value"].to_numpy(dtype=float)
               for model, group in rewards[rewards["variant"] == WITH].groupby("model")}
    for a in ranked:
        cells = {}
        for b in ranked:
            if a == b:
                cells[label_of(b)] = Cell.absent("a model is not compared with itself (the paper prints 0)")
            elif not samples:
                cells[label_of(b)] = Cell.absent(f"no rewards of the preset's reward scorer yet: {found.hint()}")
            elif a not in samples or b not in samples:
                cells[label_of(b)] = Cell.absent(f"no rewards of {label_of(a if a not in samples else b)} on "
                                                 "images made with the definition")
            else:
                p = float(mannwhitneyu(samples[a], samples[b], alternative="two-sided").pvalue)
                cells[label_of(b)] = Cell(strip_zeros(f"{p:.3f}"), p)
        table.add_row(label_of(a), cells)
    table.row_header = ""
    return table


# --- Table 2 ------------------------------------------------------------------------------------------------------


def top_models(values: dict[str, float], *, higher: bool = True) -> list[str]:
    """The best-valued models (ties kept): ``values`` as printed, so ties are at the printed precision."""
    if not values:
        return []
    best = max(values.values()) if higher else min(values.values())
    return sorted(model for model, value in values.items() if value == best)


def top_text(winners: list[str]) -> str:
    """Table 2's wording: one model, two with a slash, "Draw" for more than two."""
    return "Draw" if len(winners) > 2 else " / ".join(winners)


def _printed_values(table: Table, column: str, parse: Callable[[str], float]) -> dict[str, float]:
    return {label: parse(cells[column].text) for label, cells in table.rows
            if column in cells and not cells[column].is_missing}


def summary_table(tables: dict[str, Table], fits: dict, rewards: pd.DataFrame, found: Sources) -> Table:
    columns = [Column("Mean", "Mean")] + subset_columns()
    table = Table("2", "Summary of the Top-1 model for each metric and subset", columns, row_header="Metric")

    def elo_row(kind: str, variant: str) -> dict[str, Cell]:
        cells = {}
        for key in ["Mean"] + [k for k, _, _ in SUBSETS]:
            fit = fits.get((kind, variant, key))
            if fit is None or fit["rating"].isna().all():
                cells[key] = Cell.absent(fits.get(("reason", kind, variant, key), "no model rated (see Tables 3-6)"))
                continue
            rated = fit.dropna(subset=["rating"])
            printed = {label_of(m): float(r) for m, r in rated["rating"].items()}
            winners = top_models(printed)
            text = top_text(winners)
            ordered = rated.sort_values("rating", ascending=False)
            if len(winners) == 1 and len(ordered) > 1 and ordered["rating"].iloc[1] >= ordered["lower"].iloc[0]:
                text += "*"  # the runner-up lies inside the top model's interval
            cells[key] = Cell(text, winners)
        return cells

    def reward_row(variant: str) -> dict[str, Cell]:
        part = rewards[rewards["variant"] == variant] if len(rewards) else rewards
        cells = {}
        for key, subset in [("Mean", None)] + [(k, s) for k, s, _ in SUBSETS]:
            rows = part if subset is None or part.empty else part[part["subset"] == subset]
            if rows.empty:
                cells[key] = Cell.absent(found.absent_subset(subset, variant) or (
                    f"no rewards of the preset's reward scorer yet: {found.hint()}" if rewards.empty else
                    f"no rewards on {subset or 'any subset'} {variant.replace('_', ' ')}"))
                continue
            means = {label_of(m): round(float(v), 2) for m, v in rows.groupby("model")["value"].mean().items()}
            winners = top_models(means)
            cells[key] = Cell(top_text(winners), winners)
        return cells

    def from_table(number: str, mean: tuple[str, str] | None, higher: bool = True) -> dict[str, Cell]:
        source = tables[number]
        cells = {}
        for key in ["Mean"] + [k for k, _, _ in SUBSETS]:
            if key == "Mean":
                if mean is None:
                    continue
                values = _printed_values(tables[mean[0]], mean[1], float)
            else:
                values = _printed_values(source, key, float)
            winners = top_models(values, higher=higher)
            if winners:
                cells[key] = Cell(top_text(winners), winners)
                continue
            origin, column = (tables[mean[0]], mean[1]) if key == "Mean" and mean is not None else (source, key)
            why = next((cells_[column].missing for _, cells_ in origin.rows if column in cells_
                        and cells_[column].missing), f"Table {origin.number} has no value in this column")
            cells[key] = Cell.absent(why)
        return cells

    table.add_row("ELO GPT (w/ def)", elo_row("judge", WITH))
    table.add_row("ELO GPT (w/o def)", elo_row("judge", WITHOUT))
    table.add_row("ELO Human (w/ def)", elo_row("human", WITH))
    table.add_row("ELO Human (w/o def)", elo_row("human", WITHOUT))
    table.add_row("Reward Model (w/ def)", reward_row(WITH))
    table.add_row("Reward Model (w/o def)", reward_row(WITHOUT))
    table.add_row("Lemma Similarity", from_table("12", ("13", "lemma")))
    table.add_row("Hypemym Similarity", from_table("11", ("13", "hypernym")))
    table.add_row("Cohyposyms Similarity", from_table("15", ("13", "cohyponym")))
    table.add_row("Specificity", from_table("14", ("13", "specificity")))
    table.add_row("FID", from_table("10", ("7", "FID"), higher=False))
    table.add_row("IS", from_table("9", ("7", "IS")))
    table.notes.append("Ties at the printed precision: two models with a slash, more than two 'Draw'; * marks an ELO "
                       "top whose runner-up lies inside its 95% interval. The ELO Mean is one fit over every subset "
                       "of the variant; Reward rows rank the mean reward (two decimals). Row names as the paper "
                       "prints them.")
    return table


def build(db, options: ReportOptions) -> Report:
    found = sources(db, options)
    models = _models(db, found)
    elo, fits = elo_tables(db, models, found)
    rewards = reward_values(db, found)
    tables = {table.number: table for table in [*elo, *fid_is_tables(db, models, found),
                                               *clip_tables(db, models, found)]}
    tables["16"] = mann_whitney_table(models, rewards, found)
    tables["2"] = summary_table(tables, fits, rewards, found)
    if found.chosen:
        versions = scorer_versions(db, SUITE, found.chosen)
        found.lines.append("Metrics: " + "; ".join(
            f"{name} by {scorer}" + (f" ({versions[(name, scorer)]})" if versions.get((name, scorer)) else "")
            for name, scorer in sorted(found.chosen.items())) + ".")
    else:
        found.lines.append(f"Metrics: none yet ({found.hint()}).")
    for number in ("5", "6"):
        gpt = "3" if number == "5" else "4"
        rhos = spearman_by_subset(tables[gpt], tables[number])
        if rhos:
            tables[number].notes.append("Spearman ρ of the human and GPT ratings per subset (Figure 4's comparison, "
                                        "per subset): " + ", ".join(f"{k} {v:.2f}" for k, v in rhos.items()) + ".")
    ordered = [tables[n] for n in sorted(tables, key=int)] + analyses(db, models, found, fits, rewards)
    return Report("taxonomy", "Taxonomy image generation benchmark (Tables 2-16, Figures 4, 6, 8, 9, §4.2)", ordered,
                  provenance=found.lines)


def analyses(db, models: list[str], found: Sources, fits: dict, rewards: pd.DataFrame) -> list[Table]:
    """Figures 4, 6, 8 and 9 and Table R (:mod:`arena.reports.taxonomy_analyses`) from the fits behind Tables 3-6
    and the metrics behind Tables 7-16."""
    from arena.reports import taxonomy_analyses as more

    protocol = found.protocol.name if found.protocol is not None else "none"
    figures = {}
    for number, variant, words, paper in (("F4", WITH, "The prompt includes the definition", "0.92 (Figure 4's "
                                           "caption; §5 says 0.88)"),
                                          ("F8", WITHOUT, "Prompt did not include the definition", "0.73")):
        figures[number] = more.pooled_figure(
            number, f"Figure {number[1:]}: ELO scores for human and GPT4 preferences. {words}.", variant, fits,
            models, label_of, marked, paper, protocol)
        figures[number].notes += runaway_notes({f"{who} {variant.replace('_', ' ')}": fits.get((kind, variant, "Mean"))
                                                for kind, who in (("human", "Human"), ("judge", "GPT-4"))})
    figures["F9"] = more.qwen_figure(fits, models, label_of, marked, found.preset.name)
    votes, reasons = {}, {}
    for variant in (WITH, WITHOUT):
        of_variant = found.votes(db, variant=variant)
        votes[("human", variant)] = of_variant.take(of_variant.human)
        votes[("judge", variant)] = (of_variant.take(of_variant.judge(found.judge)) if found.judge else
                                     of_variant.take(np.zeros(len(of_variant), dtype=bool)))
    reasons["human"] = "no human votes in this variant (vote, or import the paper's labels)"
    reasons["judge"] = (f"no votes of {found.judge} in this variant" if found.judge else
                        f"no judge votes yet: python -m judges pairwise --suite taxonomy --preset {found.preset.name}")
    figures["F6"] = more.definition_wins_figure(votes, models, label_of, reasons)
    values, why = correlation_measures(db, found, fits, rewards)
    return [figures["F4"], figures["F6"], figures["F8"], figures["F9"], more.correlation_table(fits, values, why)]


def correlation_measures(db, found: Sources, fits: dict, rewards: pd.DataFrame
                         ) -> tuple[dict[tuple[str, str], dict[str, float]], dict[tuple[str, str], str]]:
    """Table R's measures per system and variant ({(measure, variant): {model: value}}, lower-is-better turned), and
    why one is missing."""
    values: dict[tuple[str, str], dict[str, float]] = {}
    reasons: dict[tuple[str, str], str] = {}
    fid_is = fid_is_values(db, found)
    roles = {"Lemma CLIPScore": "lemma", "Hypernym CLIPScore": "hypernym", "Cohyponym CLIPScore": "cohyponym",
             "Specificity": "specificity"}
    for variant in (WITH, WITHOUT):
        words = _variant_words(variant)
        fit = fits.get(("judge", variant, "Mean"))
        values[("GPT-4 ELO", variant)] = ({} if fit is None else
                                         {m: float(r) for m, r in fit["rating"].items() if np.isfinite(r)})
        reasons[("GPT-4 ELO", variant)] = fits.get(("reason", "judge", variant, "Mean"), "no GPT-4 votes")
        part = rewards[rewards["variant"] == variant] if len(rewards) else rewards
        values[("Reward", variant)] = ({} if part.empty else
                                       {m: float(v) for m, v in part.groupby("model")["value"].mean().items()})
        reasons[("Reward", variant)] = (f"no rewards of the preset's reward scorer on images made {words}: "
                                        f"{found.hint()}")
        picked = clip_means(db, found, variant)
        for measure, role in roles.items():
            values[(measure, variant)] = _weighted(picked[role]) if not picked[role].empty else {}
            reasons[(measure, variant)] = f"no {found.clip[role]} rows on images made {words}: {found.hint()}"
        values[("FID", variant)] = {m: -v for (name, m, subset, v_), v in fid_is.items()
                                    if name == "fid" and not subset and v_ == variant}
        values[("IS", variant)] = {m: v for (name, m, subset, v_), v in fid_is.items()
                                   if name == "inception_score" and not subset and v_ == variant}
        for measure in ("FID", "IS"):
            reasons[(measure, variant)] = (f"no {measure} on the full set {words}: {found.hint()} "
                                           "(--fid-is-slices paper)")
    return values, reasons


def spearman_by_subset(first: Table, second: Table) -> dict[str, float]:
    """Spearman's ρ between two ELO tables' printed scores, per column with at least three models in both."""
    from scipy.stats import spearmanr

    out = {}
    for column in first.columns:
        a = _printed_values(first, column.key, lambda text: float(text.split()[0]))
        b = _printed_values(second, column.key, lambda text: float(text.split()[0]))
        shared = sorted(set(a) & set(b))
        if len(shared) >= 3:
            out[column.key] = float(spearmanr([a[m] for m in shared], [b[m] for m in shared])[0])
    return out


REPORTS.register(ReportSpec("taxonomy", "the taxonomy image generation paper's Tables 2-16", build,
                    preset="taxonomy-paper", variants=(WITH, WITHOUT)))
