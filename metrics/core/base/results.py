"""Small frozen result objects: a corpus score, a bootstrap interval, a paired test, pairwise tests."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .params import DEFAULT_SEED

# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class MetricResult:
    """Scores of one metric over a batch: per segment and for the corpus."""

    metric: str
    signature: str
    scores: tuple[float, ...]
    corpus: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form ``{"metric", "signature", "scores", "corpus", "n"}``."""
        return {
            "metric": self.metric,
            "signature": self.signature,
            "scores": list(self.scores),
            "corpus": self.corpus,
            "n": self.n,
        }


@dataclass(frozen=True)
class BootstrapResult:
    """A corpus score with a percentile bootstrap confidence interval."""

    statistic: float
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int
    confidence: float = 0.95
    standard_error: float = math.nan

    def confidence_interval(self) -> tuple[float, float]:
        """``(ci_low, ci_high)``."""
        return (self.ci_low, self.ci_high)


@dataclass(frozen=True)
class PairedResult:
    """Paired bootstrap comparison of system B against baseline A (Koehn 2004)."""

    statistic_a: float
    statistic_b: float
    delta: float
    pvalue: float
    n: int
    n_resamples: int
    seed: int | None = DEFAULT_SEED


@dataclass(frozen=True)
class PairwiseResult:
    """Every paired test among the systems of one metric's leaderboard.

    ``statistics[i]`` is system i's corpus score; ``pvalues[i][j]`` the p-value
    of the paired test of systems i and j (symmetric, 1.0 on the diagonal);
    ``test`` is ``"bs"`` (paired bootstrap) or ``"ar"`` (approximate
    randomization); ``n_resamples`` the resamples or trials.
    """

    statistics: tuple[float, ...]
    pvalues: tuple[tuple[float, ...], ...]
    test: str
    n: int
    n_resamples: int
    seed: int | None = DEFAULT_SEED

    def pair(self, i: int, j: int) -> PairedResult:
        """The comparison of system ``j`` against baseline ``i`` as a :class:`PairedResult`."""
        a, b = self.statistics[i], self.statistics[j]
        return PairedResult(
            statistic_a=a,
            statistic_b=b,
            delta=b - a,
            pvalue=self.pvalues[i][j],
            n=self.n,
            n_resamples=self.n_resamples,
            seed=self.seed,
        )
