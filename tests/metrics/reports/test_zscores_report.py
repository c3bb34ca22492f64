"""Per-judge z-scores in the absolute report and the leaderboard (issue 25, part 3): each
system's mean z beside its raw mean on every 0–100 criterion, equal to a pandas hand
computation (groupby judge, genuine items, sample SD), in the page, CSV, JSON, LaTeX and
the leaderboard's Markdown; no z on points or categories; an undefined z is a note."""

from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import pytest

from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.imports import judgments_import_file
from annotation.judging.services.design import design_update
from metrics.reports.exports.csv_json import report_json_text, table_csv
from metrics.reports.exports.latex import table_latex
from metrics.reports.exports.tables import report_tables, table_by_slug
from metrics.reports.leaderboard_md import system_scores_markdown
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create

from .test_report_any_design import GRAMMAR, HEADER, MEANING, TOPIC

pytestmark = pytest.mark.django_db


def _meaning(j: int, i: int, k: int) -> int:
    """Three judges who use the slider differently (offset and spread), human > machine."""
    offset, spread = [(70, 1), (30, 3), (50, 2)][j]
    return min(100, offset + spread * (4 * i % 7) + spread * 6 * (1 - k))


@pytest.fixture
def zstudy(study):
    design_update(study=study, changes={"criteria": [MEANING, GRAMMAR, TOPIC]})
    rows = [HEADER]
    for j, name in enumerate(("w1", "w2", "w3")):
        for i in range(5):
            for k, system in enumerate(("human", "machine")):
                rows.append(
                    f"{name},s{i},{system},meaning,{_meaning(j, i, k)}\n"
                    f"{name},s{i},{system},grammar,{(i + k) % 3}\n{name},s{i},{system},topic,{k}\n"
                )
    for i in range(5):  # "flat" gives everything 50 (σ = 0); "once" judged one candidate (n = 1)
        for system in ("human", "machine"):
            rows.append(f"flat,s{i},{system},meaning,50\nflat,s{i},{system},grammar,1\n")
    rows.append("once,s0,human,meaning,90\n")
    judgments_import_file(study=study, data="".join(rows).encode(), filename="j.csv")
    return study


def _build(study, criterion="meaning"):
    report = report_create(
        study=study, settings={"n_boot": 50, "criterion": criterion, "include_metrics": False}, enqueue=False
    )
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    return report


def _hand(study) -> pd.DataFrame:
    """Per system: raw and z means computed by hand from the judgments frame."""
    frame = judgments_frame(study=study)
    m = frame[(frame["criterion"] == "meaning") & ~frame["is_control"]].copy()
    g = m.groupby("judge")["score"]
    mu, sd, n = g.transform("mean"), g.transform("std"), g.transform("size")  # std: ddof=1
    m["z"] = ((m["score"] - mu) / sd).where((n >= 2) & (sd > 0))
    per_original = m.groupby(["system", "original"])[["score", "z"]].mean()
    return per_original.groupby(level="system").mean()


def test_system_z_scores_equal_a_hand_computation_and_only_sliders_get_them(zstudy):
    result = _build(zstudy).result
    scores = result["system_scores"]
    assert scores["ddof"] == 1 and [b["criterion"] for b in scores["criteria"]] == ["meaning"]
    block = scores["criteria"][0]
    assert [j.split("@")[0] for j in block["undefined_judges"]] == ["flat", "once"]  # imported: name@study
    hand = _hand(zstudy)
    assert [r["system"] for r in block["systems"]] == list(hand["z"].sort_values(ascending=False).index)
    for r in block["systems"]:
        assert r["raw"] == pytest.approx(hand.loc[r["system"], "score"])
        assert r["z"] == pytest.approx(hand.loc[r["system"], "z"])
        assert r["n_judgments"] == 5 * 3 + 5 + (r["system"] == "human") and r["n_z"] == 5 * 3
    # the raw mean is the ranking's mean (the same averaging), and z sits beside it
    ranking = table_by_slug(result, "system_ranking")
    assert [c.key for c in ranking.columns][2:4] == ["mean", "mean_z"]
    for row in ranking.rows:
        r = next(s for s in block["systems"] if s["system"] == row["system"])
        assert row["mean"] == pytest.approx(r["raw"]) and row["mean_z"] == r["z"]
    assert "z is undefined for 2 judges on meaning (flat@" in ranking.caption
    assert result["settings"]["zscore_criteria"] == ["meaning"]


def test_every_export_carries_the_z_column_and_never_nan(zstudy, researcher, client):
    report = _build(zstudy)
    slugs = [t.slug for t in report_tables(report.result)]
    assert slugs[slugs.index("system_ranking") + 1] == "system_scores"
    table = table_by_slug(report.result, "system_scores")
    rows = list(csv.DictReader(io.StringIO(table_csv(table))))
    assert {"criterion", "system", "raw", "z", "n_z", "undefined"} <= set(rows[0])
    assert {r["criterion"] for r in rows} == {"meaning"} and all(float(r["z"]) == float(r["z"]) for r in rows)
    assert {r["undefined"] for r in rows} == {"2"}
    doc = json.loads(report_json_text(report))
    assert doc["result"]["system_scores"]["criteria"][0]["criterion"] == "meaning"
    tex = table_latex(table)
    assert "$z$" in tex and "Raw" in tex and "flat" in tex and "once" in tex
    client.force_login(researcher)
    page = client.get(f"/studies/{zstudy.pk}/report/").content.decode()
    # The form's random CSRF token may spell "nan" (a run under xdist failed so): not a figure.
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)
    assert 'id="table-system_scores"' in page and "Mean z" in page and "z is undefined for 2 judges" in page
    r = client.get(f"/studies/{zstudy.pk}/reports/{report.pk}/tables/system_scores.csv")
    assert r.status_code == 200 and b"raw" in b"".join(r.streaming_content if r.streaming else [r.content])
    for text in (table_csv(table), tex, page, json.dumps(doc)):
        assert "nan" not in text.lower().replace("nance", "").replace("financ", ""), text[:200]
        assert not re.search(r"(?<![a-z])-?inf(inity)?(?![a-z])", text.lower()), text[:200]


def test_a_points_target_keeps_its_ranking_without_z_and_the_slider_table_stays(zstudy):
    result = _build(zstudy, criterion="grammar").result
    ranking = table_by_slug(result, "system_ranking")
    assert "mean_z" not in [c.key for c in ranking.columns]
    assert [b["criterion"] for b in result["system_scores"]["criteria"]] == ["meaning"]


def test_the_leaderboard_markdown_shows_raw_and_z_and_names_undefined_judges(zstudy):
    result = _build(zstudy).result
    text = system_scores_markdown(result)
    assert "| system | meaning raw | meaning z | originals | judgments with z |" in text
    hand = _hand(zstudy)
    assert f"| human | {hand.loc['human', 'score']:.2f} | {hand.loc['human', 'z']:.3f} | 5 | 15 of 21 |" in text
    assert "z undefined for 2 judges on meaning" in text and "flat@" in text and ", once@" in text
    assert "nan" not in text.lower()
    assert system_scores_markdown({"system_scores": None}) == ""


def test_a_pem_report_has_no_z_anywhere(judged_study, owner):
    from .conftest import build_now

    result = build_now(judged_study, owner, include_metrics=False).result
    assert result["system_scores"] is None
    assert "system_scores" not in [t.slug for t in report_tables(result)]
    assert "mean_z" not in [c.key for c in table_by_slug(result, "system_ranking").columns]


def test_the_z_tables_fit_an_a4_page_in_latex(zstudy, tmp_path):
    import subprocess

    from .test_latex_fits import OVERFULL, PDFLATEX

    if PDFLATEX is None:
        pytest.skip("pdflatex is not installed")
    result = _build(zstudy).result
    body = "\n".join(table_latex(table_by_slug(result, slug)) for slug in ("system_ranking", "system_scores"))
    (tmp_path / "report.tex").write_text(body, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        "\\documentclass[a4paper]{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
        "\\usepackage{booktabs,tabularx,pdflscape}\n\\begin{document}\n\\input{report}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = (tmp_path / "paper.log").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert not OVERFULL.findall(log)
