"""The human ceiling: how well one judge agrees with the others, and each metric "as one more judge".

A metric's correlation with the mean human score means little alone: people
disagree too, and a metric cannot be expected to agree with the judges better
than they agree with each other. Proietti et al. (ACL 2025) therefore report
metric–human agreement beside human–human agreement; WMT's and mt-metrics-eval's
LLM-as-judge submissions are read the same way.

Leave one judge out (segment level, genuine items, one criterion). For each judge j
who shares at least ``min_shared`` items with others, let ō_{−j} be the mean score
of the *other* judges on each of j's items. Then

    ceiling = (1 / J) Σ_j r(s_j, ō_{−j})           (one judge against the others)
    agree(M) = (1 / J) Σ_j r(M, ō_{−j})             (the metric against the same others)

with r Pearson's correlation over j's items and J the judges counted. Both use the
same references on the same items, so agree(M) ≥ ceiling means the metric agrees
with the judges at least as well as a typical judge does. Intervals: percentile
bootstrap over items (one set of resamples shared by the ceiling and every metric,
so the difference agree(M) − ceiling has its own paired interval).

**Reaches the ceiling** is a non-inferiority statement with a stated margin δ (Pearson r
units, :data:`CEILING_MARGIN` = 0.05 unless the caller gives another): the lower end of the
difference's interval is at least −δ, so that with the interval's confidence the metric is
at most δ below a typical judge. Before issue 41 it meant "the interval reaches 0", which
a wide interval always does: a pure-noise metric "reached" the ceiling in 13 of 20 small
studies. Too few items for a tight interval now read as *not shown*, never as reached.

:func:`judge_pool_agreement` answers the other question, whether an LLM judge could
join the panel: Krippendorff's α of the human judges alone and, apart, of the
human judges plus that one LLM judge — never mixed into the humans' own figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from metrics.core.stats.agreement.alpha import krippendorff_alpha

from ._shared import percentile_ci, weight_chunks
from .data import rating_matrix

__all__ = ["CEILING_MARGIN", "human_ceiling", "judge_pool_agreement", "ALPHA_LEVEL_BY_SCALE"]

#: The non-inferiority margin of "reaches the ceiling" (Pearson r units): see the module docstring.
CEILING_MARGIN = 0.05

#: Krippendorff's level of measurement per scale type (as the study's agreement table uses).
ALPHA_LEVEL_BY_SCALE = {"points": "ordinal", "slider": "interval", "categorical": "nominal"}


def _weighted_r(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of (x, y) under each row of item weights ``w`` (B × n): one value per row."""
    n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = (w @ x) / n, (w @ y) / n
        cov = (w @ (x * y)) / n - mx * my
        vx, vy = (w @ (x * x)) / n - mx**2, (w @ (y * y)) / n - my**2
        r = cov / np.sqrt(vx * vy)
    r[~((vx > 1e-12) & (vy > 1e-12))] = np.nan
    return r


def human_ceiling(
    judgments: pd.DataFrame,
    metrics: pd.DataFrame | None = None,
    *,
    criterion: str,
    min_shared: int = 30,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    margin: float = CEILING_MARGIN,
) -> dict[str, Any]:
    """The human ceiling and each metric's agreement with the judges (see the module docstring).

    ``judgments`` is a validated judgment frame; ``metrics`` a frame indexed by item
    with one column per metric (missing: NaN). Items where some metric has no score
    are left out for all, so that every figure stands on the same items. Returns a
    JSON-able dict: ``criterion``, ``n_judges``, ``n_items``, ``human`` (statistic,
    ci_low, ci_high), ``metrics`` (one row each: metric, statistic, ci_low, ci_high,
    delta, delta_ci_low, delta_ci_high, reaches: whether delta_ci_low ≥ −``margin``, None
    without a bootstrap), ``margin``, ``note`` (why it is empty, if so).
    """
    rm = rating_matrix(judgments, criterion, include_controls=False)
    values = rm.values
    names = [] if metrics is None else [str(c) for c in metrics.columns]
    if metrics is not None and names:
        mvals = metrics.reindex(list(rm.items)).to_numpy(dtype=float)
        keep = np.isfinite(mvals).all(axis=1)
        values, mvals = values[:, keep], mvals[keep]
    else:
        mvals = np.zeros((values.shape[1], 0))
    rated = ~np.isnan(values)
    totals, counts = np.nansum(values, axis=0), rated.sum(axis=0)
    judges: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for j in range(values.shape[0]):
        idx = np.flatnonzero(rated[j] & (counts >= 2))
        if idx.size < max(int(min_shared), 4):
            continue
        others = (totals[idx] - values[j, idx]) / (counts[idx] - 1)
        judges.append((idx, values[j, idx], others))
    out: dict[str, Any] = {
        "criterion": criterion,
        "method": "pearson",
        "level": "segment",
        "scheme": "leave one judge out",
        "min_shared": int(min_shared),
        "n_judges": len(judges),
        "n_items": int(values.shape[1]),
        "confidence_level": confidence_level,
        "margin": float(margin),
        "human": None,
        "metrics": [],
        "note": None,
    }
    if not judges:
        out["note"] = f"no judge shares {max(int(min_shared), 4)} or more rated items with other judges"
        return out

    def agreement(w: np.ndarray) -> np.ndarray:
        # Columns: the ceiling, then each metric; rows: the weightings in w.
        cols = np.zeros((w.shape[0], 1 + len(names)))
        for idx, own, others in judges:
            wj = w[:, idx]
            cols[:, 0] += _weighted_r(wj, own, others)
            for k in range(len(names)):
                cols[:, 1 + k] += _weighted_r(wj, mvals[idx, k], others)
        return cols / len(judges)

    point = agreement(np.ones((1, values.shape[1])))[0]
    boots = (
        np.vstack([agreement(w) for w in weight_chunks(values.shape[1], n_boot, seed)])
        if n_boot > 0
        else np.zeros((0, 1 + len(names)))
    )

    def ci(col: np.ndarray) -> tuple[float | None, float | None]:
        return percentile_ci(col, confidence_level) if col.size else (None, None)

    low, high = ci(boots[:, 0])
    out["human"] = {"statistic": _finite(point[0]), "ci_low": low, "ci_high": high}
    for k, name in enumerate(names):
        low, high = ci(boots[:, 1 + k])
        dlow, dhigh = ci(boots[:, 1 + k] - boots[:, 0])
        delta = point[1 + k] - point[0]
        out["metrics"].append(
            {
                "metric": name,
                "statistic": _finite(point[1 + k]),
                "ci_low": low,
                "ci_high": high,
                "delta": _finite(delta),
                "delta_ci_low": dlow,
                "delta_ci_high": dhigh,
                "reaches": None if dlow is None or not math.isfinite(delta) else bool(dlow >= -margin),
            }
        )
    return out


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def judge_pool_agreement(
    judgments: pd.DataFrame,
    llm_judges: Mapping[str, pd.Series],
    *,
    criterion: str,
    scale_type: str | None = None,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Krippendorff's α of the human judges, and apart, of the humans plus each LLM judge.

    ``llm_judges`` maps a name to its scores on ``criterion`` (a Series indexed by
    item); the LLM rates every item it scored, as one more coder. The level of
    measurement follows the criterion's scale (points: ordinal, slider: interval,
    categorical: nominal; interval when unknown). Genuine items only. Returns
    ``{"criterion", "level", "humans": α, "with_llm": [{"judge", **α}]}`` (α as
    :class:`~metrics.core.stats.results.AgreementResult` dicts); the humans' figure
    is computed without any LLM.
    """
    level = ALPHA_LEVEL_BY_SCALE.get(scale_type or "", "interval")
    rm = rating_matrix(judgments, criterion, include_controls=False)

    def alpha(values: np.ndarray) -> dict[str, Any]:
        return krippendorff_alpha(
            values, level=level, n_boot=n_boot, confidence_level=confidence_level, seed=seed
        ).to_dict()

    humans = alpha(rm.values)
    rows = []
    for name, scores in llm_judges.items():
        row = pd.Series(scores).reindex(list(rm.items)).to_numpy(dtype=float)
        pooled = np.vstack([rm.values, row[None, :]])
        rows.append({"judge": str(name), "n_rated": int(np.isfinite(row).sum()), **alpha(pooled)})
    return {"criterion": criterion, "level": level, "humans": humans, "with_llm": rows}
