"""Intraclass correlation: the six Shrout & Fleiss (1979) forms with F-based intervals."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from ..results import ICCResult
from ._shared import ICC_FORMS, IncompleteDesignError, as_ratings, judge_names

# ---------------------------------------------------------------------------
# Intraclass correlation


def _icc_from_sums(n, k, g, row_sq_dev, col_sq_dev, total_sq_dev):
    """All six Shrout & Fleiss ICCs from the two-way ANOVA sums of squares."""
    ssr, ssc, sst = row_sq_dev, col_sq_dev, total_sq_dev
    sse = sst - ssr - ssc
    bms = ssr / (n - 1)
    wms = (sst - ssr) / (n * (k - 1))
    jms = ssc / (k - 1)
    ems = sse / ((n - 1) * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "ICC(1,1)": (bms - wms) / (bms + (k - 1) * wms),
            "ICC(2,1)": (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
            "ICC(3,1)": (bms - ems) / (bms + (k - 1) * ems),
            "ICC(1,k)": (bms - wms) / bms,
            "ICC(2,k)": (bms - ems) / (bms + (jms - ems) / n),
            "ICC(3,k)": (bms - ems) / bms,
        }, (bms, wms, jms, ems)


def _icc_intervals(n: int, k: int, point: dict, ms: tuple, confidence_level: float) -> dict[str, tuple[float, float]]:
    """F-based confidence intervals of the six ICCs (McGraw & Wong 1996, Table 7; Shrout
    & Fleiss 1979 for ICC(1,·) and ICC(3,·)), the formulas pingouin's ``intraclass_corr``
    uses, at any ``confidence_level`` (pingouin fixes 95 %).

    ICC(1,·)/ICC(3,·): F_L = F / F_{1−α/2}(df1, df2), F_U = F · F_{1−α/2}(df2, df1),
    bounds (F_L − 1)/(F_L + k − 1) … and 1 − 1/F_L … for the k-judge means.
    ICC(2,·): Satterthwaite's approximate df v for the two-way random model.
    Written out (not pingouin itself) because the mean squares are already here and
    pingouin rebuilds a long frame and an ANOVA for each call; the tests check equality.
    """
    bms, wms, jms, ems = ms
    a = 1 - confidence_level
    df1, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    fq = sps.f.ppf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f1, f3 = bms / wms, bms / ems
        f1l, f1u = f1 / fq(1 - a / 2, df1, df_w), f1 * fq(1 - a / 2, df_w, df1)
        f3l, f3u = f3 / fq(1 - a / 2, df1, df_e), f3 * fq(1 - a / 2, df_e, df1)
        icc2 = point["ICC(2,1)"]
        fj = jms / ems
        vn = df_e * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        vd = df1 * k**2 * icc2**2 * fj**2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        v = vn / vd
        f2u, f2l = fq(1 - a / 2, n - 1, v), fq(1 - a / 2, v, n - 1)
        l2 = n * (bms - f2u * ems) / (f2u * (k * jms + (k * n - k - n) * ems) + n * bms)
        u2 = n * (f2l * bms - ems) / (k * jms + (k * n - k - n) * ems + n * f2l * bms)
        return {
            "ICC(1,1)": ((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
            "ICC(2,1)": (l2, u2),
            "ICC(3,1)": ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
            "ICC(1,k)": (1 - 1 / f1l, 1 - 1 / f1u),
            "ICC(2,k)": (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
            "ICC(3,k)": (1 - 1 / f3l, 1 - 1 / f3u),
        }


def icc_range(form: str, k: int) -> tuple[float, float]:
    """The values an ICC can take: [−1/(k−1), 1] for one judge's score (the ANOVA bound
    BMS ≥ 0), (−∞, 1] for the mean of k judges (Spearman–Brown of the former)."""
    if form.endswith(",1)"):
        return -1.0 / (k - 1), 1.0
    return -math.inf, 1.0


def icc(
    ratings,
    *,
    confidence_level: float = 0.95,
    min_items: int = 2,
    judges: Sequence[str] | None = None,
) -> dict[str, ICCResult]:
    """The six intraclass correlations of Shrout & Fleiss (1979), keyed ``ICC(1,1)`` …

    From the two-way ANOVA of n items × k judges: BMS (between items), WMS (within
    items), JMS (between judges), EMS (residual) mean squares;
    ICC(1,1) = (BMS − WMS) / (BMS + (k−1)WMS);
    ICC(2,1) = (BMS − EMS) / (BMS + (k−1)EMS + k(JMS − EMS)/n);
    ICC(3,1) = (BMS − EMS) / (BMS + (k−1)EMS);
    ICC(1,k) = (BMS − WMS) / BMS; ICC(2,k) = (BMS − EMS) / (BMS + (JMS − EMS)/n);
    ICC(3,k) = (BMS − EMS) / BMS.
    Intervals are F-based (McGraw & Wong 1996; :func:`_icc_intervals`), not bootstrap:
    the method has its own sampling theory, and a bootstrap of a handful of items
    gives bounds far outside the coefficient's range.

    The ANOVA needs every judge on every item, so only items rated by all judges are
    used (complete-case analysis; ``n_items`` says how many were kept of
    ``n_items_total``).  Raises :class:`IncompleteDesignError` when fewer than two
    judges or fewer than ``max(2, min_items)`` complete items remain — an ICC on a
    few items is noise (the issue's demo: 3 items, CI [−0.33, 0.82]).
    """
    values = as_ratings(ratings)
    names = judge_names(ratings, judges, values.shape[0])
    rated_rows = ~np.isnan(values).all(axis=1)
    values, names = values[rated_rows], tuple(n for n, keep in zip(names, rated_rows) if keep)
    total = int((~np.isnan(values)).any(axis=0).sum())
    complete = ~np.isnan(values).any(axis=0)
    x = values[:, complete].T  # items × judges
    n, k = x.shape
    need = max(2, int(min_items))
    if k < 2 or n < need:
        raise IncompleteDesignError(
            f"ICC needs at least {need} items rated by every judge ({k} judges); the complete-case "
            f"analysis keeps {n} of {total} rated items"
        )
    g = x.mean()
    row = x.mean(axis=1)
    col = x.mean(axis=0)
    ssr = k * ((row - g) ** 2).sum()
    ssc = n * ((col - g) ** 2).sum()
    sst = ((x - g) ** 2).sum()
    point, ms = _icc_from_sums(n, k, g, ssr, ssc, sst)
    bms, wms, jms, ems = ms
    intervals = _icc_intervals(n, k, point, ms, confidence_level)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1 = bms / wms
        f23 = bms / ems
    df_w, df_e = n * (k - 1), (n - 1) * (k - 1)
    p1 = float(sps.f.sf(f1, n - 1, df_w)) if np.isfinite(f1) else math.nan
    p23 = float(sps.f.sf(f23, n - 1, df_e)) if np.isfinite(f23) else math.nan
    out = {}
    for form in ICC_FORMS:
        one = form.startswith("ICC(1")
        lo_r, hi_r = icc_range(form, k)
        stat = float(point[form])
        low, high = (float(v) for v in intervals[form])
        note = None
        if not math.isfinite(stat):
            note = "not defined: every item got the same score from every judge (no variance)"
            stat = math.nan
        elif stat < 0:
            note = (
                "below 0: judges differ more on the same item than items differ from each other "
                "(no reliable variance between items)"
            )
        ci_low: float | None
        ci_high: float | None
        if not (math.isfinite(low) and math.isfinite(high)) or low > high:
            ci_low = ci_high = None
            note = note or "no F-based interval: a mean square is zero"
        else:
            # Numerical noise only: the F-based bounds lie inside the range by construction.
            ci_low, ci_high = max(low, lo_r), min(high, hi_r)
        label = form.replace(",k)", f",{k})")
        out[form] = ICCResult(
            stat,
            label,
            int(n),
            int(k),
            float(f1 if one else f23),
            int(n - 1),
            int(df_w if one else df_e),
            p1 if one else p23,
            ci_low,
            ci_high,
            0,
            confidence_level,
            "f_test",
            total,
            (),
            note,
        )
    return out


def icc_judges_for_complete_items(
    ratings, *, judges: Sequence[str] | None = None, min_items: int = 30
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Which judges to keep so that the ICC's complete-case analysis keeps ≥ ``min_items``.

    Greedy: while fewer than ``min_items`` items are rated by every kept judge, leave
    out the judge with the fewest ratings (ties: the later name), as long as two judges
    remain.  Returns ``(kept, left_out)``.  Why: one judge who rated 7 items would
    otherwise shrink the ICC of three judges who share 1,200 to those 7 items.
    """
    values = as_ratings(ratings)
    names = list(judge_names(ratings, judges, values.shape[0]))
    present = ~np.isnan(values)
    keep = [i for i in range(len(names)) if present[i].any()]
    left: list[str] = [names[i] for i in range(len(names)) if not present[i].any()]
    while len(keep) > 2 and int(present[keep].all(axis=0).sum()) < min_items:
        counts = [(int(present[i].sum()), -i) for i in keep]
        drop = -min(counts)[1]
        keep.remove(drop)
        left.append(names[drop])
    return tuple(names[i] for i in keep), tuple(left)
