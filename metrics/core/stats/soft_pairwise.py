"""Soft pairwise accuracy (Thompson, Mathur, Deutsch & Lipton 2024; WMT24's system-level measure).

Pairwise accuracy asks, for every pair of systems, whether the metric orders the
two as the humans do: a yes/no per pair, however slim either margin. Soft pairwise
accuracy ("Improving statistical significance in human evaluation of automatic
metrics via soft pairwise accuracy", WMT 2024) replaces the yes/no with how far the
metric's *confidence* in "system i beats system j" is from the humans': for each
pair, a one-sided paired permutation test on the segment-level scores gives a
p-value from the human scores, p^h_ij, and one from the metric's, p^m_ij, and

    SPA = 1 − (1 / C(N, 2)) · Σ_{i<j} |p^h_ij − p^m_ij|

over the N systems (1 − PCE, the "pairwise confidence error"; higher is better,
0–1, comparable with pairwise accuracy). The permutation test
(:func:`pairwise_p_values`): with s_i = Σ_k x_ik the system sums over the
segments k, draw M random sign vectors σ ∈ {−1, +1}^K (a swap of the two systems'
scores on each segment), and p_ij = |{σ: σ·x_i − σ·x_j ≥ s_i − s_j}| / M.

This is mt-metrics-eval's ``PairwiseConfidenceError`` (``mt_metrics_eval/pce.py``,
Brian Thompson, Apache-2.0) carried over line for line — the same seeded numpy
generator (``default_rng(4)``), float32 sums and one sign matrix shared by every
pair — so that on a complete systems × segments matrix the value is the one
mt-metrics-eval prints (tested on its own test cases). Hand-written because
mt-metrics-eval is not on PyPI and pulls in its data tooling.

paraeval's studies are often incomplete (not every system has a candidate for
every original, and a segment may lack human scores): where the matrix has gaps,
each pair of systems is tested on the segments both have (the same sign matrix,
restricted to them); a complete matrix takes mt-metrics-eval's own path.
"""

from __future__ import annotations

import math

import numpy as np

from .results import CorrelationResult

__all__ = ["PCE_PERMUTATIONS", "PCE_SEED", "pairwise_p_values", "soft_pairwise_accuracy"]

#: mt-metrics-eval's defaults: 1,000 permutations, seed 4.
PCE_PERMUTATIONS = 1000
PCE_SEED = 4


def _signs(num_permutations: int, num_segments: int, seed: int) -> np.ndarray:
    # mt-metrics-eval pce.compute_pairwise_p_values: uniform [0, 1) rounded to 0/1,
    # then 2m − 1, in float32 and in place, in exactly this order.
    rng = np.random.default_rng(seed)
    two_m_minus_one = rng.random(size=(num_permutations, num_segments), dtype=np.float32)
    np.rint(two_m_minus_one, out=two_m_minus_one, casting="same_kind")
    two_m_minus_one *= 2.0
    two_m_minus_one -= 1.0
    return two_m_minus_one


def pairwise_p_values(seg_scores, *, num_permutations: int = PCE_PERMUTATIONS, seed: int = PCE_SEED) -> np.ndarray:
    """``(N, N)`` matrix whose upper triangle holds p_ij that system i is better than system j.

    ``seg_scores`` is ``(N systems, K segments)``; NaN marks a missing score. Complete
    rows: mt-metrics-eval's ``compute_pairwise_p_values`` exactly. With gaps, pair
    (i, j) uses the segments where both are present (NaN when they share none).
    Cells on and below the diagonal are NaN. Deterministic for a given ``seed``.
    """
    # C order as mt-metrics-eval's arrays: BLAS sums a float32 product in an order
    # that depends on the layout, and one rounding apart can move a p-value by 1/M.
    x = np.ascontiguousarray(seg_scores, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("seg_scores must be a (systems, segments) matrix")
    if num_permutations < 1:
        raise ValueError("num_permutations must be at least 1")
    num_systems, num_segments = x.shape
    two_m_minus_one = _signs(num_permutations, num_segments, seed)
    p_vals = np.empty((num_systems, num_systems)) * np.nan
    present = ~np.isnan(x)
    if present.all():
        seg = x.astype(np.float32)
        sys_scores = np.sum(seg, axis=1)
        partial = np.matmul(two_m_minus_one, seg.T)
        for ii in range(num_systems):
            for jj in range(ii + 1, num_systems):
                null_delta = partial[:, ii] - partial[:, jj]
                test_delta = sys_scores[ii] - sys_scores[jj]
                p_vals[ii, jj] = np.sum(null_delta >= test_delta) / num_permutations
        return p_vals
    seg = np.where(present, x, 0.0).astype(np.float32)
    for ii in range(num_systems):
        for jj in range(ii + 1, num_systems):
            shared = present[ii] & present[jj]
            if not shared.any():
                continue
            a, b = seg[ii, shared], seg[jj, shared]
            signs = two_m_minus_one[:, shared]
            null_delta = signs @ a - signs @ b
            test_delta = np.sum(a) - np.sum(b)
            p_vals[ii, jj] = np.sum(null_delta >= test_delta) / num_permutations
    return p_vals


def soft_pairwise_accuracy(
    human, metric, *, num_permutations: int = PCE_PERMUTATIONS, seed: int = PCE_SEED
) -> CorrelationResult:
    """Soft pairwise accuracy, 1 − PCE, of a metric against humans (see the module docstring).

    ``human`` and ``metric`` are ``(N systems, K segments)`` matrices of segment
    scores, rows in the same system order (NaN: missing). A segment counts for a
    system only where both its human and metric scores are present. Pairs of
    systems sharing no segment are left out of the mean. ``n`` is the number of
    systems; ``pvalue`` is None (the statistic is built from p-values, it has none
    of its own). NaN with fewer than two systems.
    """
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(metric, dtype=np.float64)
    if h.shape != m.shape or h.ndim != 2:
        raise ValueError(
            f"human and metric must be (systems, segments) matrices of one shape, not {h.shape}, {m.shape}"
        )
    both = ~np.isnan(h) & ~np.isnan(m)
    # A segment no system has is dropped (mt-metrics-eval's filter_nones does the
    # same for a gold score missing for every system alike).
    cols = both.any(axis=0)
    h, m = np.where(both, h, np.nan)[:, cols], np.where(both, m, np.nan)[:, cols]
    n = h.shape[0]
    if n < 2:
        return CorrelationResult(math.nan, None, n, "soft_accuracy")
    ph = pairwise_p_values(h, num_permutations=num_permutations, seed=seed)
    pm = pairwise_p_values(m, num_permutations=num_permutations, seed=seed)
    upper = np.triu_indices(n, 1)
    diffs = np.abs(ph - pm)[upper]
    diffs = diffs[~np.isnan(diffs)]
    stat = float(1.0 - np.mean(diffs)) if diffs.size else math.nan
    return CorrelationResult(stat, None, n, "soft_accuracy")
