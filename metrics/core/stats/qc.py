"""Judge quality control from controls, timing and straight-lining.

PEM §5.1 adds three controls per original with known scores.  A careful judge scores
them near those scores and, above all, rates the known-bad ones below genuine
candidates; a random clicker does neither.  Callers decide what to do with a judge
who fails (e.g. pass the judge to ``build_report(excluded_judges=...)``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

from .data import DEFAULT_CONTROL_EXPECTED, validate_judgments
from .results import ControlTest, JudgeQC

__all__ = ["DEFAULT_QC_TESTS", "judge_qc", "mann_whitney_less"]

# (test name, criterion, control kinds rated low on that criterion).  PEM's expected
# scores: random and unigram controls have adequacy 1, unigram fluency 1, and the
# identical control dissimilarity 1 — each far below what genuine candidates get.
DEFAULT_QC_TESTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("adequacy_of_random_and_unigram", "adequacy", ("random", "unigram")),
    ("fluency_of_unigram", "fluency", ("unigram",)),
    ("dissimilarity_of_identical", "dissimilarity", ("identical",)),
)


def mann_whitney_less(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(U₁, p) of the one-sided Mann–Whitney U test of H1: ``x`` is stochastically lower than
    ``y``: ``scipy.stats.mannwhitneyu(x, y, alternative="less")`` with its default method.

    scipy's own call costs about 1 ms of input handling; the judge QC runs it per judge and
    test (1,700 times for 500 judges on every dashboard refresh), so its asymptotic branch
    (used with ties or when both samples exceed 8) is written out here: average ranks, the tie
    term Σ(t³ − t), the continuity correction and the normal survival function of U₂, exactly
    as scipy 1.x computes them. The exact branch and any NaN go to scipy.
    ``tests/metrics/core/stats/test_qc_mann_whitney.py`` checks equality with scipy.
    """
    n1, n2 = x.size, y.size
    xy = np.concatenate([x, y])
    if np.isnan(xy).any():
        res = sps.mannwhitneyu(x, y, alternative="less")
        return float(res.statistic), float(res.pvalue)
    values, inverse, counts = np.unique(xy, return_inverse=True, return_counts=True)
    if not (n1 > 8 and n2 > 8) and not (counts > 1).any():
        res = sps.mannwhitneyu(x, y, alternative="less")
        return float(res.statistic), float(res.pvalue)
    ends = np.cumsum(counts)
    average_rank = ends - (counts - 1) / 2.0
    r1 = float(average_rank[inverse[:n1]].sum())
    u1 = r1 - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1
    n = n1 + n2
    tie_term = float((counts.astype(float) ** 3 - counts).sum())
    sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.float64(u2 - n1 * n2 / 2 - 0.5) / np.float64(sd)
    p = float(np.clip(special.ndtr(-z), 0.0, 1.0))
    return float(u1), p


def judge_qc(
    judgments: pd.DataFrame,
    *,
    control_expected: Mapping[str, Mapping[str, float]] = DEFAULT_CONTROL_EXPECTED,
    alpha: float = 0.05,
    tests: Sequence[tuple[str, str, Sequence[str]]] = DEFAULT_QC_TESTS,
    straightline_threshold: float = 0.9,
    min_scores_for_straightlining: int = 10,
    min_median_seconds: float | None = None,
    max_control_mad: float | None = None,
) -> tuple[JudgeQC, ...]:
    """One :class:`JudgeQC` per judge (sorted by judge id).

    * ``control_mad[c]`` = mean over the judge's control scores on criterion c of
      |score − expected score| (expected from ``control_expected``).
    * ``tests``: for each (name, criterion, kinds), a one-sided Mann–Whitney U test
      (Mann & Whitney 1947; ``scipy.stats.mannwhitneyu(alternative="less")``) of
      H1: the judge's scores on controls of those kinds are stochastically lower than
      on genuine candidates.  ``passed`` when p < ``alpha``; a failed test is a flag.
      With no control or genuine scores the test is reported with ``passed=None``.
    * ``median_seconds``: median over the judge's items of the seconds spent (None
      without a ``seconds`` column); flagged below ``min_median_seconds`` if given.
    * ``straightlining[c]``: share of the judge's criterion-c scores equal to their most
      frequent value; flagged at ≥ ``straightline_threshold`` (default 90 %) when the
      judge gave at least ``min_scores_for_straightlining`` scores.
    * ``max_control_mad``: if given, a criterion whose control MAD exceeds it is flagged.

    ``passed`` is True when there are no flags.
    """
    frame = validate_judgments(judgments)
    # Expected control score per row (NaN when none is defined).
    expected = np.full(len(frame), np.nan)
    ctrl_rows = frame.index[frame["is_control"]]
    if len(ctrl_rows):
        ctrl = frame.loc[ctrl_rows]
        exp_table = pd.Series(
            {(k, c): float(v) for k, crits in control_expected.items() for c, v in crits.items()}, dtype=float
        )
        keys = pd.MultiIndex.from_arrays([ctrl["control_kind"].astype(str), ctrl["criterion"]])
        if len(exp_table):
            expected[ctrl_rows.to_numpy()] = exp_table.reindex(keys).to_numpy(dtype=float)
    deviation = pd.Series(np.abs(frame["score"].to_numpy() - expected), index=frame.index)
    is_ctrl = frame["is_control"].to_numpy()
    mad = deviation[is_ctrl].groupby([frame.loc[is_ctrl, "judge"], frame.loc[is_ctrl, "criterion"]]).mean()
    mad = mad[mad.notna()]
    share = (
        frame.groupby(["judge", "criterion", "score"]).size().groupby(level=["judge", "criterion"]).agg(["max", "sum"])
    )
    top_value = frame.groupby(["judge", "criterion", "score"]).size().groupby(level=["judge", "criterion"]).idxmax()
    if "seconds" in frame.columns and frame["seconds"].notna().any():
        med_secs = frame.groupby(["judge", "item"])["seconds"].mean().groupby(level="judge").median()
    else:
        med_secs = pd.Series(dtype=float)
    n_items = frame.groupby("judge")["item"].nunique()
    n_controls = frame.loc[frame["is_control"]].groupby("judge")["item"].nunique()

    # Everything per judge is read from arrays and dicts built once: with hundreds of judges a
    # pandas selection per judge and test (and a scan of every judge's MAD per judge) cost seconds.
    mad_of: dict[object, dict[str, float]] = {}
    for (j, c), v in mad.items():
        mad_of.setdefault(j, {})[str(c)] = float(v)
    top_of = top_value.to_dict()
    share_of: dict[object, list[tuple[str, float, float, float]]] = {}
    for (j, c), row_max, row_sum in zip(share.index, share["max"], share["sum"], strict=True):
        share_of.setdefault(j, []).append((c, float(row_max), float(row_sum), float(top_of[(j, c)][2])))
    crit_col = frame["criterion"].to_numpy()
    ctrl_col = frame["is_control"].to_numpy(dtype=bool)
    kind_col = frame["control_kind"].astype(object).to_numpy()
    score_col = frame["score"].to_numpy(dtype=float)
    med_of = {j: float(v) for j, v in med_secs.items()}

    out = []
    for judge, idx in sorted(frame.groupby("judge", sort=True).indices.items(), key=lambda kv: kv[0]):
        flags: list[str] = []
        results: list[ControlTest] = []
        crit_j, ctrl_j, kind_j, score_j = crit_col[idx], ctrl_col[idx], kind_col[idx], score_col[idx]
        for name, crit, kinds in tests:
            on_crit = crit_j == crit
            low = score_j[on_crit & ctrl_j & np.isin(kind_j, list(kinds))]
            genuine = score_j[on_crit & ~ctrl_j]
            if low.size == 0 or genuine.size == 0:
                results.append(
                    ControlTest(name, crit, tuple(kinds), None, None, int(low.size), int(genuine.size), None)
                )
                continue
            u1, p = mann_whitney_less(low, genuine)
            if not math.isfinite(p):
                p = 1.0  # every score tied: the judge did not tell the controls apart
            ok = p < alpha
            results.append(ControlTest(name, crit, tuple(kinds), u1, p, int(low.size), int(genuine.size), ok))
            if not ok:
                flags.append(
                    f"{crit} of {'/'.join(kinds)} controls not rated below genuine candidates "
                    f"(Mann-Whitney p = {p:.3g}, alpha = {alpha:g})"
                )
        judge_mad = mad_of.get(judge, {})
        if max_control_mad is not None:
            for c, v in sorted(judge_mad.items()):
                if v > max_control_mad:
                    flags.append(f"{c} control scores are off by {v:.2f} on average (limit {max_control_mad:g})")
        straight: dict[str, float] = {}
        for c, row_max, row_sum, value in share_of.get(judge, []):
            frac = row_max / row_sum
            straight[str(c)] = frac
            if row_sum >= min_scores_for_straightlining and frac >= straightline_threshold:
                flags.append(f"straight-lining: {frac:.0%} of {c} scores are {value:g}")
        median = med_of.get(judge)
        if min_median_seconds is not None and median is not None and median < min_median_seconds:
            flags.append(f"median {median:.1f} s per item (minimum {min_median_seconds:g} s)")
        out.append(
            JudgeQC(
                str(judge),
                int(n_items.get(judge, 0)),
                int(n_controls.get(judge, 0)),
                judge_mad,
                tuple(results),
                median,
                straight,
                tuple(flags),
                not flags,
            )
        )
    return tuple(out)
