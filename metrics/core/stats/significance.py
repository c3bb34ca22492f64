"""Significance tests for comparing metrics and systems.

* :func:`williams_test` — two dependent correlations sharing a variable (Williams
  1959), as used for metric comparison by Graham & Baldwin (2014).
* :func:`permutation_test` — paired permutation test of a difference in correlation.
* :func:`paired_bootstrap` — difference in mean score between two systems (Koehn 2004).
* :func:`document_level_test` — Kauchak & Barzilay's (2006) document protocol.
* :func:`system_ranking` — ranking with bootstrap CIs and WMT-style clusters.
* :func:`metric_pairwise_tests` — every pair of systems of a metric's leaderboard
  compared from the metric's stored sufficient statistics, by paired bootstrap
  (Koehn 2004) or approximate randomization (Noreen 1989; Riezler & Maxwell 2005),
  with sacrebleu's p-values (``paired_bs`` / ``paired_ar``) for its seeds.

Everything random is seeded through ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from metrics.core.base.bootstrap import pairwise_tests
from metrics.core.base.metric import Metric
from metrics.core.base.params import DEFAULT_SEED
from metrics.core.base.results import PairwiseResult
from metrics.core.stats._shared import percentile_ci, weight_chunks

from .correlation import correlation
from .results import (
    BootstrapDifferenceResult,
    DocumentLevelResult,
    PermutationResult,
    SystemRank,
    WilliamsResult,
)

__all__ = [
    "LeaderboardTests",
    "document_level_test",
    "metric_pairwise_tests",
    "paired_bootstrap",
    "permutation_test",
    "system_ranking",
    "williams_test",
    "williams_test_scores",
]


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsResult:
    """Williams' test of H0: ρ12 = ρ13 against H1: ρ12 > ρ13 (one-tailed).

    Variable 1 is the human score, 2 and 3 two metrics, r23 their correlation.
    Williams (1959); Steiger (1980, eq. 7); Graham & Baldwin (2014, eq. 1):

        t = (r12 − r13) √((n − 1)(1 + r23))
            / √( 2K (n − 1)/(n − 3) + (r12 + r13)²/4 · (1 − r23)³ ),
        K = 1 − r12² − r13² − r23² + 2 r12 r13 r23,

    with n − 3 degrees of freedom; p = P(T ≥ t).  Raises ``ValueError`` when n ≤ 3, a
    correlation is outside [−1, 1], or the three are inconsistent (K < 0).
    """
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not (isinstance(r, (int, float, np.floating)) and -1.0 <= float(r) <= 1.0):
            raise ValueError(f"{name} must be a correlation in [-1, 1], got {r!r}")
    if n <= 3:
        raise ValueError(f"the Williams test needs n > 3, got n = {n}")
    r12, r13, r23 = float(r12), float(r13), float(r23)
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if k < -1e-12:
        raise ValueError(f"r12, r13, r23 are not the correlations of three variables (determinant {k:.3g} < 0)")
    k = max(k, 0.0)
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den = math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    if den == 0:
        # Only reachable with r23 = 1 and r12 = r13: two identical metrics.
        t = 0.0 if num == 0 else math.copysign(math.inf, num)
    else:
        t = num / den
    p = float(sps.t.sf(t, n - 3))
    return WilliamsResult(float(t), p, int(n - 3), int(n), r12, r13, r23)


def williams_test_scores(human, metric_a, metric_b, *, method: str = "pearson") -> WilliamsResult:
    """Williams' test that metric A correlates better with ``human`` than metric B.

    Computes r12 = corr(human, A), r13 = corr(human, B), r23 = corr(A, B) with
    ``method`` (``pearson`` as in Graham & Baldwin 2014, or ``spearman``) over the
    items where all three scores are present, then :func:`williams_test`.
    """
    h, a, b = _complete(human, metric_a, metric_b)
    r12 = correlation(h, a, method=method).statistic
    r13 = correlation(h, b, method=method).statistic
    r23 = correlation(a, b, method=method).statistic
    if any(not math.isfinite(r) for r in (r12, r13, r23)):
        raise ValueError("a correlation is undefined (constant scores or too few items)")
    return williams_test(r12, r13, r23, h.size)


def _complete(*arrays) -> tuple[np.ndarray, ...]:
    arrs = [np.asarray(a, dtype=float).ravel() for a in arrays]
    if len({a.size for a in arrs}) != 1:
        raise ValueError("score vectors differ in length")
    keep = np.ones(arrs[0].size, dtype=bool)
    for a in arrs:
        keep &= ~np.isnan(a)
    return tuple(a[keep] for a in arrs)


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


def _row_pearson(h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Pearson r of vector h with every row of x."""
    hc = h - h.mean()
    xc = x - x.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (xc @ hc) / np.sqrt((xc**2).sum(axis=1) * (hc**2).sum())


def permutation_test(
    human,
    metric_a,
    metric_b,
    *,
    method: str = "pearson",
    n_permutations: int = 1000,
    seed: int = 0,
) -> PermutationResult:
    """Paired permutation test of δ = corr(h, A) − corr(h, B), two-sided.

    Under H0 the two metrics are exchangeable per item, so each permutation swaps
    the (z-scored) A and B scores of each item with probability ½ and recomputes δ
    (the PERM-BOTH test of Deutsch, Dror & Roth 2021).  Z-scoring first puts the two
    metrics on one scale and leaves Pearson, Spearman and Kendall unchanged.
    p = (1 + #{|δ*| ≥ |δ|}) / (1 + n_permutations).
    """
    if method not in ("pearson", "spearman", "kendall_b", "kendall_c", "kendall"):
        raise ValueError(f"permutation_test supports pearson, spearman and kendall, not {method!r}")
    h, a, b = _complete(human, metric_a, metric_b)
    n = h.size
    observed = correlation(h, a, method=method).statistic - correlation(h, b, method=method).statistic
    if not math.isfinite(observed):
        return PermutationResult(math.nan, math.nan, int(n), n_permutations, method)
    za, zb = _zscore(a), _zscore(b)
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, min(n_permutations, 2_000_000 // max(n, 1)))
    done = 0
    href = sps.rankdata(h) if method == "spearman" else h
    while done < n_permutations:
        m = min(chunk, n_permutations - done)
        swap = rng.random((m, n)) < 0.5
        pa = np.where(swap, zb, za)
        pb = np.where(swap, za, zb)
        if method == "pearson":
            delta = _row_pearson(h, pa) - _row_pearson(h, pb)
        elif method == "spearman":
            delta = _row_pearson(href, sps.rankdata(pa, axis=1)) - _row_pearson(href, sps.rankdata(pb, axis=1))
        else:
            delta = np.array(
                [
                    correlation(h, pa[i], method=method).statistic - correlation(h, pb[i], method=method).statistic
                    for i in range(m)
                ]
            )
        hits += int((np.abs(delta) >= abs(observed) - 1e-12).sum())
        done += m
    return PermutationResult(float(observed), (hits + 1) / (n_permutations + 1), int(n), n_permutations, method)


def paired_bootstrap(
    scores_a,
    scores_b,
    *,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> BootstrapDifferenceResult:
    """Paired bootstrap (Koehn 2004) of δ = mean(a − b) over the items both scored.

    Items are resampled with replacement; the CI is the percentile interval of δ*,
    and the two-sided p-value tests δ = 0 with the null-centred resamples:
    p = (1 + #{|δ* − δ| ≥ |δ|}) / (1 + n_boot).
    """
    a, b = _complete(scores_a, scores_b)
    d = a - b
    n = d.size
    if n == 0:
        raise ValueError("no item has both scores")
    delta = float(d.mean())
    boots = np.concatenate([(w @ d) / n for w in weight_chunks(n, n_boot, seed)]) if n_boot > 0 else np.zeros(0)
    low, high = percentile_ci(boots, confidence_level) if n_boot > 0 else (math.nan, math.nan)
    hits = int((np.abs(boots - delta) >= abs(delta) - 1e-12).sum()) if delta != 0 else n_boot
    return BootstrapDifferenceResult(delta, (hits + 1) / (n_boot + 1), int(n), n_boot, low, high, confidence_level)


def document_level_test(
    segments: pd.DataFrame,
    *,
    human: str,
    metric_a: str,
    metric_b: str,
    segments_per_document: int,
    n_documents: int | None = None,
    system_col: str = "system",
    segment_col: str = "original",
    seed: int = 0,
) -> DocumentLevelResult:
    """Kauchak & Barzilay (2006, §4.2) document-level comparison of two metrics.

    Segments (originals) scored for every system are shuffled (seeded) and cut into
    disjoint documents of ``segments_per_document``.  In each document every system
    gets the mean of its segment scores — the human score as in the paper; for the
    metric the mean of segment scores stands in for scoring the concatenated text
    (exact for averaged metrics, an approximation for corpus-level BLEU) — and the
    Pearson correlation over systems is taken for each metric.  A paired t-test
    (``scipy.stats.ttest_rel``) over the documents compares the two metrics'
    correlations; ``statistic`` > 0 means A correlates better.
    """
    for col in (human, metric_a, metric_b, system_col, segment_col):
        if col not in segments.columns:
            raise ValueError(f"segments lack column {col!r}")
    if segments_per_document < 1:
        raise ValueError("segments_per_document must be positive")
    frame = segments[[system_col, segment_col, human, metric_a, metric_b]].dropna()
    frame = frame.groupby([segment_col, system_col], sort=True)[[human, metric_a, metric_b]].mean()
    n_systems = frame.index.get_level_values(system_col).nunique()
    per_segment = frame.groupby(level=segment_col).size()
    complete = np.array(sorted(per_segment.index[per_segment == n_systems]))
    rng = np.random.default_rng(seed)
    order = rng.permutation(complete)
    available = order.size // segments_per_document
    n_docs = available if n_documents is None else min(n_documents, available)
    if n_docs < 2:
        raise ValueError(
            f"need at least 2 documents of {segments_per_document} segments; "
            f"{order.size} segments are scored for all {n_systems} systems"
        )
    if n_systems < 3:
        raise ValueError("a correlation over systems needs at least 3 systems")
    doc_of = pd.Series(
        np.repeat(np.arange(n_docs), segments_per_document), index=order[: n_docs * segments_per_document]
    )
    sub = frame.loc[frame.index.get_level_values(segment_col).isin(doc_of.index)].copy()
    sub["document"] = doc_of.reindex(sub.index.get_level_values(segment_col)).to_numpy()
    doc_means = sub.groupby(["document", system_col])[[human, metric_a, metric_b]].mean()
    corr_a, corr_b = [], []
    for _, doc in doc_means.groupby(level="document"):
        corr_a.append(correlation(doc[human].to_numpy(), doc[metric_a].to_numpy()).statistic)
        corr_b.append(correlation(doc[human].to_numpy(), doc[metric_b].to_numpy()).statistic)
    ca, cb = np.array(corr_a), np.array(corr_b)
    if np.allclose(ca - cb, (ca - cb)[0]):
        # ttest_rel is undefined when all differences are equal (zero variance).
        t, p = (0.0, 1.0) if np.allclose(ca, cb) else (math.copysign(math.inf, (ca - cb)[0]), 0.0)
    else:
        res = sps.ttest_rel(ca, cb)
        t, p = float(res.statistic), float(res.pvalue)
    return DocumentLevelResult(
        t,
        p,
        int(n_docs),
        int(segments_per_document),
        float(np.nanmean(ca)),
        float(np.nanmean(cb)),
        tuple(map(float, ca)),
        tuple(map(float, cb)),
    )


def system_ranking(
    scores: pd.DataFrame,
    *,
    score_col: str = "score",
    system_col: str = "system",
    unit_col: str = "original",
    n_boot: int = 1000,
    significance_level: float = 0.05,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> tuple[SystemRank, ...]:
    """Rank systems by mean score with bootstrap CIs and significance clusters.

    Each system's score is the mean over units (originals) of its per-unit mean.
    Units are resampled with replacement (one resample shared by all systems, so the
    comparisons are paired); the CI is the percentile interval of each system's mean.
    Systems are sorted best first; the system below starts a new cluster when the
    paired bootstrap (:func:`paired_bootstrap` over the units both systems have) says
    it is significantly worse than the one above at ``significance_level`` — systems
    not significantly different from the next share a cluster (as in WMT's ranking
    clusters, Bojar et al. 2013).
    """
    for col in (score_col, system_col, unit_col):
        if col not in scores.columns:
            raise ValueError(f"scores lack column {col!r}")
    table = scores.groupby([unit_col, system_col], sort=True)[score_col].mean().unstack(system_col)
    if table.shape[1] == 0:
        return ()
    x = table.to_numpy(dtype=float)
    present = ~np.isnan(x)
    filled = np.where(present, x, 0.0)
    means = filled.sum(axis=0) / present.sum(axis=0)
    boots = []
    if n_boot > 0:
        for w in weight_chunks(x.shape[0], n_boot, seed):
            with np.errstate(invalid="ignore", divide="ignore"):
                boots.append((w @ filled) / (w @ present))
    boot = np.concatenate(boots) if boots else np.zeros((0, x.shape[1]))
    order = np.argsort(-means, kind="stable")
    names = [str(s) for s in table.columns]
    out = []
    cluster = 1
    for pos, j in enumerate(order):
        low, high = percentile_ci(boot[:, j], confidence_level) if n_boot > 0 else (None, None)
        p_next = None
        if pos + 1 < order.size:
            nxt = order[pos + 1]
            both = present[:, j] & present[:, nxt]
            if both.sum() >= 2 and n_boot > 0:
                p_next = paired_bootstrap(x[both, j], x[both, nxt], n_boot=n_boot, seed=seed).pvalue
        out.append(
            SystemRank(
                names[j],
                float(means[j]),
                math.nan if low is None else low,
                math.nan if high is None else high,
                int(present[:, j].sum()),
                pos + 1,
                cluster,
                p_next,
            )
        )
        if p_next is not None and p_next < significance_level:
            cluster += 1
    return tuple(out)


@dataclass(frozen=True)
class LeaderboardTests:
    """All pairwise tests of one metric's leaderboard (see :func:`metric_pairwise_tests`).

    ``systems`` in input order; ``statistics[i]`` is system i's corpus score and
    ``pvalues[i][j]`` the two-sided p-value of systems i and j (symmetric).
    """

    metric: str
    systems: tuple[str, ...]
    statistics: tuple[float, ...]
    pvalues: tuple[tuple[float, ...], ...]
    test: str
    n: int
    n_resamples: int
    seed: int | None

    def pvalue(self, a: str, b: str) -> float:
        """p-value of the test between systems ``a`` and ``b``."""
        return self.pvalues[self.systems.index(a)][self.systems.index(b)]


def metric_pairwise_tests(
    metric: Metric,
    stats_by_system: Mapping[str, np.ndarray],
    *,
    test: str = "bs",
    n_resamples: int | None = None,
    seed: int | None = DEFAULT_SEED,
) -> LeaderboardTests:
    """Paired significance tests of every pair of systems from their sufficient statistics.

    ``stats_by_system`` maps each system to its ``(n, k)`` per-segment
    statistics of ``metric``, rows aligned on the same n originals (what a
    metric run stores per candidate: ``metrics.selectors.metric_run_paired_stats``).
    ``test="bs"``: paired bootstrap resampling (Koehn 2004), 1,000 resamples by
    default, p = (#{r : |Δ*_r| − mean|Δ*| > |Δ|} + 1) / (R + 1), as sacrebleu's
    ``paired_bs``; ``test="ar"``: approximate randomization (Noreen 1989;
    Riezler & Maxwell 2005), 10,000 trials by default,
    p = (#{t : |Δ_t| > |Δ|} + 1) / (T + 1), as sacrebleu's ``paired_ar``. Every
    pair uses the resamples (or swap masks) sacrebleu draws from ``seed`` for a
    system against its baseline, so each p-value equals sacrebleu's for that
    pair. Nothing is re-scored from text: resampled scores are the metric's
    ``scores_from_sums`` of re-weighted statistics, all systems and many
    resamples per matrix product (:func:`metrics.core.base.pairwise_tests`).
    Raises ``ValueError`` for fewer than two systems or misaligned statistics.
    """
    names = tuple(str(s) for s in stats_by_system)
    res: PairwiseResult = pairwise_tests(
        metric, [stats_by_system[s] for s in stats_by_system], test=test, n_resamples=n_resamples, seed=seed
    )
    return LeaderboardTests(
        metric=metric.slug,
        systems=names,
        statistics=res.statistics,
        pvalues=res.pvalues,
        test=res.test,
        n=res.n,
        n_resamples=res.n_resamples,
        seed=res.seed,
    )
