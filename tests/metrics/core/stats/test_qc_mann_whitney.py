"""The judge QC's Mann–Whitney test equals scipy's ``mannwhitneyu(alternative="less")``: on
point scales (ties), sliders (no ties, small and large samples: scipy's exact branch), all
scores tied, and NaN."""

import numpy as np
import pytest
from scipy import stats as sps

from metrics.core.stats.qc import mann_whitney_less


def _cases():
    rng = np.random.default_rng(2026)
    for n1, n2 in [(1, 1), (1, 12), (2, 30), (4, 4), (8, 9), (9, 9), (12, 200), (40, 400)]:
        yield rng.integers(1, 6, n1).astype(float), rng.integers(1, 6, n2).astype(float)  # 1–5 points
        yield rng.uniform(0, 100, n1), rng.uniform(0, 100, n2)  # a slider: no ties
        yield rng.integers(1, 3, n1).astype(float), rng.integers(2, 6, n2).astype(float)
    yield np.full(5, 3.0), np.full(20, 3.0)  # every score tied
    yield np.array([1.0, np.nan, 2.0]), np.array([3.0, 4.0, 5.0, 2.0])


@pytest.mark.parametrize("x, y", list(_cases()))
def test_equals_scipy(x, y):
    ref = sps.mannwhitneyu(x, y, alternative="less")
    u1, p = mann_whitney_less(x, y)
    assert u1 == pytest.approx(float(ref.statistic), abs=1e-9, nan_ok=True)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-15, nan_ok=True)
