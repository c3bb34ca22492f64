"""The full report for a simulated study of PEM's size: 300 originals × 4 systems + 3 controls × 3 judges."""

from __future__ import annotations

import io
import time
import zipfile

import pytest

from metrics.reports.exports.bundle import report_zip
from metrics.reports.models import ReportPlot

from .conftest import build_now, make_judged_study, run_metric

pytestmark = pytest.mark.django_db


def test_the_full_report_of_a_pem_sized_simulated_study(researcher):
    t0 = time.perf_counter()
    # Names in the order of the simulator's four latent profiles (best first).
    study = make_judged_study(
        researcher,
        name="PEM-sized",
        n_originals=300,
        systems=("human1", "human2", "machine1", "machine2"),
        n_judges=3,
        seed=2010,
    )
    run_metric(study, "bleu")
    report = build_now(study, researcher)
    assert report.status == "succeeded", report.error
    result = report.result

    summary = result["summary"]
    assert (summary["n_originals"], summary["n_items"], summary["n_genuine_items"], summary["n_control_items"]) == (
        300,
        2100,
        1200,
        900,
    )
    assert summary["n_judges"] == 3 and summary["n_judgments"] == 2100 * 3 * 4

    # PEM Table 1: three pairs of judges; sentence level over 1,200 shared genuine items, system level over 4.
    pairs = result["table1"]["pairs"]
    assert len(pairs) == 3
    for pair in pairs:
        assert pair["n_shared"] == 1200 and pair["system"]["pearson"]["n"] == 4
        assert 0.3 < pair["sentence"]["pearson"]["statistic"] < 0.9
        assert pair["system"]["pearson"]["statistic"] > 0.9  # the latent system means differ a lot

    # PEM Table 2: the simulator loads adequacy (0.8) more than fluency (0.5) on the shared quality factor.
    rows = {(r["criterion"], r["subset"]): r for r in result["table2"]["rows"]}
    assert len(rows) == 6
    assert (
        rows[("adequacy", "all")]["sentence"]["pearson"]["statistic"]
        > rows[("fluency", "all")]["sentence"]["pearson"]["statistic"]
    )
    assert rows[("adequacy", "adequacy>=4,fluency>=4")]["n_items"] < 2100

    # PEM Table 3 for BLEU against the mean and each judge, both levels.
    t3 = [r for r in result["table3"]["rows"] if r["metric"] == "bleu"]
    assert {(r["human"], r["level"]) for r in t3} == {
        (h, lvl) for h in ("mean", "sim-judge-01", "sim-judge-02", "sim-judge-03") for lvl in ("segment", "system")
    }
    # Headline on the genuine items; PEM §5.2's controls-in-the-reference as the second column.
    assert next(r for r in t3 if r["human"] == "mean" and r["level"] == "segment")["n"] == 1200
    with_controls = [r for r in result["table3"]["rows_with_controls"] if r["metric"] == "bleu"]
    assert next(r for r in with_controls if r["level"] == "segment")["n"] == 2100

    # Agreement: every criterion, α with a bootstrap interval around it; complete design, so Fleiss and ICC exist.
    for crit in ("adequacy", "fluency", "dissimilarity", "overall"):
        a = result["agreement"][crit]
        alpha = a["krippendorff_alpha"]["interval"]
        assert alpha["ci_low"] < alpha["statistic"] < alpha["ci_high"] and alpha["n_items"] == 1200
        assert a["fleiss_kappa"] is not None and a["icc"]["ICC(2,1)"]["statistic"] > 0
    assert 0.3 < result["agreement"]["overall"]["krippendorff_alpha"]["interval"]["statistic"] < 0.9

    # Careful simulated judges pass QC; the ranking recovers the latent order.
    assert all(q["passed"] for q in result["judge_qc"])
    ranking = result["system_ranking"]["systems"]
    assert [s["system"] for s in ranking] == ["human1", "human2", "machine1", "machine2"]
    assert ranking[0]["cluster"] < ranking[-1]["cluster"]

    assert ReportPlot.objects.filter(report=report).count() == 4
    with zipfile.ZipFile(io.BytesIO(report_zip(report))) as zf:
        assert (
            zf.testzip() is None and len(zf.namelist()) == 4 + 9 + 4
        )  # README, JSON, LaTeX, HTML; 9 tables (the metric meta-evaluation is the 9th); 4 plots
    print(f"PEM-sized study, report and exports: {time.perf_counter() - t0:.1f} s")
