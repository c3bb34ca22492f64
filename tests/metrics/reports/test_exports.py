"""Every export format parses in the tool it is meant for."""

from __future__ import annotations

import base64
import copy
import csv
import io
import json
import re
import zipfile
from html.parser import HTMLParser

import pytest

from metrics.reports.exports.bundle import export_stem, report_zip
from metrics.reports.exports.csv_json import report_json_text, table_csv
from metrics.reports.exports.latex import latex_escape, report_latex, table_latex
from metrics.reports.exports.standalone_html import report_html
from metrics.reports.exports.tables import report_tables, table_by_slug
from metrics.reports.models import Report, ReportPlot

pytestmark = pytest.mark.django_db

ALL_TABLES = [
    "table1",
    "table2",
    "table3",
    "metric_leaderboard",
    "metric_meta_evaluation",
    "agreement",
    "agreement_pairs",
    "judge_qc",
    "system_ranking",
]


def test_the_report_has_every_table_in_page_order(built_report):
    assert [t.slug for t in report_tables(built_report.result)] == [
        "table1",
        "table2",
        "table3",
        "agreement",
        "agreement_pairs",
        "judge_qc",
        "system_ranking",
        "metric_leaderboard",
        "metric_meta_evaluation",
    ]


def test_every_table_is_valid_csv_with_the_columns_it_announces(built_report):
    for table in report_tables(built_report.result):
        rows = list(csv.reader(io.StringIO(table_csv(table))))
        assert rows[0] == table.csv_header(), table.slug
        assert len(rows) - 1 == len(table.rows) > 0, table.slug
        assert all(len(r) == len(rows[0]) for r in rows), table.slug
        for col in (c for c in table.columns if c.kind in ("r", "p", "num")):
            i = rows[0].index(col.key)
            for r in rows[1:]:
                if r[i]:
                    float(r[i])  # full-precision numbers, never formatted text


def test_table1_csv_holds_the_full_precision_numbers_of_the_report(built_report):
    rows = list(csv.DictReader(io.StringIO(table_csv(table_by_slug(built_report.result, "table1")))))
    pairs = built_report.result["table1"]["pairs"]
    assert [(r["judge_a"], r["judge_b"]) for r in rows[:-1]] == [tuple(p["judges"]) for p in pairs]
    for row, pair in zip(rows, pairs):
        assert float(row["sentence_pearson"]) == pair["sentence"]["pearson"]["statistic"]
        low, high = float(row["sentence_pearson_ci_low"]), float(row["sentence_pearson_ci_high"])
        assert low < float(row["sentence_pearson"]) < high
    assert rows[-1]["judge_a"] == "weighted summary (3 of 3 pairs)"
    assert float(rows[-1]["sentence_pearson"]) == pytest.approx(
        built_report.result["table1"]["mean_pearson"]["sentence"]
    )


def _renamed(result, name):
    out = copy.deepcopy(result)
    out["system_ranking"]["systems"][0]["system"] = name
    return out


def test_csv_cells_that_look_like_formulas_are_neutralised_and_numbers_stay_numbers(built_report):
    for evil in ('=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)"):
        table = table_by_slug(_renamed(built_report.result, evil), "system_ranking")
        rows = list(csv.DictReader(io.StringIO(table_csv(table))))
        assert rows[0]["system"] == "'" + evil
        assert float(rows[0]["mean"]) == built_report.result["system_ranking"]["systems"][0]["mean"]
    # A negative correlation is a number, not a formula: no quote.
    table = table_by_slug(built_report.result, "table2")
    values = [r["sentence_pearson"] for r in csv.DictReader(io.StringIO(table_csv(table)))]
    assert any(v.startswith("-") for v in values)


def test_the_json_export_holds_signatures_versions_settings_and_every_number(built_report):
    data = json.loads(report_json_text(built_report))
    assert data["schema"] == "paraeval.report/1"
    assert data["study"] == {"id": built_report.study_id, "name": built_report.study.name}
    meta = data["report"]
    assert meta["settings"] == built_report.settings and meta["judgments_fingerprint"] == built_report.fingerprint
    assert meta["excluded_judges"] == []
    assert [r["signature"] for r in meta["metric_runs"]] and all(
        r["signature"].startswith(f"metric:{r['metric']}|") for r in meta["metric_runs"]
    )
    assert {"numpy", "scipy", "krippendorff", "matplotlib", "django"} <= set(meta["build"]["versions"])
    assert data["result"] == built_report.result
    assert data["result"]["schema"] == "paraeval.stats.report/1"
    assert [p["file"] for p in data["plots"]] == [
        f"plots/{slug}.svg" for slug in ReportPlot.objects.filter(report=built_report).values_list("slug", flat=True)
    ]


_UNESCAPED_AMP = re.compile(r"(?<!\\)&")


def test_latex_tables_use_booktabs_and_every_row_has_every_column(built_report):
    tex = report_latex(built_report)
    tables = report_tables(built_report.result)
    assert tex.count("\\begin{table}") == tex.count("\\end{table}") == len(tables)
    assert tex.count("\\toprule") == tex.count("\\bottomrule") == len(tables)
    assert "\\usepackage{booktabs,tabularx,pdflscape}" in tex
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    assert body.count("{") - body.count("\\{") == body.count("}") - body.count("\\}")
    blocks = re.findall(r"\\begin\{tabularx\}\{\\linewidth\}\{([^\n]*)\}\n(.*?)\\end\{tabularx\}", tex, flags=re.S)
    assert len(blocks) == len(tables)
    for block in blocks:
        spec, content = block
        spec = re.sub(r">\{[^}]*\}", "", spec)  # >{\raggedright\arraybackslash}X -> X
        assert set(spec) <= set("lrcX"), spec
        rows = [ln for ln in content.splitlines() if ln.endswith("\\\\")]
        assert rows, spec
        for row in rows:
            if row.startswith("\\multicolumn"):
                continue
            assert len(_UNESCAPED_AMP.findall(row)) == len(spec) - 1, row


def test_latex_escapes_every_special_character_of_the_data(built_report):
    name = "a_b & c% $x$ #1 {y} ~z^ \\w <v>"
    table = table_by_slug(_renamed(built_report.result, name), "system_ranking")
    tex = table_latex(table)
    escaped = latex_escape(name)
    assert escaped == (
        "a\\_b \\& c\\% \\$x\\$ \\#1 \\{y\\} \\textasciitilde{}z\\textasciicircum{} "
        "\\textbackslash{}w \\textless{}v\\textgreater{}"
    )
    assert escaped in tex and name not in tex
    assert latex_escape("Krippendorff's α ≥ 0.8") == "Krippendorff's $\\alpha$ $\\geq$ 0.8"


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_the_html_file_is_self_contained_with_its_figures_inline(built_report):
    html = report_html(built_report)
    parser = _Collector()
    parser.feed(html)
    tags = [t for t, _ in parser.tags]
    assert "script" not in tags and "link" not in tags and "iframe" not in tags and "object" not in tags
    assert tags.count("style") == 1  # styles travel inside the file
    imgs = [a for t, a in parser.tags if t == "img"]
    assert len(imgs) == ReportPlot.objects.filter(report=built_report).count() == 5
    for a in imgs:
        assert a["src"].startswith("data:image/svg+xml;base64,")
        assert b"<svg" in base64.b64decode(a["src"].split(",", 1)[1])
    for _, a in parser.tags:
        for attr in ("src", "href", "action", "srcset"):
            value = a.get(attr)
            assert value is None or value.startswith(("data:", "#")), (attr, value)
    for title in (
        "Table 1",
        "Table 2",
        "Table 3",
        "Agreement per criterion",
        "Judge quality control",
        "System ranking",
        "Metric leaderboard",
    ):
        assert title in html
    assert built_report.fingerprint in html


def test_the_zip_bundles_every_export(built_report):
    data = report_zip(built_report)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        stem = export_stem(built_report)
        assert all(n.startswith(stem + "/") for n in names)
        short = sorted(n.split("/", 1)[1] for n in names)
        slugs = ReportPlot.objects.filter(report=built_report).values_list("slug", flat=True)
        assert short == sorted(
            [
                "README.txt",
                "report.json",
                "report.tex",
                "report.html",
                *[f"tables/{t}.csv" for t in ALL_TABLES],
                *[f"plots/{s}.svg" for s in slugs],
            ]
        )
        assert json.loads(zf.read(f"{stem}/report.json"))["result"] == built_report.result
        assert "tables/judge_qc.csv" in zf.read(f"{stem}/README.txt").decode()


def test_a_report_without_metric_runs_has_no_table3_anywhere(judged_study, owner):
    from .conftest import build_now

    report = build_now(judged_study, owner, include_metrics=False)
    slugs = [t.slug for t in report_tables(report.result)]
    assert "table3" not in slugs and "metric_leaderboard" not in slugs
    with zipfile.ZipFile(io.BytesIO(report_zip(report))) as zf:
        assert not any(n.endswith("tables/table3.csv") for n in zf.namelist())
    assert "metric-bleu" not in set(ReportPlot.objects.filter(report=report).values_list("slug", flat=True))


def test_page_exports_download_with_names_and_refuse_an_unfinished_report(client, owner, built_report):
    client.force_login(owner)
    base = f"/studies/{built_report.study_id}/reports/{built_report.pk}"
    for fmt, ctype in (
        ("json", "application/json"),
        ("tex", "application/x-tex"),
        ("html", "text/html"),
        ("zip", "application/zip"),
    ):
        r = client.get(f"{base}/export.{fmt}")
        assert r.status_code == 200 and r["Content-Type"].startswith(ctype), fmt
        assert r["Content-Disposition"] == f'attachment; filename="{export_stem(built_report)}.{fmt}"'
    r = client.get(f"{base}/tables/judge_qc.csv")
    assert r.status_code == 200 and r.content.decode().startswith("judge,excluded,passed")
    assert client.get(f"{base}/tables/nonsense.csv").status_code == 404
    assert client.get(f"{base}/export.docx").status_code == 404
    queued = Report.objects.create(study=built_report.study, settings=built_report.settings)
    r = client.get(f"/studies/{built_report.study_id}/reports/{queued.pk}/export.zip")
    assert r.status_code == 409 and b"only a finished report" in r.content


def test_tables_read_the_same_whatever_order_the_database_kept_the_keys_in(built_report):
    """PostgreSQL's jsonb reorders object keys; the tables follow the criteria and forms instead."""
    result = copy.deepcopy(built_report.result)
    result["agreement"] = dict(reversed(list(result["agreement"].items())))
    for a in result["agreement"].values():
        a["icc"] = dict(sorted(a["icc"].items()))
        a["krippendorff_alpha"] = dict(reversed(list(a["krippendorff_alpha"].items())))
    rows = table_by_slug(result, "agreement").rows
    assert [r["criterion"] for r in rows][::11] == ["adequacy", "fluency", "dissimilarity", "overall"]
    assert [r["coefficient"] for r in rows[:11]] == [
        "Krippendorff α (nominal)",
        "Krippendorff α (ordinal)",
        "Krippendorff α (interval)",
        "Krippendorff α (ratio)",
        "Fleiss κ",
        "ICC(1,1)",
        "ICC(2,1)",
        "ICC(3,1)",
        "ICC(1,3)",
        "ICC(2,3)",
        "ICC(3,3)",
    ]
    assert rows == table_by_slug(built_report.result, "agreement").rows


def test_an_underflowed_p_value_is_written_as_below_the_floor_never_as_zero():
    """scipy answers 0.0 below about 1e-308: the CSV says ``<1e-300`` there (issue 28), the page
    ``<0.001``, and an ordinary p-value stays a plain number."""
    from metrics.reports.exports.model import Column, ReportTable, format_cell

    table = ReportTable(
        "t",
        "T",
        "",
        (Column("metric", "Metric"), Column("p", "p", "p")),
        rows=[
            {"metric": "a", "p": 0.0},
            {"metric": "b", "p": 5e-320},
            {"metric": "c", "p": 0.0123},
            {"metric": "d", "p": None},
        ],
    )
    assert list(table.csv_rows()) == [["a", "<1e-300"], ["b", "<1e-300"], ["c", "0.0123"], ["d", ""]]
    assert format_cell(0.0, "p") == "<0.001"
