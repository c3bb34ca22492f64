"""Correlation between two score vectors at segment and system level.

Pearson, Spearman, Kendall τ-b and τ-c come from :mod:`scipy.stats`; pairwise
accuracy with ties (``acc_eq``, Deutsch, Foster & Freitag 2023, as used in WMT23) is
implemented here in O(n log n) without materialising the n(n−1)/2 pairs.

Missing values (NaN in either vector) are dropped pairwise.  When a coefficient is
undefined (fewer than 3 pairs, or a constant vector) the statistic and p-value are
NaN rather than a warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

from ._shared import percentile_ci, weight_chunks
from .results import CorrelationResult

__all__ = [
    "METHODS",
    "correlation",
    "correlation_with_ci",
    "correlations",
    "kendall",
    "pairwise_accuracy",
    "tie_calibrated_accuracy",
    "pearson",
    "segment_and_system",
    "spearman",
    "system_means",
]

METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b", "kendall_c", "accuracy")
_ALIASES = {
    "kendall": "kendall_b",
    "tau_b": "kendall_b",
    "tau_c": "kendall_c",
    "acc_eq": "accuracy",
    "acc_eq_tc": "accuracy_tc",
}


def _paired(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length ({x.size} != {y.size})")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _undefined(x: np.ndarray, y: np.ndarray, minimum: int = 3) -> bool:
    return x.size < minimum or np.ptp(x) == 0 or np.ptp(y) == 0


def pearson(x, y) -> CorrelationResult:
    """Pearson's r = Σ(x − x̄)(y − ȳ) / √(Σ(x − x̄)² Σ(y − ȳ)²) with the exact two-sided
    p-value under bivariate normality, p = 2 I_{(1−|r|)/2}(n/2 − 1, n/2 − 1) (the
    same Beta-distribution form scipy ``pearsonr`` uses; tests check equality).

    Computed directly because ``pearsonr``'s input checks dominate the cost when a
    report takes thousands of correlations.
    """
    x, y = _paired(x, y)
    n = int(x.size)
    if _undefined(x, y):
        return CorrelationResult(math.nan, math.nan, n, "pearson")
    xc = x - x.mean()
    yc = y - y.mean()
    # Element-wise sums, not BLAS dot: a multi-threaded BLAS call costs more than the
    # arithmetic for vectors this size.
    r = float((xc * yc).sum()) / math.sqrt(float((xc * xc).sum()) * float((yc * yc).sum()))
    r = max(-1.0, min(1.0, r))
    a = n / 2 - 1
    p = float(2 * special.betainc(a, a, (1 - abs(r)) / 2))
    return CorrelationResult(r, min(p, 1.0), n, "pearson")


def spearman(x, y) -> CorrelationResult:
    """Spearman's ρ = Pearson's r of the (average-tie) ranks (scipy ``spearmanr``)."""
    x, y = _paired(x, y)
    if _undefined(x, y):
        return CorrelationResult(math.nan, math.nan, int(x.size), "spearman")
    res = sps.spearmanr(x, y)
    return CorrelationResult(float(res.statistic), float(res.pvalue), int(x.size), "spearman")


def kendall(x, y, *, variant: str = "b") -> CorrelationResult:
    """Kendall's τ (scipy ``kendalltau(variant=...)``).

    τ-b = (nc − nd) / √((n0 − n1)(n0 − n2)) corrects for ties (Kendall 1945);
    τ-c = 2m(nc − nd) / (n²(m − 1)) with m = min(#distinct x, #distinct y) (Stuart 1953)
    suits rectangular tables such as 1–5 judgments against a continuous metric.
    """
    if variant not in ("b", "c"):
        raise ValueError(f"variant must be 'b' or 'c', not {variant!r}")
    x, y = _paired(x, y)
    method = f"kendall_{variant}"
    if _undefined(x, y):
        return CorrelationResult(math.nan, math.nan, int(x.size), method)
    res = sps.kendalltau(x, y, variant=variant)
    return CorrelationResult(float(res.statistic), float(res.pvalue), int(x.size), method)


def _tie_pairs(*columns: np.ndarray) -> float:
    """Number of pairs equal on all given columns: Σ_groups c(c−1)/2."""
    if len(columns) == 1:
        _, counts = np.unique(columns[0], return_counts=True)
    else:
        _, counts = np.unique(np.column_stack(columns), axis=0, return_counts=True)
    counts = counts.astype(float)
    return float((counts * (counts - 1) / 2).sum())


def _accuracy_counts(h: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """(correct pairs, all pairs) for one group, in O(n log n).

    A pair is correct when sign(h_i − h_j) = sign(m_i − m_j), ties included.  With
    n0 all pairs, n1/n2 pairs tied in h/m and n3 tied in both, the concordant count is
    nc = (S + n0 − n1 − n2 + n3) / 2 where S = nc − nd is recovered from scipy's τ-b.
    """
    n = h.size
    n0 = n * (n - 1) / 2
    if n < 2:
        return 0.0, 0.0
    n1, n2, n3 = _tie_pairs(h), _tie_pairs(m), _tie_pairs(h, m)
    if n0 - n1 == 0 or n0 - n2 == 0:
        s = 0.0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tau = sps.kendalltau(h, m, variant="b").statistic
        s = float(np.round(tau * math.sqrt((n0 - n1) * (n0 - n2))))
    nc = (s + n0 - n1 - n2 + n3) / 2
    return nc + n3, n0


# Groups larger than this are counted with the O(n log n) path; smaller ones are
# expanded into explicit pairs all at once, which is faster for many small groups.
_EXPLICIT_GROUP_LIMIT = 500


def pairwise_accuracy(human, metric, *, groups=None) -> CorrelationResult:
    """Pairwise accuracy with ties, ``acc_eq`` (Deutsch, Foster & Freitag 2023; WMT23).

    acc = |{(i, j): sign(h_i − h_j) = sign(m_i − m_j)}| / |{(i, j): i < j}|, so a pair
    tied in both human and metric scores counts as correct and a pair tied in only one
    counts as wrong.  With ``groups`` (e.g. the original of each candidate) pairs are
    formed only within a group and the statistic is the mean of the per-group
    accuracies over groups with at least two items ("item grouping").  No p-value is
    defined (pvalue None); ``n`` is the number of scored items.
    """
    h = np.asarray(human, dtype=float).ravel()
    m = np.asarray(metric, dtype=float).ravel()
    if h.shape != m.shape:
        raise ValueError(f"human and metric differ in length ({h.size} != {m.size})")
    keep = ~(np.isnan(h) | np.isnan(m))
    if groups is None:
        h, m = h[keep], m[keep]
        correct, total = _accuracy_counts(h, m)
        stat = correct / total if total else math.nan
        return CorrelationResult(stat, None, int(h.size), "accuracy")

    g = np.asarray(groups).ravel()
    if g.shape != keep.shape:
        raise ValueError("groups must have one entry per score")
    codes, _ = pd.factorize(g[keep], sort=False)
    h, m = h[keep], m[keep]
    order = np.argsort(codes, kind="stable")
    codes, h, m = codes[order], h[order], m[order]
    sizes = np.bincount(codes) if codes.size else np.zeros(0, dtype=int)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if sizes.size else sizes
    accs: list[np.ndarray] = []

    small = (sizes >= 2) & (sizes <= _EXPLICIT_GROUP_LIMIT)
    if small.any():
        # Every position p pairs with the later positions of its group.
        end = (starts + sizes)[codes]
        partners = np.where(small[codes], end - np.arange(codes.size) - 1, 0)
        left = np.repeat(np.arange(codes.size), partners)
        first = np.repeat(np.cumsum(partners) - partners, partners)
        right = left + 1 + (np.arange(left.size) - first)
        ok = (np.sign(h[left] - h[right]) == np.sign(m[left] - m[right])).astype(float)
        grp = codes[left]
        correct_by_group = np.bincount(grp, weights=ok, minlength=sizes.size)
        total_by_group = np.bincount(grp, minlength=sizes.size).astype(float)
        accs.append(correct_by_group[small] / total_by_group[small])
    for k in np.flatnonzero(sizes > _EXPLICIT_GROUP_LIMIT):
        sl = slice(starts[k], starts[k] + sizes[k])
        correct, total = _accuracy_counts(h[sl], m[sl])
        accs.append(np.array([correct / total]))
    values = np.concatenate(accs) if accs else np.zeros(0)
    stat = float(values.mean()) if values.size else math.nan
    return CorrelationResult(stat, None, int(h.size), "accuracy")


MAX_TC_PAIRS = 5_000_000


def tie_calibrated_accuracy(human, metric, *, groups=None) -> CorrelationResult:
    """Pairwise accuracy with tie calibration, ``acc*_eq`` (Deutsch, Foster & Freitag
    2023, "Ties Matter", §5; mt-metrics-eval's ``tau_optimization`` with ``acc_23``).

    A metric rarely outputs exact ties, so plain ``acc_eq`` punishes it on every pair
    the humans tied.  Tie calibration introduces ties: metric scores closer than ε
    count as tied, and ε is chosen among 0 and every pairwise metric difference to
    maximise acc_eq = (concordant + tied-in-both) / pairs.  With ``groups`` the
    objective is the mean of the per-group accuracies (pairs within a group only), as
    mt-metrics-eval averages over rows.  Returns the best accuracy with ``epsilon``
    set; the smallest ε wins a tie between thresholds.  Vectorised over pairs (sort
    the pairs by |m_i − m_j|, a cumulative sum of the change each tie makes) instead of
    mt-metrics-eval's pair-by-pair loop; the tests check equality with it.
    """
    h = np.asarray(human, dtype=float).ravel()
    m = np.asarray(metric, dtype=float).ravel()
    if h.shape != m.shape:
        raise ValueError(f"human and metric differ in length ({h.size} != {m.size})")
    keep = ~(np.isnan(h) | np.isnan(m))
    g = np.zeros(h.size, dtype=int) if groups is None else pd.factorize(np.asarray(groups).ravel())[0]
    if g.shape != keep.shape:
        raise ValueError("groups must have one entry per score")
    h, m, g = h[keep], m[keep], g[keep]
    order = np.argsort(g, kind="stable")
    h, m, g = h[order], m[order], g[order]
    sizes = np.bincount(g) if g.size else np.zeros(0, dtype=int)
    n_pairs = int((sizes * (sizes - 1) // 2).sum())
    if n_pairs > MAX_TC_PAIRS:
        raise ValueError(f"tie calibration over {n_pairs:,} pairs is too slow; group the items (e.g. by original)")
    if n_pairs == 0:
        return CorrelationResult(math.nan, None, int(h.size), "accuracy_tc")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    end = (starts + sizes)[g]
    partners = end - np.arange(g.size) - 1
    left = np.repeat(np.arange(g.size), partners)
    first = np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + (np.arange(left.size) - first)
    dh = np.sign(h[left] - h[right])
    dm = m[left] - m[right]
    base = (dh == np.sign(dm)).astype(float)  # concordant or tied in both
    tied = (dh == 0).astype(float)  # correct once the metric ties the pair
    pair_rows = g[left]
    rows_with_pairs = np.flatnonzero(sizes >= 2)
    weight = 1.0 / (sizes * (sizes - 1) / 2)[pair_rows] / rows_with_pairs.size
    diff = np.abs(dm)
    by = np.argsort(diff, kind="stable")
    gain = np.cumsum((weight * (tied - base))[by])
    start = float((weight * base).sum())
    # Candidate thresholds: 0, then each distinct difference (ties of ε flip together).
    last_of_run = np.r_[diff[by][1:] != diff[by][:-1], True]
    thresholds = np.r_[0.0, diff[by][last_of_run]]
    accs = np.r_[start, start + gain[last_of_run]]
    if thresholds.size > 1 and thresholds[1] == 0.0:  # ε = 0 already ties the exact ties
        thresholds, accs = thresholds[1:], accs[1:]
    best = int(np.argmax(accs))
    return CorrelationResult(float(accs[best]), None, int(h.size), "accuracy_tc", epsilon=float(thresholds[best]))


def correlation(x, y, *, method: str = "pearson", groups=None) -> CorrelationResult:
    """Dispatch to :func:`pearson`, :func:`spearman`, :func:`kendall` (``kendall_b``,
    ``kendall_c``) or :func:`pairwise_accuracy` (``accuracy``; ``groups`` applies only
    to it)."""
    method = _ALIASES.get(method, method)
    if method == "pearson":
        return pearson(x, y)
    if method == "spearman":
        return spearman(x, y)
    if method == "kendall_b":
        return kendall(x, y, variant="b")
    if method == "kendall_c":
        return kendall(x, y, variant="c")
    if method == "accuracy":
        return pairwise_accuracy(x, y, groups=groups)
    if method == "accuracy_tc":
        return tie_calibrated_accuracy(x, y, groups=groups)
    raise ValueError(f"unknown correlation method {method!r}; choose from {', '.join(METHODS)}")


def correlation_with_ci(
    x,
    y,
    *,
    method: str = "pearson",
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    groups=None,
) -> CorrelationResult:
    """:func:`correlation` plus a percentile-bootstrap interval over the paired items.

    Pairs (x_i, y_i) are resampled with replacement ``n_boot`` times (seeded) and the
    coefficient recomputed (Efron & Tibshirani 1993).  For Pearson each resample is
    computed from weighted sums Σw·x, Σw·y, Σw·x², Σw·y², Σw·xy at once; the other
    methods re-run the estimator per resample.  Resamples where the coefficient is
    undefined are dropped.
    """
    method = _ALIASES.get(method, method)
    if method == "accuracy" and groups is not None:
        raise ValueError("bootstrap intervals for grouped accuracy are not supported")
    xs, ys = _paired(x, y)
    point = correlation(xs, ys, method=method)
    if n_boot <= 0 or xs.size < 3 or not math.isfinite(point.statistic):
        return point
    boots = []
    if method == "pearson":
        stats = np.column_stack([xs, ys, xs * xs, ys * ys, xs * ys])
        n = xs.size
        for w in weight_chunks(n, n_boot, seed):
            sx, sy, sxx, syy, sxy = (w @ stats).T / n
            with np.errstate(invalid="ignore", divide="ignore"):
                boots.append((sxy - sx * sy) / np.sqrt((sxx - sx**2) * (syy - sy**2)))
    else:
        for w in weight_chunks(xs.size, n_boot, seed):
            for row in w:
                idx = np.repeat(np.arange(xs.size), row.astype(int))
                boots.append(np.array([correlation(xs[idx], ys[idx], method=method).statistic]))
    low, high = percentile_ci(np.concatenate(boots), confidence_level)
    return CorrelationResult(point.statistic, point.pvalue, point.n, point.method, low, high)


def correlations(x, y, *, methods: Sequence[str] = METHODS, groups=None) -> dict[str, CorrelationResult]:
    """Return ``{method: correlation(x, y, method=method)}`` for each method."""
    return {_ALIASES.get(m, m): correlation(x, y, method=m, groups=groups) for m in methods}


def system_means(scores, systems) -> pd.Series:
    """Mean score per system (NaN scores ignored), indexed by system, sorted by name."""
    s = pd.Series(np.asarray(scores, dtype=float), index=pd.Index(np.asarray(systems), name="system"))
    return s.groupby(level=0, sort=True).mean()


def segment_and_system(
    human,
    metric,
    systems,
    *,
    methods: Sequence[str] = ("pearson", "spearman", "kendall_b", "kendall_c", "accuracy"),
    groups=None,
) -> dict[str, dict[str, CorrelationResult]]:
    """Correlate at ``segment`` level (all paired scores) and ``system`` level.

    System level: the per-system means of human and metric over the segments where
    both are present, then the same correlations over systems (Papineni et al. 2002;
    PEM §6.2).  ``groups`` (segment level only) groups the pairwise accuracy.
    """
    h = np.asarray(human, dtype=float).ravel()
    m = np.asarray(metric, dtype=float).ravel()
    s = np.asarray(systems).ravel()
    keep = ~(np.isnan(h) | np.isnan(m))
    grp = None if groups is None else np.asarray(groups).ravel()
    seg = correlations(h, m, methods=methods, groups=grp)
    hs = system_means(h[keep], s[keep])
    ms = system_means(m[keep], s[keep])
    sysl = correlations(hs.to_numpy(), ms.reindex(hs.index).to_numpy(), methods=methods)
    return {"segment": seg, "system": sysl}
