"""Per-judge z-normalised scores of 0–100 judgments, as WMT computes them.

WMT has reported direct assessment (DA) and ESA scores as per-annotator z-scores since
Graham et al. (2013, 2017): a judge's raw 0–100 score x is replaced by

    z = (x − μ_j) / σ_j,

μ_j the mean and σ_j the *sample* standard deviation (divisor n_j − 1, ``ddof=1``) of
judge j's scores on that criterion, taken over the judge's **genuine** items only
(controls are excluded, as WMT excludes its BAD_REF quality-control items). The sample
SD follows Appraise, the code that produced the WMT tables: its ``ComputeZScores`` and
``ComputeWMT21Results`` commands compute s² = Σ(x − μ)² / (n − 1). Controls still get a
z, on their judge's genuine scale. A system's z-score is then the mean over originals of
the mean z its candidates got (each original counts once), beside the same average of
raw scores.

**Undefined z.** A judge with fewer than two genuine scores on a criterion, or whose
genuine scores there are all equal (σ = 0), has no scale to put scores on: every z of
that judge and criterion (genuine items and controls) is NaN, and the tables say
"undefined" instead of a number. This departs on purpose from Appraise, which divides by
1 when σ is 0 or undefined and so reports a raw distance from the mean (a number on
another scale) as if it were a z; a judge without any genuine item gets NaN as well.
:attr:`JudgeScale.defined` states the rule once; :func:`judge_scales`,
:func:`judge_zscores` and :class:`ScaleAccumulator` (the streaming form, for exports
that read judgments in chunks) all follow it.

:func:`metrics.core.stats.reference.zscore_judgments`, the human reference of a report
normalised to z, uses the same μ and σ; it differs only for a judge whose z is undefined,
who counts there as 0 (every item keeps a reference) and is left out here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import validate_judgments

__all__ = [
    "MIN_GENUINE",
    "SIGMA_ZERO",
    "JudgeScale",
    "ScaleAccumulator",
    "judge_scales",
    "judge_zscores",
    "system_zscores",
]

#: A judge needs at least this many genuine scores on a criterion for a sample SD.
MIN_GENUINE = 2
#: σ at or below this counts as 0 (all scores equal): floating-point rounding of equal
#: decimals (0.1, 0.1, 0.1) can leave a σ of 1e-17, which would blow z up to 1e15.
SIGMA_ZERO = 1e-9


@dataclass(frozen=True)
class JudgeScale:
    """One judge's z-basis on one criterion: ``n`` genuine scores, their mean ``mu`` and
    sample standard deviation ``sigma`` (NaN when n < 2)."""

    n: int
    mu: float
    sigma: float

    @property
    def defined(self) -> bool:
        """Whether z is defined: at least :data:`MIN_GENUINE` genuine scores and σ > 0 (above :data:`SIGMA_ZERO`)."""
        return self.n >= MIN_GENUINE and math.isfinite(self.sigma) and self.sigma > SIGMA_ZERO

    def z(self, x: float) -> float | None:
        """(x − μ) / σ, or None where :attr:`defined` is false."""
        return (float(x) - self.mu) / self.sigma if self.defined else None


class ScaleAccumulator:
    """Welford's running mean and variance of one judge's genuine scores on one criterion
    (Welford 1962), so that a streamed export needs no list of scores in memory. Gives the
    same :class:`JudgeScale` as :func:`judge_scales` up to rounding."""

    __slots__ = ("_m2", "_mean", "_n")

    def __init__(self) -> None:
        self._n, self._mean, self._m2 = 0, 0.0, 0.0

    def add(self, x: float) -> None:
        self._n += 1
        delta = float(x) - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (float(x) - self._mean)

    def scale(self) -> JudgeScale:
        if self._n == 0:
            return JudgeScale(0, math.nan, math.nan)
        sigma = math.sqrt(self._m2 / (self._n - 1)) if self._n >= MIN_GENUINE else math.nan
        return JudgeScale(self._n, self._mean, sigma)


def judge_scales(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """Each judge's mean and sample standard deviation per criterion, genuine items only.

    ``judgments`` is the canonical frame of :mod:`metrics.core.stats.data`; ``criteria``
    restricts the result to those criteria (the study's 0–100 ones), all by default.
    Returns one row per (judge, criterion) with ``n`` (genuine items), ``mu`` =
    Σx / n, ``sigma`` = √(Σ(x − μ)² / (n − 1)) (NaN when n = 1) and ``defined``
    (n ≥ 2 and σ > 0: see :attr:`JudgeScale.defined`). Judges with no genuine item on a
    criterion have no row.
    """
    frame = _select(validate_judgments(judgments), criteria)
    genuine = frame.loc[~frame["is_control"]]
    grouped = genuine.groupby(["judge", "criterion"], sort=True)["score"]
    out = pd.DataFrame({"n": grouped.size(), "mu": grouped.mean(), "sigma": grouped.std(ddof=1)})
    out["defined"] = (out["n"] >= MIN_GENUINE) & np.isfinite(out["sigma"]) & (out["sigma"] > SIGMA_ZERO)
    return out.reset_index()


def judge_zscores(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """The canonical frame with a ``z`` column beside the raw ``score`` (WMT z-scores).

    z = (score − μ_jc) / σ_jc with μ and σ from :func:`judge_scales` (judge j, criterion c,
    genuine items, sample σ), for genuine items and controls alike; NaN for every row of a
    judge and criterion whose z is undefined (fewer than two genuine scores, σ = 0, or no
    genuine score at all). Rows of criteria outside ``criteria`` are dropped. The input
    is not modified.
    """
    frame = _select(validate_judgments(judgments), criteria).copy()
    scales = judge_scales(frame).set_index(["judge", "criterion"])
    keys = pd.MultiIndex.from_arrays([frame["judge"], frame["criterion"]])
    mu = scales["mu"].reindex(keys).to_numpy(dtype=float)
    sigma = scales["sigma"].reindex(keys).to_numpy(dtype=float)
    defined = scales["defined"].reindex(keys).fillna(False).to_numpy(dtype=bool)
    x = frame["score"].to_numpy(dtype=float)
    z = np.full(len(frame), np.nan)
    z[defined] = (x[defined] - mu[defined]) / sigma[defined]
    frame["z"] = z
    return frame.reset_index(drop=True)


def system_zscores(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """Per system and criterion: mean raw score and mean z-score, genuine items only.

    As WMT's system tables: first the mean over the judges of an original's candidate
    (raw and z), then the mean over the system's originals, so that an original judged
    three times counts once. Judgments whose z is undefined count in ``raw`` but not in
    ``z`` (pandas' means skip NaN); ``n_z`` says how many judgments have a z. ``z`` is NaN
    when none has. Returns columns ``system``, ``criterion``, ``n_originals``,
    ``n_judgments``, ``n_z``, ``raw`` and ``z``, best z first within each criterion.
    """
    z = judge_zscores(judgments, criteria=criteria)
    genuine = z.loc[~z["is_control"]]
    per_original = genuine.groupby(["criterion", "system", "original"], sort=True).agg(
        raw=("score", "mean"), z=("z", "mean"), n=("score", "size"), n_z=("z", "count")
    )
    out = per_original.groupby(level=["criterion", "system"]).agg(
        n_originals=("raw", "size"),
        n_judgments=("n", "sum"),
        n_z=("n_z", "sum"),
        raw=("raw", "mean"),
        z=("z", "mean"),
    )
    out = out.reset_index().sort_values(
        ["criterion", "z", "raw"], ascending=[True, False, False], kind="stable", na_position="last"
    )
    cols = ["system", "criterion", "n_originals", "n_judgments", "n_z", "raw", "z"]
    return out.loc[:, cols].reset_index(drop=True)


def _select(frame: pd.DataFrame, criteria: Iterable[str] | None) -> pd.DataFrame:
    if criteria is None:
        return frame
    wanted = {str(c) for c in criteria}
    return frame.loc[frame["criterion"].isin(wanted)]
