"""The report framework: tables in a paper's layout, "—" with a footnote, three formats, the paper's values beside."""

from __future__ import annotations

import csv
import io

import pytest

from arena import reports
from arena.reports import Cell, Column, Report, ReportSpec, Table, make_report, read_published, render, with_published
from core.presets import PRESETS, Choice, Preset

PUBLISHED = "table,row,column,value\n3,Playground,Easy,1125 (+61/-59)\n3,Playground,Hypo,1139 (+137/-111)\n" \
            "3,FLUX,Easy,1013 (+65/-78)\n"


def toy_report(db, options) -> Report:
    table = Table("3", "ELO score for GPT preferences | with definition",
                  [Column("Easy", group="Ground Truth"), Column("Hypo", group="Ground Truth"),
                   Column("P-Easy", group="Predicted")])
    table.add_row("Playground", Easy=Cell.number(1125, "{:d}"), Hypo=Cell.absent("no judge votes on Hypo yet"))
    table.add_row("my-model", {"Easy": Cell.number(None, reason="no judge votes on Easy yet"),
                               "Hypo": Cell.absent("no judge votes on Hypo yet"),
                               "P-Easy": Cell.number(0.5, "{:.2f}")})
    summary = Table("13", "Summary", [Column("clip", "CLIP-Score")])
    summary.add_row("Playground", clip=Cell.number(0.70123))
    return Report("toy", "Toy paper", [table, summary], provenance=[f"data: toy, preset {options.preset.name}"])


@pytest.fixture
def toy(tmp_path, monkeypatch):
    published = tmp_path / "toy.csv"
    published.write_text(PUBLISHED, encoding="utf-8")
    monkeypatch.setattr(reports, "PUBLISHED_DIR", tmp_path)
    PRESETS.register(Preset(name="toy-report-paper", title="Toy protocol", report="toy",
                            choices={"report.name": Choice("toy", "toy Tables 3, 13")}))
    reports.REPORTS.register(ReportSpec("toy", "Toy tables", toy_report, preset="toy-report-paper"))
    yield
    reports.REPORTS.unregister("toy")
    PRESETS.unregister("toy-report-paper")


def test_missing_cells_print_a_dash_and_one_footnote_per_reason_in_markdown(toy):
    report = make_report(None, "toy")
    text = render(report)
    assert text.startswith("# Toy paper\n\n- Protocol: preset toy-report-paper (published protocol), Toy protocol\n"
                           "- data: toy, preset toy-report-paper\n")
    assert "## Table 3: ELO score for GPT preferences \\| with definition" not in text  # titles are not table cells
    assert "| | Ground Truth | | Predicted |" in text.replace("|  |", "| |")
    assert "| **Model** | **Easy** | **Hypo** | **P-Easy** |" in text
    assert "| Playground | 1125 | —[1] | —[2] |" in text
    assert "| my-model | —[3] | —[1] | 0.50 |" in text
    assert "[1] no judge votes on Hypo yet" in text and "[2] no data" in text
    assert "[3] no judge votes on Easy yet" in text
    assert "| Playground | 0.70 |" in text  # Table 13 has no groups: one header line
    assert list(reports.missing_cells(report)) == [
        ("3", "Playground", "Hypo", "no judge votes on Hypo yet"), ("3", "Playground", "P-Easy", "no data"),
        ("3", "my-model", "Easy", "no judge votes on Easy yet"),
        ("3", "my-model", "Hypo", "no judge votes on Hypo yet")]


def test_csv_keeps_the_two_header_lines_and_latex_groups_the_columns(toy):
    report = make_report(None, "toy")
    rows = list(csv.reader(io.StringIO(render(report, "csv"))))
    start = rows.index(["Table 3: ELO score for GPT preferences | with definition"])
    assert rows[start + 1] == ["", "Ground Truth", "Ground Truth", "Predicted"]
    assert rows[start + 2] == ["Model", "Easy", "Hypo", "P-Easy"]
    assert rows[start + 3] == ["Playground", "1125", "—[1]", "—[2]"]
    assert rows[start + 5] == ["[1] no judge votes on Hypo yet"]
    latex = render(report, "latex")
    assert r"& \multicolumn{2}{c}{Ground Truth} & \multicolumn{1}{c}{Predicted} \\" in latex
    assert r"\cmidrule(lr){2-3} \cmidrule(lr){4-4}" in latex
    assert r"Playground & 1125 & ---[1] & ---[2] \\" in latex
    assert r"\caption{ELO score for GPT preferences | with definition}" in latex
    assert r"my-model & ---[3] & ---[1] & 0.50 \\" in latex
    with pytest.raises(ValueError, match="unknown report format 'html'"):
        render(report, "html")


def test_compare_published_sets_the_papers_value_beside_each_cell_and_adds_its_rows(toy):
    report = make_report(None, "toy", compare_published=True)
    table = report.table("3")
    assert table.row_labels() == ["Playground", "my-model", "FLUX"]
    assert table.cell("Playground", "Easy").text == "1125 (paper 1125 (+61/-59))"
    assert table.cell("FLUX", "Easy").text == "— (paper 1013 (+65/-78))"
    text = render(report)
    assert "| Playground | 1125 (paper 1125 (+61/-59)) | —[1] (paper 1139 (+137/-111)) | —[2] |" in text
    assert "| my-model | —[3] | —[1] | 0.50 |" in text
    assert "| FLUX | —[4] (paper 1013 (+65/-78)) | —[4] | —[4] |" in text
    assert "[2] no data" in text and "[4] not in this database" in text
    assert text.count("Each cell: this database's value, then the paper's") == 1  # Table 13 has no paper values
    assert "- Published values from toy.csv." in text


def test_the_published_numbers_file_is_checked_line_by_line(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("table,row,column,value\n3,A,Easy,1\n3,A,Easy,2\n")
    with pytest.raises(ValueError, match=r"p.csv:3: table 3 row 'A' column 'Easy' is given twice"):
        read_published(path)
    path.write_text("table,row,col,value\n")
    with pytest.raises(ValueError, match=r"p.csv:1: the header must be table,row,column,value"):
        read_published(path)
    path.write_text("table,row,column,value\n3,A,,1\n")
    with pytest.raises(ValueError, match=r"p.csv:2: every line needs a table, row, column and value"):
        read_published(path)
    with pytest.raises(FileNotFoundError, match="no published numbers"):
        read_published(tmp_path / "none.csv")


def test_the_report_command_prints_each_format_writes_a_file_and_names_unknown_reports(toy, tmp_path, capsys,
                                                                                       monkeypatch):
    from arena.commands import main

    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(tmp_path / "media"))
    monkeypatch.setenv("ARENA_DEMO", "0")
    assert main(["report", "toy"]) == 0
    assert "| Playground | 1125 | —[1] | —[2] |" in capsys.readouterr().out
    assert main(["report", "toy", "--preset", "arena", "--format", "latex", "-o", str(tmp_path / "t.tex")]) == 0
    assert "Wrote Toy paper (2 tables, latex)" in capsys.readouterr().out
    assert "% - Protocol: preset arena (project defaults)" not in (tmp_path / "t.tex").read_text()
    assert "% Protocol: preset arena (project defaults)" in (tmp_path / "t.tex").read_text()
    assert main(["report", "nope"]) == 2
    assert "unknown report 'nope'; choices: commonsense, consistency, saneval, semvarbench, taxonomy, toy." in (
        capsys.readouterr().err)


def test_with_published_leaves_the_original_report_alone():
    table = Table("1", "t", [Column("a")])
    table.add_row("r", a=Cell.number(1.0))
    report = Report("x", "X", [table])
    from arena.reports import Published

    compared = with_published(report, Published(path=__import__("pathlib").Path("x.csv"),
                                                values={("1", "r", "a"): "1.00"}))
    assert compared.table("1").cell("r", "a").text == "1.00 (paper 1.00)"
    assert report.table("1").cell("r", "a").text == "1.00"


def test_the_taxonomy_report_reads_the_votes_once_per_variant(small_arena, monkeypatch):
    """Every table, note and count of the taxonomy report slices three reads of the suite's votes (every variant,
    with the definition, without it) in memory: before, each table read them again (10 reads a report)."""
    from support.votes import add_votes

    import arena.reports.taxonomy as taxonomy
    from datamodel import vote_arrays

    add_votes(small_arena)
    reads = []
    monkeypatch.setattr(taxonomy, "read_vote_arrays",
                        lambda *args, **kwargs: reads.append(kwargs) or vote_arrays.read_vote_arrays(*args, **kwargs))
    report = make_report(small_arena.db, "taxonomy")
    assert sorted(read.get("variant") or "" for read in reads) == ["", "with_definition", "without_definition"]
    assert any("human votes with the definition" in line for line in report.provenance)
