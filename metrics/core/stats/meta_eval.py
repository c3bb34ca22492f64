"""Metric meta-evaluation: every metric against the human reference at one level, with
four correlation measures and Williams tests against the best, against a named
baseline, and between every pair (the matrix of Graham & Baldwin 2014).

Kept apart from :mod:`~metrics.core.stats.metric_human` (PEM's Table 3 and the
Pearson leaderboard) so that the report can carry the full meta-evaluation next to
it without changing that table's contract.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .correlation import correlation, system_means
from .results import jsonable
from .significance import williams_test
from .soft_pairwise import soft_pairwise_accuracy

__all__ = ["META_METHODS", "metric_meta_evaluation"]

#: The measures of the meta-evaluation: Pearson (the Williams test's measure),
#: Spearman, Kendall τ-b and pairwise accuracy (Deutsch et al. 2023; within each
#: original at segment level when ``groups`` are given).
META_METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall_b", "accuracy")


def _williams_p(r_h: Sequence[float], r_mm: np.ndarray, a: int, b: int, n: int) -> float | None:
    """One-tailed Williams p that metric ``a`` correlates better with humans than ``b``."""
    r12, r13, r23 = r_h[a], r_h[b], r_mm[a, b]
    if n <= 3 or not all(math.isfinite(x) for x in (r12, r13, r23)):
        return None
    try:
        return float(williams_test(r12, r13, float(np.clip(r23, -1.0, 1.0)), n).pvalue)
    except ValueError:
        return None


def _soft_accuracies(h: np.ndarray, m: np.ndarray, systems: np.ndarray, segments: np.ndarray) -> list[float]:
    """Soft pairwise accuracy of each metric column, over systems × segments mean-score matrices."""
    frame = pd.DataFrame({"system": systems, "segment": segments, "human": h})
    for k in range(m.shape[1]):
        frame[k] = m[:, k]
    cells = frame.groupby(["system", "segment"], sort=True).mean()
    human = cells["human"].unstack("segment")
    return [
        soft_pairwise_accuracy(
            human.to_numpy(dtype=float), cells[k].unstack("segment").reindex_like(human).to_numpy(dtype=float)
        ).statistic
        for k in range(m.shape[1])
    ]


def metric_meta_evaluation(
    human,
    metrics: pd.DataFrame,
    *,
    level: str = "segment",
    systems=None,
    groups=None,
    methods: Sequence[str] = META_METHODS,
    baseline: str | None = None,
    significance_level: float = 0.05,
    segments=None,
) -> dict[str, Any]:
    """Rank the metrics (columns of ``metrics``) by Pearson r with ``human`` at ``level``.

    Rows with a missing human or metric score are dropped first, so every metric is
    judged on the same n items (the Williams test's precondition; Graham & Baldwin
    2014).  At ``level="system"`` human and metric scores are averaged per system
    (``systems`` required) and correlated over systems; ``groups`` (segment level
    only) makes pairwise accuracy compare only items of the same group (original).

    Williams' test (Williams 1959, one-tailed, Pearson; :func:`williams_test`):
    ``p_vs_best`` — H1 the best metric correlates better than this one;
    ``p_vs_baseline`` — H1 the better-correlated of (this metric, ``baseline``)
    correlates better than the other, with ``better_than_baseline`` saying which
    way; ``matrix`` — for metrics in rank order, ``pvalues[i][j]`` (i < j) is the p
    that metric i correlates better than metric j (None on and below the diagonal).

    Soft pairwise accuracy (Thompson et al. 2024;
    :func:`~metrics.core.stats.soft_pairwise.soft_pairwise_accuracy`): at
    ``level="system"`` with ``segments`` (each item's segment, e.g. its original),
    every row also carries ``soft_accuracy``, from the systems × segments matrices
    of mean human and metric scores, and ``"soft_accuracy"`` joins ``methods``.

    Returns a JSON-able dict ``{"level", "n", "methods", "baseline", "rows",
    "matrix": {"metrics", "pvalues"}}``; each row holds ``metric``, ``rank``, one
    value per method, ``p_vs_best``, ``significantly_worse`` and the baseline keys.
    """
    if level not in ("segment", "system"):
        raise ValueError(f"level must be 'segment' or 'system', not {level!r}")
    names = [str(c) for c in metrics.columns]
    if baseline is not None and baseline not in names:
        baseline = None
    h = np.asarray(human, dtype=float).ravel()
    m = metrics.to_numpy(dtype=float)
    if m.shape[0] != h.size:
        raise ValueError("human and metric scores differ in length")
    keep = ~np.isnan(h) & ~np.isnan(m).any(axis=1)
    h, m = h[keep], m[keep]
    g = None
    soft: list[float] | None = None
    if level == "system":
        if systems is None:
            raise ValueError("a system-level meta-evaluation needs systems")
        s = np.asarray(systems).ravel()[keep]
        if segments is not None:
            soft = _soft_accuracies(h, m, s, np.asarray(segments).ravel()[keep])
        hs = system_means(h, s)
        m = (
            np.column_stack([system_means(m[:, k], s).reindex(hs.index).to_numpy() for k in range(m.shape[1])])
            if m.shape[1]
            else m.reshape(len(hs), 0)
        )
        h = hs.to_numpy(dtype=float)
    elif groups is not None:
        g = np.asarray(groups).ravel()[keep]
    n = int(h.size)

    stats = {
        meth: [
            correlation(h, m[:, k], method=meth, groups=g if meth == "accuracy" else None).statistic
            for k in range(len(names))
        ]
        for meth in methods
    }
    r_h = [correlation(h, m[:, k], method="pearson").statistic for k in range(len(names))]
    r_mm = np.corrcoef(m, rowvar=False) if len(names) > 1 and n > 1 else np.ones((len(names), len(names)))
    r_mm = np.atleast_2d(r_mm)
    order = sorted(range(len(names)), key=lambda k: (-r_h[k] if math.isfinite(r_h[k]) else math.inf, names[k]))
    best = order[0] if order else None
    base = names.index(baseline) if baseline is not None else None

    rows = []
    for rank, k in enumerate(order, start=1):
        row: dict[str, Any] = {"metric": names[k], "rank": rank}
        row.update({meth: stats[meth][k] for meth in methods})
        if soft is not None:
            row["soft_accuracy"] = soft[k]
        p_best = None if best is None or k == best else _williams_p(r_h, r_mm, best, k, n)
        row["p_vs_best"] = p_best
        row["significantly_worse"] = None if p_best is None else bool(p_best < significance_level)
        if base is not None:
            if k == base:
                row.update(delta_vs_baseline=0.0, better_than_baseline=None, p_vs_baseline=None)
            else:
                better = bool(r_h[k] > r_h[base])
                p = _williams_p(r_h, r_mm, k, base, n) if better else _williams_p(r_h, r_mm, base, k, n)
                row.update(delta_vs_baseline=r_h[k] - r_h[base], better_than_baseline=better, p_vs_baseline=p)
        rows.append(row)

    pvalues = [
        [None if j <= i else _williams_p(r_h, r_mm, order[i], order[j], n) for j in range(len(order))]
        for i in range(len(order))
    ]
    return jsonable(
        {
            "level": level,
            "n": n,
            "methods": list(methods) + (["soft_accuracy"] if soft is not None else []),
            "baseline": baseline,
            "accuracy_groups": "original" if g is not None else None,
            "rows": rows,
            "matrix": {"metrics": [names[k] for k in order], "pvalues": pvalues},
        }
    )
