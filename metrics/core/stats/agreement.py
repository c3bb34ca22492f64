"""Inter-judge agreement per criterion: Krippendorff's α, Fleiss' κ, Cohen's κ, ICC.

Ratings come as a judges × items array with NaN for "not rated" (Krippendorff's
reliability-data layout; see :func:`metrics.core.stats.data.rating_matrix`).

Confidence intervals are percentile bootstraps over items (Efron & Tibshirani 1993):
items are resampled with replacement, seeded, and each coefficient is recomputed.
Each coefficient is a function of per-item sufficient statistics (coincidence
matrices for α, category counts for Fleiss' κ, confusion counts for Cohen's κ, row
sums for the ICC), so a resample is a weighted sum: ``weights @ per_item_stats``,
vectorised over many resamples at once instead of re-running the estimator.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
from scipy import sparse
from scipy import stats as sps
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa

from .correlation import pearson
from .data import RatingMatrix, rating_matrix, validate_judgments
from .results import AgreementResult, ICCResult, jsonable

__all__ = [
    "ALPHA_LEVELS",
    "CriterionAgreement",
    "ICC_FORMS",
    "IncompleteDesignError",
    "MAX_CATEGORIES",
    "JudgePairResult",
    "SCALE_ALPHA_LEVEL",
    "agreement_by_criterion",
    "cohen_kappa",
    "criterion_agreement",
    "fleiss_kappa",
    "icc",
    "icc_judges_for_complete_items",
    "icc_range",
    "krippendorff_alpha",
    "krippendorff_alphas",
    "pairwise_cohen_kappa",
    "pairwise_pearson",
]

ALPHA_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
KAPPA_WEIGHTS: tuple[str, ...] = ("unweighted", "linear", "quadratic")
ICC_FORMS: tuple[str, ...] = ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)")


class IncompleteDesignError(ValueError):
    """The coefficient needs a design the data does not have (reason in the message)."""


# ---------------------------------------------------------------------------
# bootstrap plumbing


def _as_ratings(ratings) -> np.ndarray:
    if isinstance(ratings, RatingMatrix):
        ratings = ratings.values
    arr = np.asarray(ratings, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be a 2-D judges × items array, got shape {arr.shape}")
    return arr


def _weight_chunks(n_items: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Yield (chunk, n_items) resampling-count matrices, ``n_boot`` rows in total.

    Row b holds how often each item appears in bootstrap sample b; rows sum to n_items.
    The chunk size depends only on n_items, so a seed always gives the same samples.
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, 2_000_000 // max(n_items, 1)))
    done = 0
    while done < n_boot:
        b = min(chunk, n_boot - done)
        # int32 halves the cost of drawing; b · n_items ≤ 2e6 always fits.
        draws = rng.integers(0, n_items, size=(b, n_items), dtype=np.int32)
        draws += (np.arange(b, dtype=np.int32) * n_items)[:, None]
        yield np.bincount(draws.ravel(), minlength=b * n_items).reshape(b, n_items).astype(float)
        done += b


def _percentile_ci(values: np.ndarray, confidence_level: float) -> tuple[float | None, float | None]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None, None
    tail = (1 - confidence_level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


# ---------------------------------------------------------------------------
# Krippendorff's alpha


def _value_domain(values: np.ndarray) -> np.ndarray:
    return np.unique(values[~np.isnan(values)])


def _unit_coincidences(values: np.ndarray, domain: np.ndarray) -> np.ndarray:
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


def _alpha_from_coincidences(o: np.ndarray, domain: np.ndarray, level: str) -> np.ndarray:
    """α = 1 − D_o / D_e for each coincidence matrix in ``o`` (B, V, V)."""
    n_v = o.sum(axis=1)
    n = n_v.sum(axis=1)
    e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(domain.size)) / (n - 1)[:, None, None]
    d = _distance(domain, n_v, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (o * d).sum(axis=(1, 2)) / (e * d).sum(axis=(1, 2))


# Above this many distinct score values the scores are treated as continuous: the
# category-based coefficients (nominal/ordinal α, Fleiss' κ, Cohen's κ) are not
# computed, and interval α uses the closed form below instead of a V × V matrix.
MAX_CATEGORIES = 50


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
    values = _as_ratings(ratings)
    for level in levels:
        if level not in ALPHA_LEVELS:
            raise ValueError(f"unknown level of measurement {level!r}; choose from {', '.join(ALPHA_LEVELS)}")
    domain = np.asarray(value_domain, dtype=float) if value_domain is not None else _value_domain(values)
    pairable = (~np.isnan(values)).sum(axis=0) >= 2
    values = values[:, pairable]
    n_items = int(pairable.sum())
    n_judges = int((~np.isnan(values)).any(axis=1).sum())

    def result(level, stat, low=None, high=None, note=None):
        return AgreementResult(
            stat, n_items, n_judges, "krippendorff_alpha", level, low, high,
            n_boot if low is not None else 0, confidence_level, note,
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
                krippendorff.alpha(reliability_data=values, value_domain=domain, level_of_measurement=level)
            )
    boots: dict[str, list[np.ndarray]] = {level: [] for level in levels if level not in notes}
    if n_boot > 0 and boots:
        if continuous:
            unit = _interval_unit_sums(values)
            for w in _weight_chunks(n_items, n_boot, seed):
                boots["interval"].append(_interval_alpha_from_sums(w @ unit))
        else:
            unit = _unit_coincidences(values, domain)
            v = domain.size
            for w in _weight_chunks(n_items, n_boot, seed):
                o = (w @ unit).reshape(-1, v, v)
                for level in boots:
                    boots[level].append(_alpha_from_coincidences(o, domain, level))
    out = {}
    for level in levels:
        low = high = None
        if level in boots and boots[level]:
            low, high = _percentile_ci(np.concatenate(boots[level]), confidence_level)
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


# ---------------------------------------------------------------------------
# Fleiss' kappa


def fleiss_kappa(
    ratings, *, n_boot: int = 0, confidence_level: float = 0.95, seed: int = 0
) -> AgreementResult:
    """Fleiss' (1971) κ = (P̄ − P̄_e) / (1 − P̄_e) for nominal categories.

    P_i = (Σ_j n_ij² − n) / (n(n − 1)) is the agreement on item i among its n ratings,
    P̄ their mean, P̄_e = Σ_j p_j² with p_j the share of all ratings in category j.
    The point estimate is statsmodels' ``fleiss_kappa`` on the item × category table.

    Precondition: every rated item has the same number n ≥ 2 of ratings (Fleiss
    allows different judges per item, but not different counts).  Otherwise raises
    :class:`IncompleteDesignError`; use Krippendorff's α for such designs.
    """
    values = _as_ratings(ratings)
    counts_per_item = (~np.isnan(values)).sum(axis=0)
    rated = counts_per_item > 0
    values, counts_per_item = values[:, rated], counts_per_item[rated]
    if values.shape[1] == 0:
        raise IncompleteDesignError("Fleiss' kappa: no item has any rating")
    lo, hi = int(counts_per_item.min()), int(counts_per_item.max())
    if lo != hi:
        raise IncompleteDesignError(
            f"Fleiss' kappa needs the same number of ratings on every item; items have {lo} to {hi} "
            "(incomplete design: use Krippendorff's alpha)"
        )
    if lo < 2:
        raise IncompleteDesignError("Fleiss' kappa needs at least two ratings per item")
    domain = _value_domain(values)
    if domain.size > MAX_CATEGORIES:
        raise ValueError(f"Fleiss' kappa needs categorical scores; found {domain.size} distinct values")
    table = np.stack([(values == v).sum(axis=0) for v in domain], axis=1).astype(float)
    n_judges = int((~np.isnan(values)).any(axis=1).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        point = float(_sm_fleiss_kappa(table, method="fleiss")) if domain.size > 1 else math.nan
    low = high = None
    if n_boot > 0 and domain.size > 1:
        n_items, n = table.shape[0], lo
        p_item = ((table**2).sum(axis=1) - n) / (n * (n - 1))
        boots = []
        for w in _weight_chunks(n_items, n_boot, seed):
            p_bar = (w @ p_item) / n_items
            p_cat = (w @ table) / (n_items * n)
            p_exp = (p_cat**2).sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                boots.append((p_bar - p_exp) / (1 - p_exp))
        low, high = _percentile_ci(np.concatenate(boots), confidence_level)
    return AgreementResult(
        point, int(table.shape[0]), n_judges, "fleiss_kappa", "nominal", low, high, n_boot, confidence_level
    )


# ---------------------------------------------------------------------------
# Cohen's kappa


def _kappa_weights(n_labels: int, weights: str) -> np.ndarray:
    idx = np.arange(n_labels)
    diff = np.abs(idx[:, None] - idx[None, :]).astype(float)
    if weights == "unweighted":
        return (diff > 0).astype(float)
    if weights == "linear":
        return diff
    if weights == "quadratic":
        return diff**2
    raise ValueError(f"unknown kappa weighting {weights!r}; choose from {', '.join(KAPPA_WEIGHTS)}")


def _kappa_from_confusion(conf: np.ndarray, w: np.ndarray) -> np.ndarray:
    """κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij, E = outer(row sums, column sums) / n; conf is (B, L, L)."""
    n = conf.sum(axis=(1, 2))
    expected = conf.sum(axis=2)[:, :, None] * conf.sum(axis=1)[:, None, :] / n[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (conf * w).sum(axis=(1, 2)) / (expected * w).sum(axis=(1, 2))


def cohen_kappa(
    a,
    b,
    *,
    weights: str | None = None,
    labels: Sequence[float] | None = None,
    n_boot: int = 0,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> AgreementResult:
    """Cohen's (1960) κ between two judges, optionally weighted (Cohen 1968).

    κ_w = 1 − Σ w_ij O_ij / Σ w_ij E_ij over the confusion matrix O of the items both
    judges rated (NaN = not rated) and its chance expectation E; w_ij = [i ≠ j]
    (unweighted), |i − j| (linear) or (i − j)² (quadratic), where i, j are positions
    in ``labels`` (default: the values either judge used, sorted).  This is exactly
    scikit-learn's ``cohen_kappa_score``, which the tests check.  Pass the design's
    scale as ``labels`` (e.g. 1–5) for weighted κ: the weights are positions in
    ``labels``, so leaving out a value nobody used would shrink every distance past it.

    ``std_error`` is the large-sample standard error of Fleiss, Cohen & Everitt (1969)
    (statsmodels' ``cohens_kappa(...).std_kappa``); without a bootstrap the interval is
    κ ± z_{1−α/2}·SE, clipped to κ's range [−1, 1] (``ci_method = "asymptotic"``).
    """
    level = weights or "unweighted"
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"a and b differ in length ({x.size} != {y.size})")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    lab = np.unique(np.concatenate([x, y])) if labels is None else np.asarray(labels, dtype=float)
    if lab.size > MAX_CATEGORIES:
        raise ValueError(f"Cohen's kappa needs categorical scores; found {lab.size} distinct values")
    wmat = _kappa_weights(lab.size, level)
    if x.size == 0 or lab.size < 2:
        return AgreementResult(math.nan, int(x.size), 2, "cohen_kappa", level)
    xi, yi = np.searchsorted(lab, x), np.searchsorted(lab, y)
    if (xi >= lab.size).any() or (yi >= lab.size).any() or (lab[xi] != x).any() or (lab[yi] != y).any():
        raise ValueError("a or b contains a value not in labels")
    cell = xi * lab.size + yi
    conf = np.bincount(cell, minlength=lab.size**2).reshape(1, lab.size, lab.size).astype(float)
    point = float(_kappa_from_confusion(conf, wmat)[0])
    low = high = se = None
    method = None
    if x.size >= 2 and math.isfinite(point):
        with np.errstate(divide="ignore", invalid="ignore"):
            sm = _sm_cohens_kappa(conf[0], wt=None if level == "unweighted" else level)
        se = float(sm.std_kappa) if math.isfinite(float(sm.std_kappa)) else None
        if se is not None and n_boot <= 0:
            z = float(sps.norm.ppf(0.5 + confidence_level / 2))
            low, high, method = max(-1.0, point - z * se), min(1.0, point + z * se), "asymptotic"
    if n_boot > 0:
        method = "bootstrap"
        onehot = sparse.csr_matrix(
            (np.ones(cell.size), (np.arange(cell.size), cell)), shape=(cell.size, lab.size**2)
        )
        boots = []
        for w in _weight_chunks(x.size, n_boot, seed):
            confs = np.asarray((onehot.T @ w.T).T).reshape(-1, lab.size, lab.size)
            boots.append(_kappa_from_confusion(confs, wmat))
        low, high = _percentile_ci(np.concatenate(boots), confidence_level)
    return AgreementResult(point, int(x.size), 2, "cohen_kappa", level, low, high, max(n_boot, 0), confidence_level,
                           None, se, method)


@dataclass(frozen=True)
class JudgePairResult:
    """Results for one pair of judges over the ``n_shared`` items both rated."""

    judge_a: str
    judge_b: str
    n_shared: int
    results: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"judges": [a, b], "n_shared": n, <name>: <result dict>, ...}``."""
        out: dict[str, Any] = {"judges": [self.judge_a, self.judge_b], "n_shared": self.n_shared}
        out.update({k: jsonable(v) for k, v in self.results.items()})
        return out


def _judge_pairs(values: np.ndarray, judges: Sequence[str], min_shared: int):
    present = ~np.isnan(values)
    shared = present.astype(np.int32) @ present.T.astype(np.int32)
    for i, j in combinations(range(len(judges)), 2):
        if shared[i, j] >= min_shared:
            yield i, j, int(shared[i, j])


def pairwise_cohen_kappa(
    ratings,
    *,
    judges: Sequence[str] | None = None,
    weightings: Sequence[str] = KAPPA_WEIGHTS,
    labels: Sequence[float] | None = None,
    min_shared: int = 2,
) -> tuple[JudgePairResult, ...]:
    """Cohen's κ for every pair of judges sharing ≥ ``min_shared`` items, each weighting.

    ``labels`` defaults to every value any judge used, so that all pairs weight the
    same scale.  Results are keyed by weighting (``unweighted``, ``linear``,
    ``quadratic``).
    """
    values = _as_ratings(ratings)
    names = _judge_names(ratings, judges, values.shape[0])
    lab = _value_domain(values) if labels is None else np.asarray(labels, dtype=float)
    out = []
    for i, j, n in _judge_pairs(values, names, min_shared):
        res = {w: cohen_kappa(values[i], values[j], weights=w, labels=lab) for w in weightings}
        out.append(JudgePairResult(names[i], names[j], n, res))
    return tuple(out)


def pairwise_pearson(
    ratings, *, judges: Sequence[str] | None = None, min_shared: int = 3
) -> tuple[JudgePairResult, ...]:
    """Pearson's r for every pair of judges over the items both rated (key ``pearson``)."""
    values = _as_ratings(ratings)
    names = _judge_names(ratings, judges, values.shape[0])
    return tuple(
        JudgePairResult(names[i], names[j], n, {"pearson": pearson(values[i], values[j])})
        for i, j, n in _judge_pairs(values, names, min_shared)
    )


def _judge_names(ratings, judges, n: int) -> tuple[str, ...]:
    if judges is not None:
        names = tuple(map(str, judges))
    elif isinstance(ratings, RatingMatrix):
        names = ratings.judges
    else:
        names = tuple(str(i) for i in range(n))
    if len(names) != n:
        raise ValueError(f"{len(names)} judge names for {n} rows of ratings")
    return names


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
    values = _as_ratings(ratings)
    names = _judge_names(ratings, judges, values.shape[0])
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
            note = ("below 0: judges differ more on the same item than items differ from each other "
                    "(no reliable variance between items)")
        if not (math.isfinite(low) and math.isfinite(high)) or low > high:
            low = high = None
            note = note or "no F-based interval: a mean square is zero"
        else:
            # Numerical noise only: the F-based bounds lie inside the range by construction.
            low, high = max(low, lo_r), min(high, hi_r)
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
            low,
            high,
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
    values = _as_ratings(ratings)
    names = list(_judge_names(ratings, judges, values.shape[0]))
    present = ~np.isnan(values)
    keep = [i for i in range(len(names)) if present[i].any()]
    left: list[str] = [names[i] for i in range(len(names)) if not present[i].any()]
    while len(keep) > 2 and int(present[keep].all(axis=0).sum()) < min_items:
        counts = [(int(present[i].sum()), -i) for i in keep]
        drop = -min(counts)[1]
        keep.remove(drop)
        left.append(names[drop])
    return tuple(names[i] for i in keep), tuple(left)


# ---------------------------------------------------------------------------
# everything for one criterion


@dataclass(frozen=True)
class CriterionAgreement:
    """All agreement figures for one criterion (see the module docstring).

    ``fleiss_kappa`` / ``icc`` are None when the design does not allow them; the
    reason is then in ``fleiss_kappa_reason`` / ``icc_reason``.  ``scale`` is the
    criterion's scale type when known and ``alpha_level`` the level of measurement
    that fits it (:data:`SCALE_ALPHA_LEVEL`): the headline α.
    """

    criterion: str
    n_items: int
    n_judges: int
    krippendorff_alpha: dict[str, AgreementResult]
    fleiss_kappa: AgreementResult | None
    fleiss_kappa_reason: str | None
    icc: dict[str, ICCResult] | None
    icc_reason: str | None
    cohen_kappa: tuple[JudgePairResult, ...]
    pearson: tuple[JudgePairResult, ...]
    scale: str | None = None
    alpha_level: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with the same keys as the fields."""
        return {
            "criterion": self.criterion,
            "n_items": self.n_items,
            "n_judges": self.n_judges,
            "krippendorff_alpha": jsonable(self.krippendorff_alpha),
            "fleiss_kappa": jsonable(self.fleiss_kappa),
            "fleiss_kappa_reason": self.fleiss_kappa_reason,
            "icc": jsonable(self.icc),
            "icc_reason": self.icc_reason,
            "cohen_kappa": [p.to_dict() for p in self.cohen_kappa],
            "pearson": [p.to_dict() for p in self.pearson],
            "scale": self.scale,
            "alpha_level": self.alpha_level,
        }


#: Level of measurement per scale type (Krippendorff 2011, "Computing Krippendorff's
#: alpha-reliability"): labelled points are ordered categories (ordinal), a 0–100 slider
#: is interval data (WMT direct assessment, Graham et al. 2013), named categories nominal.
SCALE_ALPHA_LEVEL = {"points": "ordinal", "slider": "interval", "categorical": "nominal"}


def criterion_agreement(
    matrix: RatingMatrix,
    criterion: str,
    *,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    pairwise: bool = True,
    min_shared: int = 30,
    scale: Sequence[float] | None = None,
    scale_type: str | None = None,
) -> CriterionAgreement:
    """Krippendorff's α (four levels), Fleiss' κ, ICC and pairwise Cohen's κ / Pearson
    for one criterion's judges × items matrix.  Bootstrap CIs (``n_boot`` resamples of
    items) for α and Fleiss' κ, F-based ones for the ICC; pairwise figures are point
    estimates.  The ICC is computed on the judges
    :func:`icc_judges_for_complete_items` keeps, and refused (``icc_reason``) when
    fewer than ``min_shared`` items are complete.  Cohen's κ (with its standard error
    and asymptotic interval) weighs distances on the design's ``scale`` (its values,
    e.g. 1–5) when every score lies on it, else on the values observed.

    ``scale_type`` (``points``, ``slider`` or ``categorical``; None: unknown, compute
    all) makes the statistics follow the scale: a slider gets α at the interval level,
    ICC and Pearson, no κ (κ counts exact matches of categories, which 0–100 values
    seldom are); categories get nominal α and κ, no ICC or Pearson (their codes have
    no distances); points (ordinal) get every coefficient, with ordinal α first."""
    values = matrix.values
    if scale_type is not None and scale_type not in SCALE_ALPHA_LEVEL:
        raise ValueError(f"unknown scale type {scale_type!r}; choose from {', '.join(SCALE_ALPHA_LEVEL)}")
    levels = {"slider": ("interval",), "categorical": ("nominal",)}.get(scale_type, ALPHA_LEVELS)
    alphas = krippendorff_alphas(values, levels=levels, n_boot=n_boot, confidence_level=confidence_level, seed=seed)
    if scale_type == "slider":
        fk, fk_reason = None, "κ is for categories or ordered points; this criterion is a 0–100 slider (interval)"
    else:
        try:
            fk, fk_reason = fleiss_kappa(values, n_boot=n_boot, confidence_level=confidence_level, seed=seed), None
        except ValueError as exc:  # IncompleteDesignError, or scores that are not categorical
            fk, fk_reason = None, str(exc)
    if scale_type == "categorical":
        ic, ic_reason = None, "the ICC needs distances between values; this criterion's values are named categories"
    else:
        kept, left_out = icc_judges_for_complete_items(values, judges=matrix.judges, min_items=min_shared)
        rows = [matrix.judges.index(j) for j in kept]
        try:
            ic = icc(values[rows], judges=kept, confidence_level=confidence_level, min_items=min_shared)
            ic = {form: replace(res, judges_left_out=left_out) for form, res in ic.items()}
            ic_reason = None
        except IncompleteDesignError as exc:
            ic, ic_reason = None, str(exc)
            if left_out:
                ic_reason += f" (after leaving out {', '.join(left_out)})"
    categorical = _value_domain(values).size <= MAX_CATEGORIES and scale_type != "slider"
    if scale is not None:
        observed = _value_domain(values)
        scale = np.asarray(sorted(scale), dtype=float)
        if not np.isin(observed, scale).all():
            scale = None  # scores off the scale (e.g. z-scores): weigh the values observed
    ck = pairwise_cohen_kappa(values, judges=matrix.judges, labels=scale) if pairwise and categorical else ()
    pr = pairwise_pearson(values, judges=matrix.judges) if pairwise and scale_type != "categorical" else ()
    return CriterionAgreement(
        criterion,
        int(((~np.isnan(values)).sum(axis=0) >= 1).sum()),
        matrix.n_judges,
        alphas,
        fk,
        fk_reason,
        ic,
        ic_reason,
        ck,
        pr,
        scale_type,
        SCALE_ALPHA_LEVEL.get(scale_type) if scale_type else None,
    )


def agreement_by_criterion(
    judgments: pd.DataFrame,
    *,
    criteria: Sequence[str] | None = None,
    include_controls: bool = False,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    pairwise: bool = True,
    min_shared: int = 30,
) -> dict[str, CriterionAgreement]:
    """:func:`criterion_agreement` for each criterion of a canonical judgment frame.

    Controls are left out by default: their expected scores are extreme and easy, so
    they would inflate agreement (the reason PEM §5.2 drops them from Table 1).
    """
    frame = validate_judgments(judgments)
    names = list(criteria) if criteria is not None else sorted(frame["criterion"].unique())
    return {
        c: criterion_agreement(
            rating_matrix(frame, c, include_controls=include_controls),
            c,
            n_boot=n_boot,
            confidence_level=confidence_level,
            seed=seed,
            pairwise=pairwise,
            min_shared=min_shared,
        )
        for c in names
    }
