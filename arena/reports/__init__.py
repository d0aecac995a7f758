"""``python -m arena report <benchmark>``: a paper's tables filled from the database, in the paper's layout.

A report is a list of :class:`Table` s; a paper's figure is a table too (its data, numbered ``F5``) with a ``plot`` that
draws it, written as an HTML file by ``--figures DIR`` (:func:`write_figures`). Each table has the paper's number and
title, its row header, its columns (:class:`Column`, with the paper's column groups such as "Ground Truth" /
"Predicted") and its rows of :class:`Cell` s. A cell holds the printed text of a value, or is missing: it then prints
"—" with a footnote giving the reason ("no human votes on P-Mix with the definition", ...), numbered per table. The
report's header says which preset (protocol) made it and from which data (:attr:`Report.provenance`).

Output: Markdown (default), CSV, LaTeX or JSON (:func:`render`). With ``--compare-published`` each cell also prints the
paper's own value for the same table, row and column, read from the paper's published numbers, kept as data in
``arena/reports/published/<report>.csv`` (columns ``table, row, column, value``: one printed number per line, as
the paper prints it, with the table it comes from). Rows the paper has and the database lacks are then listed too,
their cells "—", so the paper's whole table is visible.

Declaring a report (one module of this package per benchmark, listed in :data:`REPORTS`' built-ins, or a plug-in's
module named by an entry point of the group ``t2i_arena.reports``)::

    # arena/reports/semvarbench.py
    from arena.reports import REPORTS, Cell, Column, Report, ReportSpec, Table

    def build(db, options) -> Report:
        table = Table("2", "SemVarEffect per model", columns=[Column("kappa", "κ")], row_header="Model")
        for model, kappa in read_kappas(db):                      # a datamodel/judges query
            table.add_row(model, kappa=Cell.number(kappa, "{:.3f}") if kappa is not None
                          else Cell.missing("no judgments of this model yet: run python -m judges semvar"))
        return Report("semvarbench", "SemVarBench (Zhu et al.)", tables=[table],
                      provenance=[f"judge votes: ..."])

    REPORTS.register(ReportSpec("semvarbench", "SemVarBench tables 2, 7, 9, 10, 14", build, preset="semvarbench-paper"))

and put the paper's numbers in ``arena/reports/published/semvarbench.csv``. The row and column keys of a table are
the ones its cells use (the column ``key``; the row label), so compare mode finds the paper's value by them.
:class:`ReportOptions` carries the preset (``options.preset``, a :class:`core.presets.Preset`) the user chose
(default: the report's own published preset) and the settings.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.presets import Preset
from core.registry import Registry

PUBLISHED_DIR = Path(__file__).parent / "published"
MISSING = "—"
FORMATS = ("markdown", "csv", "latex")


@dataclass(frozen=True)
class Cell:
    """A table cell: ``text`` as printed (empty for a missing value), ``value`` the number behind it (for ranking
    and tests), ``missing`` the reason there is no value (printed as a footnote)."""

    text: str = ""
    value: Any = None
    missing: str = ""
    paper: str | None = None  # the paper's printed value beside it (``--compare-published``), if any

    @classmethod
    def number(cls, value: float | None, template: str = "{:.2f}", reason: str = "no data") -> Cell:
        """``value`` printed with ``template`` (``"{:.2f}"``, ``"{:d}"``), or a missing cell with ``reason``."""
        if value is None or value != value:  # None or NaN
            return cls.absent(reason)
        return cls(template.format(value), value)

    @classmethod
    def absent(cls, reason: str) -> Cell:
        """A missing value and why ("no judge votes yet: run python -m judges pairwise --preset ...")."""
        return cls("", None, reason)

    @property
    def is_missing(self) -> bool:
        return bool(self.missing) or not self.text


@dataclass(frozen=True)
class Column:
    """A column: ``key`` (what cells and the published data file call it), ``label`` as printed, ``group`` the
    heading spanning several columns ("Ground Truth")."""

    key: str
    label: str = ""
    group: str = ""

    @property
    def heading(self) -> str:
        return self.label or self.key


@dataclass
class Table:
    """One of the paper's tables: ``number`` ("3"), ``title`` (its caption), ``columns``, and rows of cells."""

    number: str
    title: str
    columns: list[Column]
    row_header: str = "Model"
    rows: list[tuple[str, dict[str, Cell]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines printed under the table (what the cells mean)
    # a figure's plot: a function returning a plotly figure drawn from this table's data (None: no data to draw);
    # the table is the figure's data, and ``python -m arena report --figures DIR`` writes the plot beside it
    plot: Callable[[], Any] | None = field(default=None, repr=False, compare=False)

    def add_row(self, label: str, cells: Mapping[str, Cell] | None = None, **by_key: Cell) -> None:
        """A row ``label`` with ``cells`` {column key: cell}; columns without a cell print "—" ("no data")."""
        self.rows.append((label, {**(cells or {}), **by_key}))

    def cell(self, row: str, column: str) -> Cell:
        """The cell of ``row`` and ``column`` (a missing "no data" cell when there is none)."""
        for label, cells in self.rows:
            if label == row:
                return cells.get(column, Cell.absent("no data"))
        raise KeyError(f"table {self.number} has no row {row!r}")

    def row_labels(self) -> list[str]:
        return [label for label, _ in self.rows]


@dataclass
class Report:
    """A benchmark's report: its tables and the lines saying which protocol and which data made it."""

    name: str
    title: str
    tables: list[Table]
    provenance: list[str] = field(default_factory=list)

    def table(self, number: str) -> Table:
        for table in self.tables:
            if table.number == number:
                return table
        raise KeyError(f"report {self.name} has no table {number}")


@dataclass(frozen=True)
class ReportOptions:
    """What a report's ``build`` gets besides the database: the preset (protocol) chosen, and the settings."""

    preset: Preset
    settings: Any = None
    source: str | None = None  # the votes a report rates: None every vote, "arena" the arena's own, else one import
    variant: str | None = None  # the prompt variant of the tables the paper leaves open (None: the preset's)


@dataclass(frozen=True)
class ReportSpec:
    """One report: ``name`` (``python -m arena report NAME``), a one-line ``title``, ``build(db, options)`` returning
    a :class:`Report`, its default ``preset`` (the paper's), and the published numbers' file name in
    :data:`PUBLISHED_DIR` (default ``<name>.csv``)."""

    name: str
    title: str
    build: Callable[[Any, ReportOptions], Report]
    preset: str
    published: str = ""
    variants: tuple[str, ...] = ()  # what ``--variant`` may pick for the tables whose variant the paper leaves open

    @property
    def published_path(self) -> Path:
        return PUBLISHED_DIR / (self.published or f"{self.name}.csv")


REPORTS = Registry[ReportSpec]("reports", tuple(f"arena.reports.{module}" for module in (
    "commonsense", "consistency", "saneval", "semvarbench", "taxonomy",
)), what="report")


# --- published numbers -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    """A paper's printed numbers: {(table, row, column): printed text}, in the file's order."""

    path: Path
    values: Mapping[tuple[str, str, str], str]

    def get(self, table: str, row: str, column: str) -> str | None:
        return self.values.get((table, row, column))

    def rows(self, table: str) -> list[str]:
        """The row labels the paper prints in ``table``, in its order."""
        return list(dict.fromkeys(r for t, r, _ in self.values if t == table))

    def table(self, table: str) -> dict[tuple[str, str], str]:
        """{(row, column): printed text} of one table."""
        return {(r, c): v for (t, r, c), v in self.values.items() if t == table}


def read_published(path: str | Path) -> Published:
    """The published numbers file (``table, row, column, value``); a malformed line names the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no published numbers for this report (a CSV with columns table, row, "
                                "column, value).")
    values: dict[tuple[str, str, str], str] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != ["table", "row", "column", "value"]:
            raise ValueError(f"{path}:1: the header must be table,row,column,value, not {reader.fieldnames}.")
        for line, record in enumerate(reader, start=2):
            key = (record["table"], record["row"], record["column"])
            if not all(key) or record["value"] in (None, ""):
                raise ValueError(f"{path}:{line}: every line needs a table, row, column and value.")
            if key in values:
                raise ValueError(f"{path}:{line}: table {key[0]} row {key[1]!r} column {key[2]!r} is given twice.")
            values[key] = record["value"]
    return Published(path, values)


def paper_number(text: str | None) -> float | None:
    """The number a paper's printed value starts with ("1125 (+61/-59)" -> 1125.0, "0.55" -> 0.55), else None."""
    try:
        return float((text or "").split()[0].rstrip("%"))
    except (ValueError, IndexError):
        return None


def rank_agreement(rows: list[tuple[str, dict[str, Cell]]], columns: list[Column]) -> dict[str, tuple[float, int]]:
    """{column key: (Spearman ρ, rows)} between this database's numbers and the paper's, for each column where at
    least three rows have both (scipy's ``spearmanr``, average ranks for ties)."""
    from scipy.stats import spearmanr

    found = {}
    for column in columns:
        pairs = [(float(cell.value), paper_number(cell.paper)) for _, cells in rows
                 for cell in [cells.get(column.key)] if cell is not None and not cell.is_missing and cell.paper
                 and isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool)
                 and paper_number(cell.paper) is not None]
        if len(pairs) >= 3 and len({p[0] for p in pairs}) > 1 and len({p[1] for p in pairs}) > 1:
            rho = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
            found[column.key] = (float(rho), len(pairs))
    return found


def with_published(report: Report, published: Published) -> Report:
    """The report with each cell's text followed by the paper's value, and the paper's rows the report lacks."""
    tables = []
    for table in report.tables:
        paper = published.table(table.number)
        rows = []
        labels = table.row_labels() + [r for r in published.rows(table.number) if r not in table.row_labels()]
        for label in labels:
            known = label in table.row_labels()
            ours = dict(next((cells for row, cells in table.rows if row == label), {}))
            cells = {}
            for column in table.columns:
                cell = ours.get(column.key) or Cell.absent("no data" if known else "not in this database")
                value = paper.get((label, column.key))
                if value is not None:
                    mine = MISSING if cell.is_missing else cell.text
                    cell = Cell(f"{mine} (paper {value})", cell.value, cell.missing, paper=value)
                cells[column.key] = cell
            rows.append((label, cells))
        compared = ["Each cell: this database's value, then the paper's (paper ...)."] if paper else []
        agreement = rank_agreement(rows, table.columns)
        if agreement:
            compared.append("Rank agreement with the paper, Spearman ρ over the rows both give, per column: "
                            + ", ".join(f"{column} {rho:+.2f} ({n} rows)" for column, (rho, n) in agreement.items())
                            + ".")
        tables.append(Table(table.number, table.title, table.columns, table.row_header, rows, table.notes + compared,
                            plot=table.plot))
    return Report(report.name, report.title, tables,
                  report.provenance + [f"Published values from {published.path.name}."])


# --- rendering ---------------------------------------------------------------------------------------------------


def _footnoted(table: Table) -> tuple[list[list[str]], list[str]]:
    """The table's body as text (missing cells as "—[n]"), and the footnotes, identical reasons sharing a number."""
    reasons: dict[str, int] = {}
    body = []
    for label, cells in table.rows:
        line = [label]
        for column in table.columns:
            cell = cells.get(column.key, Cell.absent("no data"))
            if cell.missing:
                number = reasons.setdefault(cell.missing, len(reasons) + 1)
                marker = f"{MISSING}[{number}]"
                line.append(f"{cell.text.replace(MISSING, marker, 1)}" if cell.text.startswith(MISSING) else
                            (f"{cell.text} [{number}]" if cell.text else marker))
            else:
                line.append(cell.text)
        body.append(line)
    notes = [f"[{number}] {reason}" for reason, number in reasons.items()]
    return body, notes


def _groups(table: Table) -> list[tuple[str, int]]:
    """(group heading, span) over the columns, for a two-line header."""
    spans: list[tuple[str, int]] = []
    for column in table.columns:
        if spans and spans[-1][0] == column.group:
            spans[-1] = (column.group, spans[-1][1] + 1)
        else:
            spans.append((column.group, 1))
    return spans


def _markdown_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(report: Report) -> str:
    lines = [f"# {report.title}", ""] + [f"- {line}" for line in report.provenance] + [""]
    for table in report.tables:
        body, notes = _footnoted(table)
        lines += [f"## Table {table.number}: {table.title}", ""]
        grouped = any(column.group for column in table.columns)
        if grouped:  # the paper's group headings as a first header line, the column labels as the second
            top = [""] + [group for group, span in _groups(table) for group in [group] + [""] * (span - 1)]
            lines.append("| " + " | ".join(map(_markdown_escape, top)) + " |")
            lines.append("|" + "---|" * (len(table.columns) + 1))
            lines.append("| " + " | ".join(f"**{_markdown_escape(t)}**" for t in
                                          [table.row_header] + [c.heading for c in table.columns]) + " |")
        else:
            lines.append("| " + " | ".join(map(_markdown_escape, [table.row_header] + [c.heading for c in
                                                                                      table.columns])) + " |")
            lines.append("|" + "---|" * (len(table.columns) + 1))
        lines += ["| " + " | ".join(map(_markdown_escape, row)) + " |" for row in body]
        if not body:
            lines.append("| (no rows) |" + " |" * len(table.columns))
        lines.append("")
        lines += [f"{note}  " for note in table.notes + notes]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_csv(report: Report) -> str:
    """Each table as a block: its title line, the header line(s), the rows, the footnotes, a blank line."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([report.title])
    for line in report.provenance:
        writer.writerow([line])
    writer.writerow([])
    for table in report.tables:
        body, notes = _footnoted(table)
        writer.writerow([f"Table {table.number}: {table.title}"])
        if any(column.group for column in table.columns):
            writer.writerow([""] + [column.group for column in table.columns])
        writer.writerow([table.row_header] + [column.heading for column in table.columns])
        writer.writerows(body)
        for note in table.notes + notes:
            writer.writerow([note])
        writer.writerow([])
    return out.getvalue()


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", MISSING: "---"}


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(char, char) for char in text)


def render_latex(report: Report) -> str:
    """One ``table`` environment per table (booktabs rules; group headings with \\multicolumn and \\cmidrule)."""
    lines = [f"% {report.title}"] + [f"% {_latex(line)}" for line in report.provenance] + [""]
    for table in report.tables:
        body, notes = _footnoted(table)
        lines += [r"\begin{table}[ht]", r"\centering", r"\begin{tabular}{l" + "c" * len(table.columns) + "}",
                  r"\toprule"]
        if any(column.group for column in table.columns):
            spans, rules, start = [""], [], 2
            for group, span in _groups(table):
                spans.append(rf"\multicolumn{{{span}}}{{c}}{{{_latex(group)}}}" if group else "")
                if group:
                    rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
                spans += [] if group else [""] * (span - 1)
                start += span
            lines.append(" & ".join(spans) + r" \\")
            lines.append(" ".join(rules))
        lines.append(" & ".join(_latex(t) for t in [table.row_header] + [c.heading for c in table.columns]) + r" \\")
        lines.append(r"\midrule")
        lines += [" & ".join(_latex(cell) for cell in row) + r" \\" for row in body]
        lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex(table.title)}}}",
                  rf"\label{{tab:{report.name}-{table.number}}}"]
        if table.notes or notes:
            lines += [r"\par\footnotesize"] + [_latex(note) + r"\\" for note in table.notes + notes]
        lines += [r"\end{table}", ""]
    return "\n".join(lines)


def render_json(report: Report) -> str:
    """The report as one JSON object, for scripts: ``{"name", "title", "provenance", "tables": [{"number", "title",
    "row_header", "columns": [{"key", "label", "group"}], "rows": [{"label", "cells": {key: {"text", "value",
    "missing", "paper"}}}], "notes"}]}``; a cell's ``value`` is the number behind it (null when missing), ``paper``
    the paper's printed value (with ``--compare-published``)."""
    import json

    def plain(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if hasattr(value, "item"):  # a numpy number
            value = value.item()
        return None if isinstance(value, float) and value != value else value

    tables = []
    for table in report.tables:
        rows = [{"label": label, "cells": {column.key: {
            "text": cell.text, "value": plain(cell.value), "missing": cell.missing or None, "paper": cell.paper}
            for column in table.columns for cell in [cells.get(column.key, Cell.absent("no data"))]}}
            for label, cells in table.rows]
        tables.append({"number": table.number, "title": table.title, "row_header": table.row_header,
                       "columns": [{"key": c.key, "label": c.heading, "group": c.group} for c in table.columns],
                       "rows": rows, "notes": table.notes})
    return json.dumps({"name": report.name, "title": report.title, "provenance": report.provenance,
                       "tables": tables}, indent=1, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[Report], str]] = {"markdown": render_markdown, "csv": render_csv,
                                                 "latex": render_latex, "json": render_json}


def render(report: Report, form: str = "markdown") -> str:
    if form not in RENDERERS:
        raise ValueError(f"unknown report format {form!r}; choose one of {', '.join(RENDERERS)}.")
    return RENDERERS[form](report)


def figure_path(folder: str | Path, report: Report, table: Table) -> Path:
    """Where a figure's plot goes: ``<folder>/<report>-<table number>.html`` (``commonsense-F5.html``)."""
    slug = "".join(c if c.isalnum() or c in "-." else "-" for c in table.number)
    return Path(folder) / f"{report.name}-{slug}.html"


def write_figures(report: Report, folder: str | Path) -> list[Path]:
    """Write the plot of every figure of ``report`` that has data (a plotly HTML page, plotly.js inside, so it
    opens offline) into ``folder``, and note under each figure's table where it went (or why none was written)."""
    written = []
    for table in report.tables:
        if table.plot is None:
            continue
        figure = table.plot()
        if figure is None:
            table.notes.append("Plot: none written (no data to draw yet).")
            continue
        path = figure_path(folder, report, table)
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.write_html(str(path), include_plotlyjs=True, full_html=True)
        table.notes.append(f"Plot: {path}")
        written.append(path)
    return written


def make_report(db, name: str, *, preset: Preset | None = None, settings: Any = None,
                compare_published: bool = False, source: str | None = None,
                figures: str | Path | None = None, variant: str | None = None) -> Report:
    """Build report ``name`` (with ``preset``, default the report's own; the votes of ``source``, default every vote,
    as the leaderboard reads them; ``variant``, one of the report's :attr:`ReportSpec.variants`, for the tables whose
    prompt variant the paper leaves open, default the preset's) and, if asked, set the paper's values beside ours;
    with ``figures``, write each figure's plot into that folder (:func:`write_figures`)."""
    from core.presets import get_preset

    spec = REPORTS[name]
    if variant is not None and variant not in spec.variants:
        raise ValueError(f"report {name} has no --variant {variant!r}: "
                         + (f"choose one of {', '.join(spec.variants)}." if spec.variants else
                            "its tables fix their prompt variants; leave out --variant."))
    chosen = preset or get_preset(spec.preset)
    report = spec.build(db, ReportOptions(chosen, settings, source, variant))
    report.provenance.insert(0, f"Protocol: preset {chosen.label()}" + (f", {chosen.title}" if chosen.title else ""))
    if compare_published:
        report = with_published(report, read_published(spec.published_path))
    if figures is not None:
        write_figures(report, figures)
    return report


def missing_cells(report: Report) -> Iterable[tuple[str, str, str, str]]:
    """(table, row, column, reason) of every missing cell: what a run still lacks."""
    for table in report.tables:
        for label, cells in table.rows:
            for column in table.columns:
                cell = cells.get(column.key, Cell.absent("no data"))
                if cell.is_missing:
                    yield table.number, label, column.key, cell.missing or "no data"
