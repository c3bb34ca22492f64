"""Small frozen result objects returned by :mod:`metrics.core.stats`.

Every result carries its statistic, its p-value and confidence interval where those
are defined, and the sample size it was computed from, so that a number in a paper
can be traced back to what produced it.  ``to_dict()`` gives a JSON-serialisable
dict: NaN and infinities become ``None``, numpy scalars become Python numbers.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats as _sps

__all__ = [
    "AgreementResult",
    "BootstrapDifferenceResult",
    "ConfidenceInterval",
    "ControlTest",
    "CorrelationResult",
    "DocumentLevelResult",
    "ICCResult",
    "JudgePlanRow",
    "JudgeQC",
    "PermutationResult",
    "SystemRank",
    "WilliamsResult",
    "format_pvalue",
    "jsonable",
]

#: Below this a p-value is not a number a float can tell from 0 (doubles underflow near 1e-308;
#: scipy returns 0.0 there): it is printed as "< 1e-300", never as 0.
P_FLOOR = 1e-300


def format_pvalue(p: float | None, *, decimals: int = 4) -> str:
    """A p-value for people: ``< 1e-300`` where it underflowed (or nearly), scientific
    notation below 10^-decimals, else fixed decimals; ``n/a`` when missing or not finite."""
    if p is None or not math.isfinite(p):
        return "n/a"
    if p < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    if p < 10**-decimals:
        return f"{p:.1e}"
    return f"{p:.{decimals}f}"


def jsonable(value: Any) -> Any:
    """Return ``value`` converted to plain JSON types (NaN/inf → None, numpy → Python)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


class _ToDict:
    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-serialisable dict."""
        return {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class ConfidenceInterval(_ToDict):
    """A two-sided interval ``[low, high]`` at ``level`` (e.g. 0.95), and how it was made."""

    low: float
    high: float
    level: float
    method: str

    def __iter__(self):
        # Lets callers write ``low, high = result.confidence_interval()`` as with scipy.
        yield self.low
        yield self.high


# Standard errors of the Fisher z-transformed coefficient.  Pearson: 1/sqrt(n-3)
# (Fisher 1921).  Spearman and Kendall: Fieller, Hartley & Pearson (1957), whose
# variance factors 1.06 and 0.437 are the usual large-sample approximations.
def _fisher_se(method: str, n: int) -> float | None:
    if method == "pearson" and n > 3:
        return 1.0 / math.sqrt(n - 3)
    if method == "spearman" and n > 3:
        return math.sqrt(1.06 / (n - 3))
    if method in ("kendall_b", "kendall_c") and n > 4:
        return math.sqrt(0.437 / (n - 4))
    return None


@dataclass(frozen=True)
class CorrelationResult(_ToDict):
    """A correlation (or pairwise accuracy) between two score vectors.

    ``method`` is one of ``pearson``, ``spearman``, ``kendall_b``, ``kendall_c``,
    ``accuracy``.  ``n`` is the number of paired observations used.  ``ci_low`` and
    ``ci_high`` are set only when a bootstrap interval was computed.
    """

    statistic: float
    pvalue: float | None
    n: int
    method: str
    ci_low: float | None = None
    ci_high: float | None = None
    epsilon: float | None = None  # tie-calibrated accuracy only: the chosen tie threshold

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Return the bootstrap interval if one was computed, else a Fisher z interval.

        Fisher z: ``tanh(atanh(r) ± z_{1-α/2} · se)`` with se = 1/√(n−3) for Pearson
        (Fisher 1921), √(1.06/(n−3)) for Spearman and √(0.437/(n−4)) for Kendall
        (Fieller, Hartley & Pearson 1957).  Pairwise accuracy has no analytic interval:
        both bounds are NaN unless a bootstrap interval was stored.
        """
        if self.ci_low is not None and self.ci_high is not None:
            return ConfidenceInterval(self.ci_low, self.ci_high, confidence_level, "bootstrap")
        se = _fisher_se(self.method, self.n)
        r = self.statistic
        if se is None or r is None or not math.isfinite(r):
            return ConfidenceInterval(math.nan, math.nan, confidence_level, "unavailable")
        if abs(r) >= 1.0:
            return ConfidenceInterval(r, r, confidence_level, "fisher_z")
        zcrit = float(_sps.norm.ppf(0.5 + confidence_level / 2))
        z = math.atanh(r)
        return ConfidenceInterval(math.tanh(z - zcrit * se), math.tanh(z + zcrit * se), confidence_level, "fisher_z")


@dataclass(frozen=True)
class AgreementResult(_ToDict):
    """An inter-judge agreement coefficient (Krippendorff's α, Fleiss' κ, Cohen's κ).

    ``level`` is the level of measurement or weighting (``nominal``, ``ordinal``,
    ``interval``; for Cohen's κ ``unweighted``, ``linear``, ``quadratic``).
    ``ci_low``/``ci_high`` are percentile-bootstrap bounds over items when
    ``n_boot > 0``.  ``note`` says why a statistic is NaN, when it is.
    """

    statistic: float
    n_items: int
    n_judges: int
    method: str
    level: str
    ci_low: float | None = None
    ci_high: float | None = None
    n_boot: int = 0
    confidence_level: float = 0.95
    note: str | None = None
    std_error: float | None = None
    ci_method: str | None = None

    def confidence_interval(self) -> ConfidenceInterval:
        """Return the interval: bootstrap, or asymptotic (Cohen's κ) as ``ci_method`` says."""
        if self.ci_low is None or self.ci_high is None:
            return ConfidenceInterval(math.nan, math.nan, self.confidence_level, "unavailable")
        return ConfidenceInterval(self.ci_low, self.ci_high, self.confidence_level, self.ci_method or "bootstrap")


@dataclass(frozen=True)
class ICCResult(_ToDict):
    """An intraclass correlation in Shrout & Fleiss (1979) notation, e.g. ``ICC(2,1)``.

    ``f_statistic``/``pvalue`` test H0: ICC = 0 with the F ratio Shrout & Fleiss give
    for the form (BMS/WMS for ICC(1,·), BMS/EMS for ICC(2,·) and ICC(3,·)).
    ``ci_low``/``ci_high`` are the F-based bounds of McGraw & Wong (1996), as pingouin
    computes them.  ``n_items`` is how many items the complete-case analysis kept of
    ``n_items_total`` rated ones; ``judges_left_out`` the judges dropped so that enough
    items are complete; ``note`` says what to make of an odd value (e.g. below 0).
    """

    statistic: float
    form: str
    n_items: int
    n_judges: int
    f_statistic: float
    df1: int
    df2: int
    pvalue: float
    ci_low: float | None = None
    ci_high: float | None = None
    n_boot: int = 0
    confidence_level: float = 0.95
    ci_method: str = "f_test"
    n_items_total: int | None = None
    judges_left_out: tuple[str, ...] = ()
    note: str | None = None

    def confidence_interval(self) -> ConfidenceInterval:
        """Return the F-based interval of McGraw & Wong (1996) (NaN bounds when it cannot be made)."""
        if self.ci_low is None or self.ci_high is None:
            return ConfidenceInterval(math.nan, math.nan, self.confidence_level, "unavailable")
        return ConfidenceInterval(self.ci_low, self.ci_high, self.confidence_level, self.ci_method)


@dataclass(frozen=True)
class WilliamsResult(_ToDict):
    """Williams' (1959) test that r12 > r13 given r23 (one-tailed), df = n − 3."""

    statistic: float
    pvalue: float
    df: int
    n: int
    r12: float
    r13: float
    r23: float


@dataclass(frozen=True)
class PermutationResult(_ToDict):
    """Paired permutation test of ``statistic`` = corr(h, a) − corr(h, b) (two-sided)."""

    statistic: float
    pvalue: float
    n: int
    n_permutations: int
    method: str


@dataclass(frozen=True)
class BootstrapDifferenceResult(_ToDict):
    """Paired bootstrap over items of the mean difference ``a − b`` (two-sided)."""

    statistic: float
    pvalue: float
    n: int
    n_boot: int
    ci_low: float | None  # None when no resampled difference is finite (infinite scores)
    ci_high: float | None
    confidence_level: float = 0.95

    def confidence_interval(self) -> ConfidenceInterval:
        """Return the percentile-bootstrap interval of the mean difference."""
        if self.ci_low is None or self.ci_high is None:
            return ConfidenceInterval(math.nan, math.nan, self.confidence_level, "unavailable")
        return ConfidenceInterval(self.ci_low, self.ci_high, self.confidence_level, "bootstrap")


@dataclass(frozen=True)
class DocumentLevelResult(_ToDict):
    """Kauchak & Barzilay (2006) document-level comparison of two metrics.

    One system-level Pearson correlation per disjoint document for each metric, and a
    paired t-test (``statistic`` = t, two-sided ``pvalue``) over the documents.
    """

    statistic: float
    pvalue: float
    n_documents: int
    segments_per_document: int
    mean_a: float
    mean_b: float
    correlations_a: tuple[float, ...]
    correlations_b: tuple[float, ...]


@dataclass(frozen=True)
class SystemRank(_ToDict):
    """One system in a ranking: its mean score, bootstrap CI, rank and cluster.

    ``cluster`` numbers start at 1; systems that are not significantly different from
    the next system down share a cluster.  ``pvalue_vs_next`` is the paired-bootstrap
    p-value against the next system (None for the last one).
    """

    system: str
    mean: float
    ci_low: float
    ci_high: float
    n: int
    rank: int
    cluster: int
    pvalue_vs_next: float | None = None


@dataclass(frozen=True)
class ControlTest(_ToDict):
    """One QC test: does the judge rate known-bad controls below genuine candidates?

    One-sided Mann–Whitney U (``alternative="less"``).  ``passed`` is None when the
    judge has no control or no genuine scores for it (the test could not run).
    """

    name: str
    criterion: str
    control_kinds: tuple[str, ...]
    statistic: float | None
    pvalue: float | None
    n_control: int
    n_genuine: int
    passed: bool | None


@dataclass(frozen=True)
class JudgeQC(_ToDict):
    """Quality control for one judge.

    ``control_mad`` maps criterion → mean absolute deviation of the judge's control
    scores from their expected scores.  ``straightlining`` maps criterion → share of
    the judge's scores equal to their most frequent value.  ``flags`` are
    human-readable reasons; ``passed`` is True when there are none.
    """

    judge: str
    n_items: int
    n_controls: int
    control_mad: dict[str, float] = field(default_factory=dict)
    tests: tuple[ControlTest, ...] = ()
    median_seconds: float | None = None
    straightlining: dict[str, float] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    passed: bool = True


@dataclass(frozen=True)
class JudgePlanRow(_ToDict):
    """Planning figures for a study with ``n_judges`` judges per item.

    ``reliability_of_mean``: Spearman–Brown reliability of the k-judge mean.
    ``item_mean_ci_halfwidth``: 95 % half-width of one item's mean score.
    ``alpha`` and ``alpha_ci_width``: interval Krippendorff's α of one simulated study
    and the width of its bootstrap interval (None when not simulated).
    """

    n_judges: int
    reliability_of_mean: float
    item_mean_ci_halfwidth: float
    alpha: float | None = None
    alpha_ci_width: float | None = None
