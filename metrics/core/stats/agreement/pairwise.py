"""Pairwise figures: Cohen's κ and Pearson's r for every pair of judges sharing enough items."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from ..correlation import pearson
from ..results import jsonable
from ._shared import KAPPA_WEIGHTS, as_ratings, judge_names, values_observed
from .kappa import cohen_kappa


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


def judge_pairs(values: np.ndarray, judges: Sequence[str], min_shared: int):
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
    labels: Sequence[float] | np.ndarray | None = None,
    min_shared: int = 2,
) -> tuple[JudgePairResult, ...]:
    """Cohen's κ for every pair of judges sharing ≥ ``min_shared`` items, each weighting.

    ``labels`` defaults to every value any judge used, so that all pairs weight the
    same scale.  Results are keyed by weighting (``unweighted``, ``linear``,
    ``quadratic``).
    """
    values = as_ratings(ratings)
    names = judge_names(ratings, judges, values.shape[0])
    lab = values_observed(values) if labels is None else np.asarray(labels, dtype=float)
    out = []
    for i, j, n in judge_pairs(values, names, min_shared):
        res = {w: cohen_kappa(values[i], values[j], weights=w, labels=lab) for w in weightings}
        out.append(JudgePairResult(names[i], names[j], n, res))
    return tuple(out)


def pairwise_pearson(
    ratings, *, judges: Sequence[str] | None = None, min_shared: int = 3
) -> tuple[JudgePairResult, ...]:
    """Pearson's r for every pair of judges over the items both rated (key ``pearson``)."""
    values = as_ratings(ratings)
    names = judge_names(ratings, judges, values.shape[0])
    return tuple(
        JudgePairResult(names[i], names[j], n, {"pearson": pearson(values[i], values[j])})
        for i, j, n in judge_pairs(values, names, min_shared)
    )
