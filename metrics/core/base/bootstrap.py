"""Bootstrap confidence intervals and paired tests over sufficient statistics (Koehn 2004; sacrebleu)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .metric import Metric
from .params import DEFAULT_SEED, MetricError
from .resampling import exact_in_float32, one_blas_thread, resampled_sum_matrix
from .results import BootstrapResult, PairedResult, PairwiseResult


def _resampled(metric: Metric, stats_list: list[np.ndarray], n_resamples: int, seed: int | None) -> list[np.ndarray]:
    """Resampled corpus scores of several systems on the same resamples.

    The systems' statistics are stacked side by side, so each block of
    resamples costs one count matrix and one matrix product for all of them.
    """
    n = stats_list[0].shape[0]
    widths = [s.shape[1] for s in stats_list]
    cuts = np.cumsum(widths)[:-1]
    stacked = np.hstack([np.asarray(s, dtype=np.float64) for s in stats_list])
    sums = resampled_sum_matrix(n, n_resamples, stacked, seed)
    return [metric.scores_from_resampled_sums(part) for part in np.split(sums, cuts, axis=1)]


def bootstrap_ci(
    metric: Metric,
    stats: np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = DEFAULT_SEED,
) -> BootstrapResult:
    """Percentile bootstrap confidence interval of a corpus score (Efron & Tibshirani 1993).

    Draws ``n_resamples`` resamples of the ``n`` segments with replacement
    (:func:`resample_indices`), scores each by re-summing ``stats`` rows, and
    returns the ``(1 − confidence)/2`` and ``(1 + confidence)/2`` quantiles.
    ``statistic`` is the corpus score of the full batch; ``standard_error`` is
    the standard deviation of the resampled scores.
    """
    stats = np.asarray(stats, dtype=np.float64)
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    if stats.ndim != 2 or stats.shape[0] == 0:
        raise MetricError("cannot bootstrap an empty batch")
    (scores,) = _resampled(metric, [stats], n_resamples, seed)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(scores, [alpha, 1 - alpha])
    return BootstrapResult(
        statistic=metric.aggregate(stats),
        ci_low=float(low),
        ci_high=float(high),
        n=int(stats.shape[0]),
        n_resamples=n_resamples,
        confidence=confidence,
        standard_error=float(np.std(scores, ddof=1)) if n_resamples > 1 else math.nan,
    )


def paired_bootstrap(
    metric: Metric,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired bootstrap resampling test of system B against baseline A (Koehn 2004).

    Exactly sacrebleu's ``paired_bs`` (``sacrebleu/significance.py``, after
    Moses' ``bootstrap-hypothesis-difference-significance.pl``): with the same
    resample indices for both systems (:func:`resample_indices`), let
    ``d_r = |score_B(r) − score_A(r)|`` for each resample r and
    ``δ = |score_B − score_A|`` on the full batch. Under the null hypothesis the
    resampled differences are centred: ``s_r = d_r − mean(d)``, and

        p = (#{r : s_r > δ} + 1) / (n_resamples + 1).

    ``delta`` is the signed ``statistic_b − statistic_a``.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired systems need statistics of one shape, got {a.shape} and {b.shape}")
    if a.ndim != 2 or a.shape[0] == 0:
        raise MetricError("cannot test an empty batch")
    res = pairwise_tests(metric, [a, b], test="bs", n_resamples=n_resamples, seed=seed)
    return res.pair(0, 1)


def paired_approximate_randomization(
    metric: Metric,
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    *,
    n_trials: int = 10_000,
    seed: int | None = DEFAULT_SEED,
) -> PairedResult:
    """Paired approximate randomization test of B against baseline A (Noreen 1989; Riezler & Maxwell 2005).

    Exactly sacrebleu's ``paired_ar`` (``_paired_ar_test``, after MultEval's
    ``StratifiedApproximateRandomizationTest``): each trial swaps the two
    systems' statistics in a random half of the segments — the mask is
    ``default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``, drawn
    here in blocks of whole 32-row multiples, which continue one stream — and

        p = (#{t : |score(shuffled A_t) − score(shuffled B_t)| > δ} + 1) / (n_trials + 1),

    with δ = |score_B − score_A| on the full batch. Scores are computed from
    exact integer sums, as sacrebleu's are. ``n_resamples`` of the result is
    the number of trials.
    """
    a = np.asarray(stats_a, dtype=np.float64)
    b = np.asarray(stats_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired systems need statistics of one shape, got {a.shape} and {b.shape}")
    if a.ndim != 2 or a.shape[0] == 0:
        raise MetricError("cannot test an empty batch")
    return pairwise_tests(metric, [a, b], test="ar", n_resamples=n_trials, seed=seed).pair(0, 1)


def ar_masks(n: int, n_trials: int, seed: int | None, max_cells: int = 4_000_000):
    """sacrebleu's AR swap mask in row blocks (bool draws continue one stream over
    blocks whose size is a multiple of 32 cells; 32-row blocks always are)."""
    rng = np.random.default_rng(seed)
    rows = max(32, (max_cells // max(n, 1)) // 32 * 32)
    done = 0
    while done < n_trials:
        c = min(rows, n_trials - done)
        yield rng.integers(2, size=(c, n), dtype=bool)
        done += c


def pairwise_tests(
    metric: Metric,
    stats: Sequence[np.ndarray] | np.ndarray,
    *,
    test: str = "bs",
    n_resamples: int | None = None,
    seed: int | None = DEFAULT_SEED,
) -> PairwiseResult:
    """Paired tests of every pair of systems, vectorised over resamples and systems.

    ``stats`` holds one ``(n, k)`` statistics matrix per system, rows aligned
    (segment i of every system is the same original) — as stored by a metric
    run. All pairs share one set of resamples (``test="bs"``, default 1,000,
    :func:`paired_bootstrap`'s definition) or swap masks (``test="ar"``,
    default 10,000 trials, :func:`paired_approximate_randomization`), drawn
    from ``seed`` as sacrebleu draws them for every system against its
    baseline, so each p-value equals sacrebleu's for that pair.

    Cost: per block of resamples one count (or mask) matrix and one matrix
    product with all systems' statistics side by side; every system is scored
    once per resample for the bootstrap (pairs then only compare), and each
    pair's two shuffled systems for AR (their sums come from the same product:
    shuffled A = mask·A + (Σ B − mask·B)).
    """
    if test not in ("bs", "ar"):
        raise ValueError(f"test must be 'bs' or 'ar', got {test!r}")
    mats = [np.asarray(s, dtype=np.float64) for s in stats]
    if len(mats) < 2:
        raise ValueError("paired tests need at least two systems")
    shape = mats[0].shape
    if any(m.shape != shape for m in mats) or len(shape) != 2:
        raise ValueError("every system needs a statistics matrix of one shape (n segments × k)")
    n, k = shape
    if n == 0:
        raise MetricError("cannot test an empty batch")
    m_total = n_resamples if n_resamples is not None else (1000 if test == "bs" else 10_000)
    if m_total < 1:
        raise ValueError("need at least one resample")
    n_sys = len(mats)
    scores = np.array([metric.aggregate(x) for x in mats])
    stacked = np.hstack(mats)  # n × (systems · k)
    pairs = [(i, j) for i in range(n_sys) for j in range(i + 1, n_sys)]
    counts = np.zeros(len(pairs), dtype=np.int64)
    if test == "bs":
        sums = resampled_sum_matrix(n, m_total, stacked, seed)
        boot = np.column_stack(
            [metric.scores_from_resampled_sums(part) for part in np.split(sums, n_sys, axis=1)]
        )  # resamples × systems
        for p, (i, j) in enumerate(pairs):
            diffs = np.abs(boot[:, j] - boot[:, i])
            counts[p] = int(np.sum((diffs - diffs.mean()) > abs(scores[j] - scores[i])))
    else:
        integer = bool(np.all(stacked == np.round(stacked)))
        totals = stacked.sum(axis=0)
        exact32 = exact_in_float32(stacked)
        dtype = np.float32 if exact32 else np.float64
        for mask in ar_masks(n, m_total, seed):
            with one_blas_thread():
                sel = (mask.astype(dtype) @ stacked.astype(dtype, copy=False)).astype(np.float64)  # mask · S_s
            rows_a, rows_b = [], []
            for i, j in pairs:
                si, sj = sel[:, i * k : (i + 1) * k], sel[:, j * k : (j + 1) * k]
                rows_a.append(si + (totals[j * k : (j + 1) * k] - sj))
                rows_b.append(sj + (totals[i * k : (i + 1) * k] - si))
            both = np.vstack(rows_a + rows_b)
            if integer:
                both = np.rint(both).astype(np.int64)
            sc = np.asarray(metric.scores_from_sums(both), dtype=np.float64).reshape(2, len(pairs), -1)
            diffs = np.abs(sc[0] - sc[1])
            counts += (diffs > np.abs(scores[[j for _, j in pairs]] - scores[[i for i, _ in pairs]])[:, None]).sum(
                axis=1
            )
    pv = np.ones((n_sys, n_sys))
    for p, (i, j) in enumerate(pairs):
        pv[i, j] = pv[j, i] = (counts[p] + 1) / (m_total + 1)
    return PairwiseResult(
        statistics=tuple(float(x) for x in scores),
        pvalues=tuple(tuple(float(x) for x in row) for row in pv),
        test=test,
        n=int(n),
        n_resamples=int(m_total),
        seed=seed,
    )
