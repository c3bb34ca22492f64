"""Issue 12: interval α is numerically stable (centred data), and α at ratio level
equals Krippendorff's published example and the krippendorff package."""

import krippendorff
import numpy as np
import pytest

from metrics.core.stats.agreement.alpha import krippendorff_alphas

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers ×
# 12 units example with missing values; published: nominal .743, ordinal .815,
# interval .849, ratio .797.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def test_alpha_at_every_level_reproduces_krippendorffs_published_example():
    res = krippendorff_alphas(KRIPPENDORFF_2011, n_boot=200)
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
    for level, value in published.items():
        assert round(res[level].statistic, 3) == value
        assert res[level].statistic == pytest.approx(
            krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level), abs=1e-12
        )
    assert res["ratio"].ci_low <= res["ratio"].statistic <= res["ratio"].ci_high <= 1


def test_ratio_alpha_refuses_negative_scores_with_the_reason():
    res = krippendorff_alphas(KRIPPENDORFF_2011 - 3, levels=("ratio",), n_boot=0)
    assert np.isnan(res["ratio"].statistic) and "true zero" in res["ratio"].note


def _continuous(seed=0):
    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, 300)
    x = latent[None, :] + rng.normal(0, 0.5, (3, 300))
    x[rng.random((3, 300)) < 0.2] = np.nan
    return x


def test_continuous_interval_alpha_equals_the_krippendorff_package_on_well_conditioned_data():
    x = _continuous()
    ours = krippendorff_alphas(x, levels=("interval",), n_boot=0)["interval"].statistic
    assert ours == pytest.approx(krippendorff.alpha(reliability_data=x, level_of_measurement="interval"), abs=1e-12)


@pytest.mark.parametrize("offset", [1e8, 1e10])
def test_continuous_interval_alpha_survives_a_large_offset(offset):
    """Before: 1e8 lost precision and 1e10 gave α = 1.06.  A shift leaves α unchanged;
    what remains is the input's own rounding (ulp(1e10) ≈ 2e-6 on values of spread 1)."""
    x = _continuous()
    base = krippendorff_alphas(x, levels=("interval",), n_boot=0)["interval"].statistic
    shifted = krippendorff_alphas(x + offset, levels=("interval",), n_boot=100)["interval"]
    assert shifted.statistic == pytest.approx(base, abs=1e-6)
    assert shifted.ci_low < shifted.statistic < shifted.ci_high <= 1
