"""metric_meta_evaluation: every figure equals scipy/pandas on the same data, the Williams
tests equal the formula written out (Graham & Baldwin 2014, eq. 1), and thin data is flagged."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from metrics.core.stats.meta_eval import metric_meta_evaluation
from metrics.core.stats.warnings import report_warnings


def _williams_p(r12, r13, r23, n):
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (
        (r12 - r13)
        * math.sqrt((n - 1) * (1 + r23))
        / math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    )
    return sps.t.sf(t, n - 3)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    n = 240
    human = rng.normal(size=n)
    frame = pd.DataFrame(
        {
            "good": human + rng.normal(scale=0.6, size=n),
            "chrf": human + rng.normal(scale=1.0, size=n),
            "noise": rng.normal(size=n),
        }
    )
    frame.iloc[3, 1] = np.nan  # a missing score drops the row for every metric
    systems = np.repeat([f"s{i}" for i in range(12)], n // 12)
    groups = np.tile(np.repeat([f"o{i}" for i in range(20)], 1), n // 20)
    return human, frame, systems, groups


def test_segment_level_equals_scipy_and_the_williams_formula(data):
    human, frame, systems, groups = data
    meta = metric_meta_evaluation(human, frame, level="segment", groups=groups, baseline="chrf")
    keep = frame.notna().all(axis=1).to_numpy()
    h, f, g = human[keep], frame[keep], groups[keep]
    assert meta["n"] == keep.sum() == 239
    rows = {r["metric"]: r for r in meta["rows"]}
    assert [r["metric"] for r in meta["rows"]] == ["good", "chrf", "noise"]
    for m in frame.columns:
        assert rows[m]["pearson"] == pytest.approx(sps.pearsonr(h, f[m])[0], abs=1e-12)
        assert rows[m]["spearman"] == pytest.approx(sps.spearmanr(h, f[m])[0], abs=1e-12)
        assert rows[m]["kendall_b"] == pytest.approx(sps.kendalltau(h, f[m])[0], abs=1e-12)
        accs = []
        for o in np.unique(g):
            idx = np.flatnonzero(g == o)
            pairs = list(combinations(idx, 2))
            accs.append(np.mean([np.sign(h[i] - h[j]) == np.sign(f[m].iloc[i] - f[m].iloc[j]) for i, j in pairs]))
        assert rows[m]["accuracy"] == pytest.approx(np.mean(accs), abs=1e-12)
    r = {m: sps.pearsonr(h, f[m])[0] for m in frame.columns}
    rr = f.corr()
    assert rows["good"]["p_vs_best"] is None
    assert rows["chrf"]["p_vs_best"] == pytest.approx(_williams_p(r["good"], r["chrf"], rr.loc["good", "chrf"], 239))
    # Against the baseline: the better of the pair is tested as better.
    assert rows["good"]["better_than_baseline"] is True
    assert rows["good"]["p_vs_baseline"] == pytest.approx(rows["chrf"]["p_vs_best"])
    assert rows["noise"]["better_than_baseline"] is False
    assert rows["noise"]["p_vs_baseline"] == pytest.approx(
        _williams_p(r["chrf"], r["noise"], rr.loc["chrf", "noise"], 239)
    )
    assert rows["chrf"]["p_vs_baseline"] is None
    matrix = meta["matrix"]
    assert matrix["metrics"] == ["good", "chrf", "noise"]
    assert matrix["pvalues"][0][0] is None and matrix["pvalues"][1][0] is None
    assert matrix["pvalues"][1][2] == pytest.approx(rows["noise"]["p_vs_baseline"])


def test_system_level_correlates_per_system_means(data):
    human, frame, systems, _ = data
    meta = metric_meta_evaluation(human, frame, level="system", systems=systems)
    keep = frame.notna().all(axis=1).to_numpy()
    means = frame[keep].assign(h=human[keep], s=systems[keep]).groupby("s").mean()
    assert meta["n"] == 12
    for row in meta["rows"]:
        assert row["pearson"] == pytest.approx(sps.pearsonr(means["h"], means[row["metric"]])[0], abs=1e-12)
        assert row["kendall_b"] == pytest.approx(sps.kendalltau(means["h"], means[row["metric"]])[0], abs=1e-12)


def test_thin_data_is_flagged():
    rng = np.random.default_rng(1)
    human = rng.normal(size=12)
    frame = pd.DataFrame({"a": human + rng.normal(size=12), "b": human + rng.normal(size=12)})
    systems = np.repeat(["x", "y", "z", "w"], 3)
    meta = {
        level: metric_meta_evaluation(human, frame, level=level, systems=systems) for level in ("segment", "system")
    }
    codes = {w["code"] for w in report_warnings({"metric_meta_evaluation": meta, "settings": {"min_shared": 30}})}
    assert {"meta_eval_few_systems", "meta_eval_few_items"} <= codes


def test_a_metric_with_constant_scores_has_no_correlation_and_the_report_says_why():
    """A judge-like metric that answers one value (a 135M LLM rating every pair 1) gets no r, ρ or τ, and a
    finding names it, rather than a blank cell."""
    rng = np.random.default_rng(2)
    human = rng.normal(size=40)
    frame = pd.DataFrame({"chrf": human + rng.normal(size=40), "llm-judge": np.ones(40)})
    systems = np.repeat(["x", "y", "z", "w"], 10)
    meta = {
        level: metric_meta_evaluation(human, frame, level=level, systems=systems) for level in ("segment", "system")
    }
    for level in ("segment", "system"):
        row = {r["metric"]: r for r in meta[level]["rows"]}["llm-judge"]
        assert row["pearson"] is None and row["spearman"] is None and row["kendall_b"] is None
        assert meta[level]["rows"][-1]["metric"] == "llm-judge"
    found = [
        w
        for w in report_warnings({"metric_meta_evaluation": meta, "settings": {"min_shared": 30}})
        if w["code"] == "meta_eval_undefined"
    ]
    assert [w["subject"] for w in found] == ["segment", "system"]
    assert all("llm-judge" in w["message"] and "chrf" not in w["message"] for w in found)
    assert "40 items" in found[0]["message"] and "4 systems" in found[1]["message"]


def test_unknown_level_and_missing_systems_are_refused(data):
    human, frame, _, _ = data
    with pytest.raises(ValueError, match="level"):
        metric_meta_evaluation(human, frame, level="corpus")
    with pytest.raises(ValueError, match="systems"):
        metric_meta_evaluation(human, frame, level="system")
