"""PEM out of fold: no candidate is predicted by a model that saw its original."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps

from metrics.core.pem_cv import pem_out_of_fold


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    n_orig, per = 30, 6
    groups = np.repeat([f"o{i}" for i in range(n_orig)], per)
    x = rng.uniform(size=(n_orig * per, 3))
    y = 100 * (0.6 * x[:, 0] + 0.3 * x[:, 2] + 0.1 * rng.uniform(size=len(x)))
    return x, y, groups


def test_an_originals_predictions_do_not_depend_on_its_own_targets(data):
    x, y, g = data
    grid = {"svr__C": (1.0,), "svr__gamma": ("scale",), "svr__epsilon": (0.1,)}
    base = pem_out_of_fold(x, y, g, folds=5, param_grid=grid, target_range=(0, 100))
    changed = y.copy()
    changed[g == "o7"] = 100 - changed[g == "o7"]  # o7's judgments turned upside down
    other = pem_out_of_fold(x, changed, g, folds=5, param_grid=grid, target_range=(0, 100))
    np.testing.assert_allclose(other.scores[g == "o7"], base.scores[g == "o7"], rtol=0, atol=1e-9)
    assert not np.allclose(other.scores[g != "o7"], base.scores[g != "o7"])  # the others' models saw it
    assert len(base.folds) == 5 and all(f["n_originals_held_out"] == 6 for f in base.folds)
    assert sps.pearsonr(base.scores, y)[0] > 0.8  # it learns the signal, on the 0-100 scale
    assert 0 <= np.median(base.scores) <= 100


def test_unjudged_candidates_are_predicted_but_never_trained_on(data):
    x, y, g = data
    y = y.copy()
    y[::4] = np.nan
    out = pem_out_of_fold(
        x,
        y,
        g,
        folds=3,
        param_grid={"svr__C": (1.0,), "svr__gamma": ("scale",), "svr__epsilon": (0.1,)},
        target_range=(0, 100),
    )
    assert np.isfinite(out.scores).all()


def test_too_few_originals_are_refused(data):
    x, y, g = data
    with pytest.raises(ValueError, match="folds need at least"):
        pem_out_of_fold(x[:12], y[:12], g[:12], folds=5)
