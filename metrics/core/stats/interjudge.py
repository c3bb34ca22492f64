"""Inter-judge correlation (PEM, Liu, Dahlmeier & Ng 2010, §5.2 and Table 1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metrics.core.stats.agreement.pairwise import JudgePairResult, judge_pairs

from .correlation import correlations
from .data import rating_matrix, validate_judgments

__all__ = ["fisher_z_mean", "interjudge_correlations", "interjudge_summary"]


def interjudge_correlations(
    judgments: pd.DataFrame,
    *,
    criterion: str = "overall",
    methods: Sequence[str] = ("pearson", "spearman", "kendall_b"),
    min_shared: int = 3,
    excluded_judges: Sequence[str] = (),
) -> tuple[JudgePairResult, ...]:
    """Pairwise correlation between judges on one criterion, controls excluded.

    PEM §5.2: *sentence level* — over the items both judges rated, the correlation of
    their two score vectors; *system level* — the correlation of the two judges'
    per-system mean scores (each judge's mean over the items they rated), over the
    systems both judges rated.  Controls are excluded "as that would inflate the
    correlation".  Each :class:`JudgePairResult` has ``results = {"sentence":
    {method: CorrelationResult}, "system": {...}}`` and ``n_shared`` items.
    """
    frame = validate_judgments(judgments, excluded_judges=excluded_judges)
    matrix = rating_matrix(frame, criterion, include_controls=False)
    values = matrix.values
    item_system = (
        frame.loc[(frame["criterion"] == criterion) & ~frame["is_control"], ["item", "system"]]
        .drop_duplicates("item")
        .set_index("item")["system"]
    )
    systems = item_system.reindex(list(matrix.items)).to_numpy()
    sys_codes, sys_names = pd.factorize(systems, sort=True)
    # Per-judge per-system means: sums and counts by bincount over (judge, system).
    present = ~np.isnan(values)
    sums = np.zeros((matrix.n_judges, len(sys_names)))
    counts = np.zeros_like(sums)
    for j in range(matrix.n_judges):
        sums[j] = np.bincount(sys_codes[present[j]], weights=values[j, present[j]], minlength=len(sys_names))
        counts[j] = np.bincount(sys_codes[present[j]], minlength=len(sys_names))
    with np.errstate(invalid="ignore", divide="ignore"):
        sys_means = np.where(counts > 0, sums / counts, np.nan)
    out = []
    for i, j, n in judge_pairs(values, matrix.judges, min_shared):
        out.append(
            JudgePairResult(
                matrix.judges[i],
                matrix.judges[j],
                n,
                {
                    "sentence": correlations(values[i], values[j], methods=methods),
                    "system": correlations(sys_means[i], sys_means[j], methods=methods),
                },
            )
        )
    return tuple(out)


# Pearson's r of exactly ±1 has an infinite Fisher z; such a pair is capped here so
# that it counts as very strong evidence instead of making the mean infinite.
_R_CAP = 1 - 1e-9


def fisher_z_mean(rs: Sequence[float], ns: Sequence[int]) -> tuple[float, int]:
    """Weighted mean of correlations through Fisher's z: tanh(Σ w_i atanh(r_i) / Σ w_i),
    w_i = n_i − 3, the inverse variance of atanh(r) (Fisher 1921; Hedges & Olkin 1985,
    ch. 11).  Correlations that are not finite or have n_i ≤ 3 get no weight.  Returns
    ``(mean, number of correlations used)``; the mean is NaN when none can be used.

    Why weighted: an unweighted mean of pairs lets a pair on 3 shared items weigh as
    much as a pair on 1,200 (issue 12: 0.022 against ~0.68 for every well-sampled pair).
    """
    r = np.asarray(rs, dtype=float)
    n = np.asarray(ns, dtype=float)
    use = np.isfinite(r) & (n > 3)
    if not use.any():
        return math.nan, 0
    w = n[use] - 3
    z = np.arctanh(np.clip(r[use], -_R_CAP, _R_CAP))
    return float(np.tanh((w * z).sum() / w.sum())), int(use.sum())


def interjudge_summary(
    pairs: Sequence[JudgePairResult], *, min_shared: int = 30, method: str = "pearson"
) -> tuple[dict[str, dict], list[dict]]:
    """Summarise pairwise inter-judge correlations per level, weighing evidence.

    A pair enters the summary only when the judges share at least ``min_shared``
    items (sentence level) — below that it is listed with the reason — and the
    summary is :func:`fisher_z_mean` with weights n − 3, n being the pair's own number
    of observations at that level (shared items; shared systems at system level).
    Returns ``(summary, per_pair)``: ``summary[level] = {"statistic", "n_pairs",
    "n_pairs_listed", "weights", "note"}``; ``per_pair[i] = {"summarised", "reason"}``.
    """
    flags = []
    for p in pairs:
        if p.n_shared < min_shared:
            flags.append(
                {"summarised": False, "reason": f"{p.n_shared} shared items, fewer than min_shared = {min_shared}"}
            )
        else:
            flags.append({"summarised": True, "reason": None})
    summary = {}
    for level in ("sentence", "system"):
        used = [p for p, f in zip(pairs, flags) if f["summarised"]]
        rs = [p.results[level][method].statistic for p in used]
        ns = [p.results[level][method].n for p in used]
        stat, k = fisher_z_mean(rs, ns)
        note = None
        if k == 0:
            if not pairs:
                note = "no pair of judges shares an item"
            elif not used:
                note = f"no pair of judges shares at least {min_shared} items (min_shared)"
            else:
                unit = "items" if level == "sentence" else "systems"
                note = f"no pair has a defined correlation on more than 3 shared {unit}"
        summary[level] = {
            "statistic": stat,
            "method": method,
            "n_pairs": k,
            "n_pairs_listed": len(pairs),
            "weights": "Fisher z, weights n - 3",
            "min_shared": min_shared,
            "note": note,
        }
    return summary, flags
