"""Per-judge z-normalised scores of 0–100 judgments, as WMT computes them.

WMT has reported direct assessment (DA) and ESA scores as per-annotator z-scores since
Graham et al. (2013, 2017): a judge's raw 0–100 score x is replaced by

    z = (x − μ_j) / σ_j,

μ_j the mean and σ_j the *sample* standard deviation (divisor n_j − 1) of judge j's
scores on that criterion, taken over the judge's **genuine** items only (controls are
excluded, as WMT excludes its BAD_REF and REF quality-control items). This follows
Appraise's ``ComputeWMT21Results`` (mean over the annotator's scores, s² = Σ(x − μ)² /
(n − 1)), the script that produced the WMT tables. A system's z-score is then the mean
over originals of the mean z its candidates got (each original counts once), beside the
same average of raw scores.

Degenerate cases, stated rather than guessed:

* a judge with **one** genuine item on a criterion: σ is undefined (n − 1 = 0). Appraise
  then divides by 1, which turns that item's score into x − μ = 0; paraeval gives the
  genuine item z = 0 as well, and records ``sigma`` as NaN;
* a judge whose genuine scores are all equal (**σ = 0**): every genuine item gets z = 0
  (it equals the mean; Appraise's division by 1 gives the same);
* in both cases a *control* item of that judge gets z = NaN: there is no scale to put it
  on (Appraise would report its raw distance from the mean, a number on another scale);
* a judge with **no** genuine item on a criterion: every score gets z = NaN.

This differs on purpose from :func:`metrics.core.stats.reference.zscore_judgments`
(population σ, divisor n), which the human reference of PEM-style reports uses; the
function here is the one to quote as "WMT z-scores".
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from .data import validate_judgments

__all__ = ["judge_scales", "judge_zscores", "system_zscores"]


def judge_scales(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """Each judge's mean and sample standard deviation per criterion, genuine items only.

    ``judgments`` is the canonical frame of :mod:`metrics.core.stats.data`; ``criteria``
    restricts the result to those criteria (the study's 0–100 ones), all by default.
    Returns one row per (judge, criterion) with ``n`` (genuine items), ``mu`` =
    Σx / n and ``sigma`` = √(Σ(x − μ)² / (n − 1)) (NaN when n = 1). Judges with no
    genuine item on a criterion have no row.
    """
    frame = _select(validate_judgments(judgments), criteria)
    genuine = frame.loc[~frame["is_control"]]
    grouped = genuine.groupby(["judge", "criterion"], sort=True)["score"]
    out = pd.DataFrame({"n": grouped.size(), "mu": grouped.mean(), "sigma": grouped.std(ddof=1)})
    return out.reset_index()


def judge_zscores(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """The canonical frame with a ``z`` column beside the raw ``score`` (WMT z-scores).

    z = (score − μ_jc) / σ_jc with μ and σ from :func:`judge_scales` (judge j, criterion c,
    genuine items, sample σ); the degenerate cases of the module docstring give z = 0 for
    genuine items and NaN for controls (σ undefined or 0), NaN everywhere for a judge
    without genuine items. Rows of criteria outside ``criteria`` are dropped. The input
    is not modified.
    """
    frame = _select(validate_judgments(judgments), criteria).copy()
    scales = judge_scales(frame).set_index(["judge", "criterion"])
    keys = pd.MultiIndex.from_arrays([frame["judge"], frame["criterion"]])
    mu = scales["mu"].reindex(keys).to_numpy(dtype=float)
    sigma = scales["sigma"].reindex(keys).to_numpy(dtype=float)
    x = frame["score"].to_numpy(dtype=float)
    control = frame["is_control"].to_numpy(dtype=bool)
    has_scale = np.isfinite(sigma) & (sigma > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(has_scale, (x - mu) / np.where(has_scale, sigma, 1.0), np.nan)
    flat = ~has_scale & np.isfinite(mu) & ~control  # one item, or all equal: the mean itself
    z[flat] = 0.0
    frame["z"] = z
    return frame.reset_index(drop=True)


def system_zscores(judgments: pd.DataFrame, *, criteria: Iterable[str] | None = None) -> pd.DataFrame:
    """Per system and criterion: mean raw score and mean z-score, genuine items only.

    As WMT's system tables: first the mean over the judges of an original's candidate
    (raw and z), then the mean over the system's originals, so that an original judged
    three times counts once. Returns columns ``system``, ``criterion``, ``n_originals``,
    ``n_judgments``, ``raw`` and ``z``, best z first within each criterion.
    """
    z = judge_zscores(judgments, criteria=criteria)
    genuine = z.loc[~z["is_control"]]
    per_original = genuine.groupby(["criterion", "system", "original"], sort=True).agg(
        raw=("score", "mean"), z=("z", "mean"), n=("score", "size")
    )
    out = per_original.groupby(level=["criterion", "system"]).agg(
        n_originals=("raw", "size"), n_judgments=("n", "sum"), raw=("raw", "mean"), z=("z", "mean")
    )
    out = out.reset_index().sort_values(["criterion", "z"], ascending=[True, False], kind="stable")
    return out.loc[:, ["system", "criterion", "n_originals", "n_judgments", "raw", "z"]].reset_index(drop=True)


def _select(frame: pd.DataFrame, criteria: Iterable[str] | None) -> pd.DataFrame:
    if criteria is None:
        return frame
    wanted = {str(c) for c in criteria}
    return frame.loc[frame["criterion"].isin(wanted)]
