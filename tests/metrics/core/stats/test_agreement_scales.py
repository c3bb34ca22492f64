"""Agreement follows the criterion's scale: interval statistics for sliders, nominal ones for categories."""

import krippendorff
import numpy as np
import pytest

from metrics.core.stats.agreement.criterion import SCALE_ALPHA_LEVEL, criterion_agreement
from metrics.core.stats.data import RatingMatrix

RNG = np.random.default_rng(4)


def _matrix(values) -> RatingMatrix:
    values = np.asarray(values, dtype=float)
    return RatingMatrix(
        values, tuple(f"j{i}" for i in range(values.shape[0])), tuple(f"i{k}" for k in range(values.shape[1]))
    )


def test_a_slider_gets_interval_alpha_icc_and_pearson_but_no_kappa():
    truth = RNG.uniform(0, 100, 40)
    values = np.clip(truth + RNG.normal(0, 10, (3, 40)), 0, 100).round(1)
    values[0, :5] = np.nan  # an incomplete design
    a = criterion_agreement(_matrix(values), "similarity", n_boot=0, scale_type="slider")
    assert a.alpha_level == "interval" and set(a.krippendorff_alpha) == {"interval"}
    assert a.krippendorff_alpha["interval"].statistic == pytest.approx(
        krippendorff.alpha(reliability_data=values, level_of_measurement="interval"), abs=1e-9
    )
    assert a.fleiss_kappa is None and "slider" in a.fleiss_kappa_reason and a.cohen_kappa == ()
    assert a.pearson and a.to_dict()["scale"] == "slider"


def test_categories_get_nominal_alpha_and_kappa_but_no_icc_or_pearson():
    values = RNG.integers(0, 3, (3, 30)).astype(float)
    a = criterion_agreement(_matrix(values), "topic", n_boot=0, scale_type="categorical")
    assert a.alpha_level == "nominal" and set(a.krippendorff_alpha) == {"nominal"}
    assert a.fleiss_kappa is not None and a.cohen_kappa
    assert a.icc is None and "categories" in a.icc_reason and a.pearson == ()


def test_points_keep_every_coefficient_with_ordinal_alpha_as_the_headline():
    values = RNG.integers(1, 6, (3, 30)).astype(float)
    a = criterion_agreement(_matrix(values), "overall", n_boot=0, scale_type="points")
    b = criterion_agreement(_matrix(values), "overall", n_boot=0)
    assert a.alpha_level == "ordinal" and set(a.krippendorff_alpha) == {"nominal", "ordinal", "interval", "ratio"}
    assert a.krippendorff_alpha["ordinal"].statistic == b.krippendorff_alpha["ordinal"].statistic
    assert b.alpha_level is None and b.scale is None
    assert SCALE_ALPHA_LEVEL == {"points": "ordinal", "slider": "interval", "categorical": "nominal"}
    with pytest.raises(ValueError, match="unknown scale"):
        criterion_agreement(_matrix(values), "overall", n_boot=0, scale_type="stars")
