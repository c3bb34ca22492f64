"""Agreement between judges' rankings: Kendall's coefficient of concordance W, ties corrected.

For m judges who each rank the same n candidates (ties as mid-ranks), let R_i be the sum
of the ranks candidate i got and T_j = Σ_g (t_g³ − t_g) over judge j's tied groups g of
size t_g. Kendall & Babington Smith (1939); with the tie correction of Kendall (1948,
§6.9) — the form pingouin's ``friedman`` and Siegel & Castellan (1988, eq. 9.16) use:

    W = 12 S / (m² (n³ − n) − m Σ_j T_j),   S = Σ_i (R_i − m (n + 1) / 2)².

W = 1 when all judges give the same order, 0 when the rank sums are all equal. Friedman's
statistic is χ² = m (n − 1) W with n − 1 degrees of freedom (it equals
``scipy.stats.friedmanchisquare``, which applies the same tie correction), giving the
p-value of "no agreement".

In a ranking study every original is its own set of candidates, so W is computed per
original over the judges who ranked it (at least two), and summarised by the mean over
originals. When judges saw different candidate sets for an original, only the candidates
every one of them ranked are kept (re-ranked with mid-ranks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from metrics.core.stats.results import jsonable

from .orders import Ranking, midranks

__all__ = ["ConcordanceResult", "OriginalConcordance", "kendalls_w", "ranking_concordance"]


@dataclass(frozen=True)
class OriginalConcordance:
    """W of the judges of one original; ``chi2``/``pvalue`` Friedman's test of W = 0."""

    original: str
    n_judges: int
    n_candidates: int
    w: float
    chi2: float
    pvalue: float


@dataclass(frozen=True)
class ConcordanceResult:
    """W per original (≥ 2 judges) and its mean and median over originals."""

    mean_w: float
    median_w: float
    n_originals: int
    originals: tuple[OriginalConcordance, ...]

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "mean_w": self.mean_w,
                "median_w": self.median_w,
                "n_originals": self.n_originals,
                "originals": [jsonable(o) for o in self.originals],
            }
        )


def kendalls_w(ranks) -> tuple[float, float, float]:
    """(W, χ², p) of an (m judges × n candidates) array of ranks, 1 = best, ties as mid-ranks.

    The formula of the module docstring; T_j is read off each row's repeated values.
    W is NaN when every judge ties every candidate (the denominator is 0) or m < 2 or n < 2.
    """
    x = np.asarray(ranks, dtype=float)
    if x.ndim != 2:
        raise ValueError("ranks must be a judges × candidates array")
    m, n = x.shape
    if m < 2 or n < 2:
        return math.nan, math.nan, math.nan
    r = x.sum(axis=0)
    s = float(((r - m * (n + 1) / 2) ** 2).sum())
    ties = 0.0
    for row in x:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    den = m**2 * (n**3 - n) - m * ties
    if den <= 0:
        return math.nan, math.nan, math.nan
    w = 12 * s / den
    chi2 = m * (n - 1) * w
    return w, chi2, float(sps.chi2.sf(chi2, n - 1))


def ranking_concordance(rankings: Sequence[Ranking]) -> ConcordanceResult:
    """Kendall's W of every original ranked by at least two judges (the module docstring).

    A judge who ranked an original twice counts with the last of the rankings given.
    """
    by_original: dict[str, dict[str, Ranking]] = {}
    for r in rankings:
        by_original.setdefault(r.original, {})[r.judge] = r
    results = []
    for original, judges in sorted(by_original.items()):
        if len(judges) < 2:
            continue
        common = set.intersection(*(set(r.systems) for r in judges.values()))
        if len(common) < 2:
            continue
        names = sorted(common)
        rows = []
        for r in judges.values():
            kept = [tuple(s for s in g if s in common) for g in r.groups]
            rank = midranks([g for g in kept if g])
            rows.append([rank[s] for s in names])
        w, chi2, p = kendalls_w(rows)
        results.append(OriginalConcordance(original, len(judges), len(names), w, chi2, p))
    ws = np.array([o.w for o in results if math.isfinite(o.w)])
    mean_w = float(ws.mean()) if ws.size else math.nan
    median_w = float(np.median(ws)) if ws.size else math.nan
    return ConcordanceResult(mean_w, median_w, len(results), tuple(results))
