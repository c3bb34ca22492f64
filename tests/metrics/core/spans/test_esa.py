"""ESA analysis: errors by severity, MQM-style score with settable weights, ESA scores, ranking, controls."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from metrics.core.spans.esa import (
    MQM_WEIGHTS,
    control_checks,
    errors_by_severity,
    esa_judgments,
    esa_summary,
    esa_system_ranking,
    mqm_score,
)
from metrics.core.spans.model import ErrorSpan, EsaAnnotation
from metrics.core.stats.data import validate_judgments
from metrics.core.stats.metric_human import metric_human_correlations
from metrics.core.stats.zscores import judge_zscores

MINOR = ErrorSpan("candidate", 0, 3, "minor")
MAJOR = ErrorSpan("candidate", 4, 9, "major")
OMITTED = ErrorSpan("original", 2, 6, "major", "omission")
MISSING = ErrorSpan.missing_marker("minor")


def test_mqm_score_is_minus_weighted_span_count_with_wmt_weights_by_default():
    assert dict(MQM_WEIGHTS) == {"minor": 1.0, "major": 5.0}
    assert mqm_score([]) == 0
    assert mqm_score([MINOR, MAJOR, OMITTED, MISSING]) == -(1 + 5 + 5 + 1)
    assert mqm_score([MINOR, MAJOR], weights={"minor": 0.5, "major": 10}) == -10.5
    with pytest.raises(ValueError, match="major"):
        mqm_score([MINOR], weights={"minor": 1})


def test_a_span_must_be_well_formed():
    with pytest.raises(ValueError):
        ErrorSpan("candidate", 3, 3, "minor")
    with pytest.raises(ValueError):
        ErrorSpan("candidate", 0, 2, "critical")
    with pytest.raises(ValueError):
        ErrorSpan("reference", 0, 2, "minor")
    assert MISSING.missing and MISSING.side == "candidate"


@pytest.fixture
def study():
    rng = np.random.default_rng(4)
    quality = {"good": (0.1, 0.05, 90), "fair": (0.8, 0.3, 70), "poor": (1.5, 1.2, 40)}
    out = []
    for judge, bias in (("j1", 0), ("j2", -15), ("j3", 8)):
        for o in range(30):
            for system, (minor_rate, major_rate, mean) in quality.items():
                spans = [ErrorSpan("candidate", k * 10, k * 10 + 4, "minor") for k in range(rng.poisson(minor_rate))]
                spans += [
                    ErrorSpan("candidate", 100 + k * 10, 104 + k * 10, "major") for k in range(rng.poisson(major_rate))
                ]
                score = float(np.clip(mean + bias + rng.normal(0, 8), 0, 100))
                out.append(EsaAnnotation(judge, f"{o}-{system}", str(o), system, tuple(spans), score))
            out.append(EsaAnnotation(judge, f"{o}-copy", str(o), "control:identical", (), 100.0, True, "identical"))
    return out


def test_errors_by_severity_count_spans_per_system_without_controls(study):
    table = errors_by_severity(study).set_index("system")
    assert set(table.index) == {"good", "fair", "poor"}
    for system in table.index:
        mine = [a for a in study if a.system == system]
        assert table.loc[system, "n_judgments"] == len(mine)
        assert table.loc[system, "major"] == sum(a.count("major") for a in mine)
        assert table.loc[system, "minor_per_judgment"] == pytest.approx(sum(a.count("minor") for a in mine) / len(mine))
    assert table["major_per_judgment"].is_monotonic_increasing


def test_summary_shows_weights_raw_esa_z_scores_and_mqm(study):
    summary = esa_summary(study, weights={"minor": 1, "major": 10})
    assert summary.to_dict()["weights"] == {"minor": 1.0, "major": 10.0}
    table = summary.table.set_index("system")
    assert list(table.index) == ["good", "fair", "poor"]
    frame = pd.DataFrame(
        [
            {
                "system": a.system,
                "original": a.original,
                "esa": a.score,
                "mqm": -(a.count("minor") + 10 * a.count("major")),
            }
            for a in study
            if not a.is_control
        ]
    )
    expected = frame.groupby(["system", "original"]).mean().groupby("system").mean()
    for system in table.index:
        assert table.loc[system, "esa"] == pytest.approx(expected.loc[system, "esa"])
        assert table.loc[system, "mqm"] == pytest.approx(expected.loc[system, "mqm"])
    z = judge_zscores(esa_judgments(study), criteria=["esa"])
    good = z[(z["system"] == "good")].groupby("original")["z"].mean().mean()
    assert table.loc["good", "esa_z"] == pytest.approx(good)


def test_span_scores_become_the_canonical_judgment_frame(study):
    frame = validate_judgments(esa_judgments(study))
    assert set(frame["criterion"]) == {"esa", "mqm"}
    assert len(frame) == 2 * len(study)
    assert frame["is_control"].sum() == 2 * sum(a.is_control for a in study)


@pytest.mark.parametrize("by", ["esa", "esa_z", "mqm"])
def test_system_ranking_separates_clearly_different_systems(study, by):
    ranking = esa_system_ranking(study, by=by, n_boot=300)
    assert [r.system for r in ranking] == ["good", "fair", "poor"]
    assert [r.cluster for r in ranking] == [1, 2, 3]
    assert all(r.n == 30 for r in ranking)


def test_controls_are_checked_as_controls():
    annotations = [
        EsaAnnotation("j", "c1", "o", "control:identical", (), 100, True, "identical"),
        EsaAnnotation("j", "c2", "o", "control:identical", (MAJOR,), 60, True, "identical"),
        EsaAnnotation("j", "c3", "o", "control:random", (MAJOR,), 80, True, "random"),
        EsaAnnotation("j", "c4", "o", "control:random", (), 10, True, "random"),
        EsaAnnotation("j", "c5", "o", "control:unigram", (MINOR,), 75, True, "unigram"),
        EsaAnnotation("j", "i1", "o", "sys", (MAJOR,), 20),
    ]
    checks = {c.item: c for c in control_checks(annotations)}
    assert set(checks) == {"c1", "c2", "c3", "c4", "c5"}
    assert [checks[k].passed for k in ("c1", "c2", "c3", "c4", "c5")] == [True, False, True, True, False]
    assert "identical" in checks["c2"].reason and "75" in checks["c5"].reason


def test_metric_human_correlations_run_on_span_based_scores(study):
    rng = np.random.default_rng(9)
    items = sorted({a.item for a in study if not a.is_control})
    mqm_mean = {}
    for item in items:
        mine = [a for a in study if a.item == item]
        mqm_mean[item] = np.mean([mqm_score(a.spans) for a in mine])
    metric = pd.DataFrame(
        {
            "item": items,
            "system": [i.split("-")[1] for i in items],
            "score": [mqm_mean[i] + rng.normal(0, 1) for i in items],
        }
    )
    results = metric_human_correlations(
        esa_judgments(study),
        {"m": metric},
        criterion="mqm",
        include_controls_in_mean=False,
        per_judge=False,
        methods=("pearson",),
    )
    segment = next(r for r in results if r.level == "segment" and r.human == "mean")
    expected = sps.pearsonr(metric["score"], [mqm_mean[i] for i in items]).statistic
    assert segment.n == len(items)
    assert segment.results["pearson"].statistic == pytest.approx(expected)
