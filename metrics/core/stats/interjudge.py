"""Inter-judge correlation (PEM, Liu, Dahlmeier & Ng 2010, §5.2 and Table 1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .agreement import JudgePairResult, _judge_pairs
from .correlation import correlations
from .data import rating_matrix, validate_judgments

__all__ = ["interjudge_correlations"]


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
    for i, j, n in _judge_pairs(values, matrix.judges, min_shared):
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
