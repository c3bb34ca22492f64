"""Tie-calibrated pairwise accuracy (Deutsch, Foster & Freitag 2023, as mt-metrics-eval's
``tau_optimization`` with ``acc_23``) against a brute-force oracle of its definition."""

import math

import numpy as np
import pytest

from metrics.core.stats.correlation import correlation, pairwise_accuracy, tie_calibrated_accuracy


def oracle(h, m, groups=None):
    """By definition: for ε in {0} ∪ {|m_i - m_j|}, metric pairs closer than or at ε are
    ties; acc_23 = (concordant + tied in both) / pairs, averaged over groups; best ε,
    smallest on a tie (mt-metrics-eval keeps the first maximum of an ascending sweep)."""
    h, m = np.asarray(h, float), np.asarray(m, float)
    g = np.zeros(len(h), int) if groups is None else np.asarray(groups)
    rows = [np.flatnonzero(g == k) for k in np.unique(g)]
    rows = [r for r in rows if len(r) >= 2]
    pairs = [[(i, j) for a, i in enumerate(r) for j in r[a + 1 :]] for r in rows]
    cands = sorted({0.0} | {abs(m[i] - m[j]) for ps in pairs for i, j in ps})
    best = (-1.0, None)
    for eps in cands:
        accs = []
        for ps in pairs:
            ok = 0
            for i, j in ps:
                sh = np.sign(h[i] - h[j])
                sm = 0.0 if abs(m[i] - m[j]) <= eps else np.sign(m[i] - m[j])
                ok += sh == sm
            accs.append(ok / len(ps))
        acc = float(np.mean(accs))
        if acc > best[0] + 1e-12:
            best = (acc, eps)
    return best


def test_a_hand_worked_example():
    # Humans tie items 0 and 1; the metric separates them by 0.01 and everything else by more.
    h = [3, 3, 1, 5]
    m = [0.50, 0.51, 0.10, 0.90]
    res = tie_calibrated_accuracy(h, m)
    # ε = 0.01 ties (0, 1): all 6 pairs correct.
    assert res.statistic == pytest.approx(1.0) and res.epsilon == pytest.approx(0.01)
    assert pairwise_accuracy(h, m).statistic == pytest.approx(5 / 6)  # without calibration
    assert correlation(h, m, method="acc_eq_tc").statistic == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_definition_on_random_discrete_humans_and_continuous_metrics(seed):
    rng = np.random.default_rng(seed)
    n = 30
    h = rng.integers(1, 6, n).astype(float)
    m = np.round(h + rng.normal(0, 1.2, n), 1)  # rounding makes exact metric ties too
    groups = rng.integers(0, 5, n) if seed % 2 else None
    res = tie_calibrated_accuracy(h, m, groups=groups)
    acc, eps = oracle(h, m, groups)
    assert res.statistic == pytest.approx(acc, abs=1e-12)
    assert res.epsilon == pytest.approx(eps, abs=1e-12)
    assert res.statistic >= pairwise_accuracy(h, m, groups=groups).statistic - 1e-12


def test_no_pairs_gives_nan_and_too_many_pairs_are_refused_with_the_reason():
    assert math.isnan(tie_calibrated_accuracy([1.0], [2.0]).statistic)
    with pytest.raises(ValueError, match="group the items"):
        tie_calibrated_accuracy(np.zeros(4000), np.arange(4000.0))
