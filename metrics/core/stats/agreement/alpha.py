"""Krippendorff's α at four levels of measurement, with bootstrap intervals over items."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import krippendorff
import numpy as np

from .._shared import percentile_ci, weight_chunks
from ..results import AgreementResult
from ._shared import ALPHA_LEVELS, MAX_CATEGORIES, AlphaLevel, as_ratings, values_observed


def unit_coincidences(values: np.ndarray, domain: np.ndarray) -> np.ndarray:
    """Per-item coincidence matrices, flattened: (n_items, V·V).

    Krippendorff (2011, eq. for o_ck): item u with m_u ≥ 2 values contributes
    (n_uc n_uk − [c = k] n_uc) / (m_u − 1); items with fewer values contribute nothing.
    """
    counts = np.stack([(values == v).sum(axis=0) for v in domain], axis=1).astype(float)
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(domain.size)
    outer[:, idx, idx] -= counts
    denom = np.where(m >= 2, m - 1, np.inf)
    return (outer / denom[:, None, None]).reshape(counts.shape[0], -1)


def _distance(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """δ²(c, k) for each resample: (B, V, V).  ``n_v`` is (B, V).

    nominal: [c ≠ k]; interval: (c − k)²; ordinal: (Σ_{g=c..k} n_g − (n_c + n_k)/2)²;
    ratio: ((c − k)/(c + k))², 0 where c + k = 0 (Krippendorff 2011, sec. "ratio metric").
    """
    b, v = n_v.shape
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (b, v, v))
    if level == "interval":
        diff = domain[:, None] - domain[None, :]
        return np.broadcast_to(diff**2, (b, v, v))
    if level == "ratio":
        add = domain[:, None] + domain[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(add != 0, (domain[:, None] - domain[None, :]) / np.where(add != 0, add, 1), 0.0)
        return np.broadcast_to(ratio**2, (b, v, v))
    if level == "ordinal":
        cum = np.concatenate([np.zeros((b, 1)), np.cumsum(n_v, axis=1)], axis=1)
        lo = np.minimum.outer(np.arange(v), np.arange(v))
        hi = np.maximum.outer(np.arange(v), np.arange(v))
        between = cum[:, hi + 1] - cum[:, lo]
        return (between - (n_v[:, :, None] + n_v[:, None, :]) / 2) ** 2
    raise ValueError(f"unknown level of measurement {level!r}; choose from {', '.join(ALPHA_LEVELS)}")


def alpha_from_coincidences(o: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """α = 1 − D_o / D_e for each coincidence matrix in ``o`` (B, V, V)."""
    n_v = o.sum(axis=1)
    n = n_v.sum(axis=1)
    e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(domain.size)) / (n - 1)[:, None, None]
    d = _distance(domain, n_v, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (o * d).sum(axis=(1, 2)) / (e * d).sum(axis=(1, 2))


def _interval_unit_sums(values: np.ndarray) -> np.ndarray:
    """Per pairable item: (m_u, S1_u, S2_u, (m_u S2_u − S1_u²)/(m_u − 1)), shape (n, 4).

    Numerically stable: the values are first centred on their overall mean (α is
    invariant to a shift), and the within-item term is computed from deviations,
    m_u S2_u − S1_u² = m_u Σ (x − x̄_u)², instead of subtracting two large sums.
    Without this, scores offset by 1e8 lost three digits and an offset of 1e10 gave
    α = 1.06 (issue 12).
    """
    present = ~np.isnan(values)
    m = present.sum(axis=0).astype(float)
    finite = values[present]
    centre = float(finite.mean()) if finite.size else 0.0
    x = np.where(present, values - centre, 0.0)
    s1, s2 = x.sum(axis=0), (x**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit_mean = np.where(m > 0, s1 / np.where(m > 0, m, 1), 0.0)
        dev2 = (np.where(present, x - unit_mean, 0.0) ** 2).sum(axis=0)
        within = m * dev2 / (m - 1)
    return np.column_stack([m, s1, s2, within])


def _interval_alpha_from_sums(sums: np.ndarray) -> np.ndarray:
    """Interval α from summed unit statistics (B, 4).

    With squared differences, Σ_{i≠j∈u}(x_i − x_j)² = 2(m_u S2_u − S1_u²), so
    α = 1 − (n − 1) Σ_u (m_u S2_u − S1_u²)/(m_u − 1) / (n S2 − S1²), n = Σ m_u: the
    coincidence-matrix definition without enumerating the value domain.  The sums come
    from centred values (:func:`_interval_unit_sums`), so n S2 − S1² does not cancel.
    """
    n, s1, s2, within = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (n - 1) * within / (n * s2 - s1**2)


def krippendorff_alphas(
    ratings,
    *,
    levels: Sequence[str] = ALPHA_LEVELS,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    value_domain: Sequence[float] | None = None,
) -> dict[str, AgreementResult]:
    """Krippendorff's α at several levels of measurement (nominal, ordinal, interval,
    ratio), sharing one bootstrap.

    α = 1 − D_o / D_e, with D_o = Σ_ck o_ck δ²_ck / n and D_e = Σ_ck n_c n_k δ²_ck /
    (n(n − 1)) over the coincidence matrix o of pairable values (Krippendorff 2011,
    "Computing Krippendorff's alpha-reliability").  Point estimates come from the
    ``krippendorff`` package; missing ratings and incomplete designs are allowed.
    ``n_items`` counts items with at least two ratings (the pairable ones).

    Scores with more than ``MAX_CATEGORIES`` distinct values (e.g. a 0–100 slider)
    are continuous: interval α then uses the equivalent closed form of
    :func:`_interval_alpha_from_sums`, and nominal/ordinal α are NaN with a ``note``.
    """
    values = as_ratings(ratings)
    for level in levels:
        if level not in ALPHA_LEVELS:
            raise ValueError(f"unknown level of measurement {level!r}; choose from {', '.join(ALPHA_LEVELS)}")
    domain = np.asarray(value_domain, dtype=float) if value_domain is not None else values_observed(values)
    pairable = (~np.isnan(values)).sum(axis=0) >= 2
    values = values[:, pairable]
    n_items = int(pairable.sum())
    n_judges = int((~np.isnan(values)).any(axis=1).sum())

    def result(level, stat, low=None, high=None, note=None):
        return AgreementResult(
            stat,
            n_items,
            n_judges,
            "krippendorff_alpha",
            level,
            low,
            high,
            n_boot if low is not None else 0,
            confidence_level,
            note,
        )

    if domain.size < 2 or n_items == 0:
        note = "no item has two ratings" if n_items == 0 else "every rating has the same value"
        return {level: result(level, math.nan, note=note) for level in levels}

    continuous = domain.size > MAX_CATEGORIES
    points: dict[str, float] = {}
    notes: dict[str, str] = {}
    for level in levels:
        if level == "ratio" and (domain < 0).any():
            notes[level] = "ratio level needs scores with a true zero and no negative values"
            points[level] = math.nan
        elif continuous and level != "interval":
            notes[level] = f"scores are not categorical ({domain.size} distinct values)"
            points[level] = math.nan
        elif continuous:
            points[level] = float(_interval_alpha_from_sums(_interval_unit_sums(values).sum(axis=0)[None])[0])
        else:
            points[level] = float(
                krippendorff.alpha(
                    reliability_data=values,
                    value_domain=domain,
                    level_of_measurement=cast(AlphaLevel, level),  # checked against ALPHA_LEVELS above
                )
            )
    boots: dict[str, list[np.ndarray]] = {level: [] for level in levels if level not in notes}
    if n_boot > 0 and boots:
        if continuous:
            unit = _interval_unit_sums(values)
            for w in weight_chunks(n_items, n_boot, seed):
                boots["interval"].append(_interval_alpha_from_sums(w @ unit))
        else:
            unit = unit_coincidences(values, domain)
            v = domain.size
            for w in weight_chunks(n_items, n_boot, seed):
                o = (w @ unit).reshape(-1, v, v)
                for level in boots:
                    boots[level].append(alpha_from_coincidences(o, domain, level))
    out = {}
    for level in levels:
        low = high = None
        if level in boots and boots[level]:
            low, high = percentile_ci(np.concatenate(boots[level]), confidence_level)
        out[level] = result(level, points[level], low, high, notes.get(level))
    return out


def krippendorff_alpha(
    ratings,
    *,
    level: str = "interval",
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    value_domain: Sequence[float] | None = None,
) -> AgreementResult:
    """Krippendorff's α at one level of measurement; see :func:`krippendorff_alphas`."""
    return krippendorff_alphas(
        ratings,
        levels=(level,),
        n_boot=n_boot,
        confidence_level=confidence_level,
        seed=seed,
        value_domain=value_domain,
    )[level]
