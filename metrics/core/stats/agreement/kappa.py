"""Fleiss' κ (many judges) and Cohen's κ (two judges, unweighted/linear/quadratic)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import sparse
from scipy import stats as sps
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa

from .._shared import percentile_ci, weight_chunks
from ..results import AgreementResult
from ._shared import KAPPA_WEIGHTS, MAX_CATEGORIES, IncompleteDesignError, as_ratings, values_observed

# ---------------------------------------------------------------------------
# Fleiss' kappa


def fleiss_kappa(ratings, *, n_boot: int = 0, confidence_level: float = 0.95, seed: int = 0) -> AgreementResult:
    """Fleiss' (1971) κ = (P̄ − P̄_e) / (1 − P̄_e) for nominal categories.

    P_i = (Σ_j n_ij² − n) / (n(n − 1)) is the agreement on item i among its n ratings,
    P̄ their mean, P̄_e = Σ_j p_j² with p_j the share of all ratings in category j.
    The point estimate is statsmodels' ``fleiss_kappa`` on the item × category table.

    Precondition: every rated item has the same number n ≥ 2 of ratings (Fleiss
    allows different judges per item, but not different counts).  Otherwise raises
    :class:`IncompleteDesignError`; use Krippendorff's α for such designs.
    """
    values = as_ratings(ratings)
    counts_per_item = (~np.isnan(values)).sum(axis=0)
    rated = counts_per_item > 0
    values, counts_per_item = values[:, rated], counts_per_item[rated]
    if values.shape[1] == 0:
        raise IncompleteDesignError("Fleiss' kappa: no item has any rating")
    lo, hi = int(counts_per_item.min()), int(counts_per_item.max())
    if lo != hi:
        raise IncompleteDesignError(
            f"Fleiss' kappa needs the same number of ratings on every item; items have {lo} to {hi} "
            "(incomplete design: use Krippendorff's alpha)"
        )
    if lo < 2:
        raise IncompleteDesignError("Fleiss' kappa needs at least two ratings per item")
    domain = values_observed(values)
    if domain.size > MAX_CATEGORIES:
        raise ValueError(f"Fleiss' kappa needs categorical scores; found {domain.size} distinct values")
    table = np.stack([(values == v).sum(axis=0) for v in domain], axis=1).astype(float)
    n_judges = int((~np.isnan(values)).any(axis=1).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        point = float(_sm_fleiss_kappa(table, method="fleiss")) if domain.size > 1 else math.nan
    low = high = None
    if n_boot > 0 and domain.size > 1:
        n_items, n = table.shape[0], lo
        p_item = ((table**2).sum(axis=1) - n) / (n * (n - 1))
        boots = []
        for w in weight_chunks(n_items, n_boot, seed):
            p_bar = (w @ p_item) / n_items
            p_cat = (w @ table) / (n_items * n)
            p_exp = (p_cat**2).sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                boots.append((p_bar - p_exp) / (1 - p_exp))
        low, high = percentile_ci(np.concatenate(boots), confidence_level)
    return AgreementResult(
        point, int(table.shape[0]), n_judges, "fleiss_kappa", "nominal", low, high, n_boot, confidence_level
    )


# ---------------------------------------------------------------------------
# Cohen's kappa


def _kappa_weights(n_labels: int, weights: str) -> np.ndarray:
    idx = np.arange(n_labels)
    diff = np.abs(idx[:, None] - idx[None, :]).astype(float)
    if weights == "unweighted":
        return (diff > 0).astype(float)
    if weights == "linear":
        return diff
    if weights == "quadratic":
        return diff**2
    raise ValueError(f"unknown kappa weighting {weights!r}; choose from {', '.join(KAPPA_WEIGHTS)}")


def _kappa_from_confusion(conf: np.ndarray, w: np.ndarray) -> np.ndarray:
    """κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij, E = outer(row sums, column sums) / n; conf is (B, L, L)."""
    n = conf.sum(axis=(1, 2))
    expected = conf.sum(axis=2)[:, :, None] * conf.sum(axis=1)[:, None, :] / n[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (conf * w).sum(axis=(1, 2)) / (expected * w).sum(axis=(1, 2))


@functools.lru_cache(maxsize=16)
def _normal_quantile(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``, remembered: pairwise κ asks it once per judge pair and
    weighting (19,000 times at 500 judges), always for the same confidence level."""
    return float(sps.norm.ppf(q))


def _kappa_std_error(table: np.ndarray, kappa: float, level: str) -> float:
    """The large-sample standard error of κ (Fleiss, Cohen & Everitt 1969) on one confusion
    table: statsmodels' ``cohens_kappa(table, wt=...).std_kappa``, term for term.

    Written out because statsmodels' results object builds two frozen scipy distributions per
    call (about 1.7 ms): a dashboard's pairwise κ over 500 judges made 18,000 such calls, 35 s of
    CPU for a standard error. ``tests/metrics/core/stats/test_cohen_kappa_se.py`` checks equality
    with statsmodels on every weighting.
    """
    nobs = table.sum()
    freqs = table / nobs
    freq_row, freq_col = table.sum(1) / nobs, table.sum(0) / nobs
    if level == "unweighted":
        agree_exp = float((freq_row * freq_col).sum())
        term_a = (np.diag(freqs) * (1 - (freq_row + freq_col) * (1 - kappa)) ** 2).sum()
        term_b = freqs * (freq_col[:, None] + freq_row) ** 2
        np.fill_diagonal(term_b, 0)
        term_b = (1 - kappa) ** 2 * term_b.sum()
        term_c = (kappa - agree_exp * (1 - kappa)) ** 2
        var = (term_a + term_b - term_c) / (1 - agree_exp) ** 2 / nobs
    else:
        pos = np.arange(table.shape[0], dtype=float)
        span = pos[-1] - pos[0]
        diff = np.abs(pos[:, None] - pos) / span if level == "linear" else (pos[:, None] - pos) ** 2 / span**2
        w = 1.0 - diff
        w_row = (freq_col * w).sum(1)
        w_col = (freq_row[:, None] * w).sum(0)
        agree_wexp = (w * freq_col * freq_row[:, None]).sum()
        term_a = freqs * (w - (w_col + w_row[:, None]) * (1 - kappa)) ** 2
        var = (term_a.sum() - (kappa - agree_wexp * (1 - kappa)) ** 2) / ((1 - agree_wexp) ** 2 * nobs)
    return float(np.sqrt(var))


def cohen_kappa(
    a,
    b,
    *,
    weights: str | None = None,
    labels: Sequence[float] | np.ndarray | None = None,
    n_boot: int = 0,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Cohen's (1960) κ between two judges, optionally weighted (Cohen 1968).

    κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij over the confusion matrix O of the items both
    judges rated (NaN = not rated) and its chance expectation E; w_ij = [i ≠ j]
    (unweighted), |i − j| (linear) or (i − j)² (quadratic), where i, j are positions
    in ``labels`` (default: the values either judge used, sorted).  This is exactly
    scikit-learn's ``cohen_kappa_score``, which the tests check.  Pass the design's
    scale as ``labels`` (e.g. 1–5) for weighted κ: the weights are positions in
    ``labels``, so leaving out a value nobody used would shrink every distance past it.

    ``std_error`` is the large-sample standard error of Fleiss, Cohen & Everitt (1969)
    (statsmodels' ``cohens_kappa(...).std_kappa``, computed by :func:`_kappa_std_error`); without a bootstrap the interval is
    κ ± z_{1−α/2}·SE, clipped to κ's range [−1, 1] (``ci_method = "asymptotic"``).
    """
    level = weights or "unweighted"
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"a and b differ in length ({x.size} != {y.size})")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    lab = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels, dtype=float)
    if lab.size > MAX_CATEGORIES:
        raise ValueError(f"Cohen's kappa needs categorical scores; found {lab.size} distinct values")
    wmat = _kappa_weights(lab.size, level)
    if x.size == 0 or lab.size < 2:
        return AgreementResult(math.nan, int(x.size), 2, "cohen_kappa", level)
    xi, yi = np.searchsorted(lab, x), np.searchsorted(lab, y)
    if (xi >= lab.size).any() or (yi >= lab.size).any() or (lab[xi] != x).any() or (lab[yi] != y).any():
        raise ValueError("a or b contains a value not in labels")
    cell = xi * lab.size + yi
    conf = np.bincount(cell, minlength=lab.size**2).reshape(1, lab.size, lab.size).astype(float)
    point = float(_kappa_from_confusion(conf, wmat)[0])
    low = high = se = None
    method = None
    if x.size >= 2 and math.isfinite(point):
        with np.errstate(divide="ignore", invalid="ignore"):
            std = _kappa_std_error(conf[0], point, level)
        se = std if math.isfinite(std) else None
        if se is not None and n_boot <= 0:
            z = _normal_quantile(0.5 + confidence_level / 2)
            low, high, method = max(-1.0, point - z * se), min(1.0, point + z * se), "asymptotic"
    if n_boot > 0:
        method = "bootstrap"
        onehot = sparse.csr_matrix((np.ones(cell.size), (np.arange(cell.size), cell)), shape=(cell.size, lab.size**2))
        boots = []
        for w in weight_chunks(x.size, n_boot, seed):
            confs = np.asarray((onehot.T @ w.T).T).reshape(-1, lab.size, lab.size)
            boots.append(_kappa_from_confusion(confs, wmat))
        low, high = percentile_ci(np.concatenate(boots), confidence_level)
    return AgreementResult(
        point, int(x.size), 2, "cohen_kappa", level, low, high, max(n_boot, 0), confidence_level, None, se, method
    )
