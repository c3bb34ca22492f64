"""Every CSV export neutralizes formula injection.

The world's texts, ids, system names and one judge's username start with ``=``,
``+``, ``-`` or ``@`` (conftest ``FORMULAS``), which Excel, LibreOffice and Google
Sheets run as formulas ("CSV injection", OWASP). Every CSV export endpoint (judging
tidy/wide, page and API; alignment links, page and API; alignment scoring tables;
metric scores, page and API; report tables, page, API and inside the ZIP; the
``export_judgments`` command) is downloaded as the study's researcher and parsed:
no cell may start with one of those characters (or a tab or carriage return)
unless it is a number, and where the export carries people's text the
neutralized cells (``'=…``) are really there — the check is not vacuous.

The ZIP's ``report.html`` and the report's LaTeX are checked too: no raw markup,
and the LaTeX specials of the texts are escaped.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from .conftest import RAW_MARKERS, login_client

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def check_csv(text: str, *, carries_text: bool, where: str) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) >= 2, f"{where}: no data rows"
    dangerous = [c for row in rows for c in row if c.startswith(FORMULA_START) and not _is_number(c)]
    assert dangerous == [], f"{where}: cells a spreadsheet would run: {dangerous[:5]}"
    if carries_text:
        neutralized = [c for row in rows for c in row if c.startswith("'") and c[1:2] in "=+-@"]
        assert neutralized, f"{where}: the hostile cells are missing, so nothing was checked"


def body(response) -> str:
    data = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
    return data.decode("utf-8")


@pytest.fixture
def owner(world, db):
    return login_client(world.users["owner"])


def _get(client, url: str, **extra):
    response = client.get(url, **extra)
    assert response.status_code == 200, f"{url}: {response.status_code} {response.content[:300]!r}"
    return response


@pytest.mark.parametrize("kind", ["tidy", "wide"])
def test_judging_exports_neutralize_formulas(owner, world, kind):
    s = world.study
    check_csv(body(_get(owner, f"/studies/{s}/judging/export/{kind}.csv")), carries_text=True, where=f"page {kind}")
    check_csv(
        body(_get(owner, f"/api/judging/studies/{s}/export/{kind}/", HTTP_ACCEPT="text/csv")),
        carries_text=True,
        where=f"API {kind}",
    )


def test_the_export_judgments_command_neutralizes_formulas(world, db):
    from django.core.management import call_command

    for fmt in ("tidy", "wide"):
        out = io.StringIO()
        call_command("export_judgments", study=str(world.study), format=fmt, stdout=out)
        check_csv(out.getvalue(), carries_text=True, where=f"command {fmt}")


def test_the_judges_username_is_neutralized_too(owner, world):
    text = body(_get(owner, f"/studies/{world.study}/judging/export/tidy.csv"))
    judges = {row["judge"] for row in csv.DictReader(io.StringIO(text))}
    assert "'@SUM-1+1" in judges and "@SUM-1+1" not in judges


@pytest.mark.parametrize("source", ["gold", "system"])
def test_alignment_link_exports_hold_no_formulas(owner, world, source):
    src = "gold" if source == "gold" else f"system:{world.alignment_system}"
    s = world.study
    check_csv(
        body(_get(owner, f"/studies/{s}/alignment/export/?source={src}&format=csv")),
        carries_text=False,
        where="alignment page",
    )
    check_csv(
        body(_get(owner, f"/api/alignment/studies/{s}/export/?source={src}&file_format=csv")),
        carries_text=False,
        where="alignment API",
    )


@pytest.mark.parametrize("table", ["summary", "by_length", "per_pair"])
def test_alignment_scoring_tables_neutralize_formulas(owner, world, table):
    text = body(_get(owner, f"/studies/{world.study}/alignment/scoring/{world.scoring_run}/export.csv?table={table}"))
    # per_pair carries the pair and group ids, which start with = + - @ in the world
    check_csv(text, carries_text=table == "per_pair", where=f"scoring {table}")


def test_metric_score_exports_neutralize_formulas(owner, world):
    s, r = world.study, world.metric_run
    check_csv(body(_get(owner, f"/studies/{s}/metrics/runs/{r}/export.csv")), carries_text=True, where="metrics page")
    check_csv(
        body(_get(owner, f"/api/studies/{s}/metric-runs/{r}/export/?export_format=csv")),
        carries_text=True,
        where="metrics API",
    )


def _report_tables(world):
    from metrics.reports.exports.tables import report_tables
    from metrics.reports.models import Report

    return [t.slug for t in report_tables(Report.objects.get(pk=world.report).result)]


def test_report_table_exports_neutralize_formulas(owner, world):
    if world.report is None:
        pytest.skip("the reports app is not installed")
    s, r = world.study, world.report
    slugs = _report_tables(world)
    texts = []
    for slug in slugs:
        page = body(_get(owner, f"/studies/{s}/reports/{r}/tables/{slug}.csv"))
        api = body(_get(owner, f"/api/studies/{s}/reports/{r}/export/tables/{slug}.csv"))
        assert page == api
        check_csv(page, carries_text=False, where=f"report table {slug}")
        texts.append(page)
    # The system ranking names the systems, one of which starts with '='.
    assert any("'=cmd" in t for t in texts)


def test_the_report_zip_holds_only_neutralized_csv_and_escaped_html(owner, world):
    if world.report is None:
        pytest.skip("the reports app is not installed")
    data = _get(owner, f"/api/studies/{world.study}/reports/{world.report}/export/zip/").content
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        csvs = [n for n in names if n.endswith(".csv")]
        assert len(csvs) == len(_report_tables(world))
        for name in csvs:
            check_csv(zf.read(name).decode("utf-8"), carries_text=False, where=name)
        html = zf.read(next(n for n in names if n.endswith("report.html"))).decode("utf-8")
        tex = zf.read(next(n for n in names if n.endswith("report.tex"))).decode("utf-8")
    # The HTML file is opened from disk, where no Content-Security-Policy protects it.
    assert [m for m in RAW_MARKERS if m in html] == []
    assert "&lt;script&gt;" in html or "&lt;img" in html  # the hostile names are there, escaped
    # LaTeX: the texts in the tables are escaped (the header comment may quote the study name).
    body_lines = [line for line in tex.splitlines() if not line.startswith("%")]
    assert not any("<script>" in line for line in body_lines) and "\\textless{}" in tex
