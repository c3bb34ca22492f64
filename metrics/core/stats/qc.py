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
from scipy import stats as sps

from .data import DEFAULT_CONTROL_EXPECTED, validate_judgments
from .results import ControlTest, JudgeQC

__all__ = ["DEFAULT_QC_TESTS", "judge_qc"]

# (test name, criterion, control kinds rated low on that criterion).  PEM's expected
# scores: random and unigram controls have adequacy 1, unigram fluency 1, and the
# identical control dissimilarity 1 — each far below what genuine candidates get.
DEFAULT_QC_TESTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("adequacy_of_random_and_unigram", "adequacy", ("random", "unigram")),
    ("fluency_of_unigram", "fluency", ("unigram",)),
    ("dissimilarity_of_identical", "dissimilarity", ("identical",)),
)


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
    top_value = (
        frame.groupby(["judge", "criterion", "score"]).size().groupby(level=["judge", "criterion"]).idxmax()
    )
    if "seconds" in frame.columns and frame["seconds"].notna().any():
        med_secs = frame.groupby(["judge", "item"])["seconds"].mean().groupby(level="judge").median()
    else:
        med_secs = pd.Series(dtype=float)
    n_items = frame.groupby("judge")["item"].nunique()
    n_controls = frame.loc[frame["is_control"]].groupby("judge")["item"].nunique()

    out = []
    for judge, rows in frame.groupby("judge", sort=True):
        flags: list[str] = []
        results: list[ControlTest] = []
        for name, crit, kinds in tests:
            on_crit = rows.loc[rows["criterion"] == crit]
            low = on_crit.loc[on_crit["is_control"] & on_crit["control_kind"].isin(list(kinds)), "score"].to_numpy()
            genuine = on_crit.loc[~on_crit["is_control"], "score"].to_numpy()
            if low.size == 0 or genuine.size == 0:
                results.append(ControlTest(name, crit, tuple(kinds), None, None, int(low.size), int(genuine.size), None))
                continue
            res = sps.mannwhitneyu(low, genuine, alternative="less")
            p = float(res.pvalue)
            if not math.isfinite(p):
                p = 1.0  # every score tied: the judge did not tell the controls apart
            ok = p < alpha
            results.append(ControlTest(name, crit, tuple(kinds), float(res.statistic), p, int(low.size), int(genuine.size), ok))
            if not ok:
                flags.append(
                    f"{crit} of {'/'.join(kinds)} controls not rated below genuine candidates "
                    f"(Mann-Whitney p = {p:.3g}, alpha = {alpha:g})"
                )
        judge_mad = {c: float(v) for (j, c), v in mad.items() if j == judge}
        if max_control_mad is not None:
            for c, v in sorted(judge_mad.items()):
                if v > max_control_mad:
                    flags.append(f"{c} control scores are off by {v:.2f} on average (limit {max_control_mad:g})")
        straight: dict[str, float] = {}
        if judge in share.index.get_level_values("judge"):
            for c, row in share.loc[judge].iterrows():
                frac = float(row["max"] / row["sum"])
                straight[str(c)] = frac
                if row["sum"] >= min_scores_for_straightlining and frac >= straightline_threshold:
                    value = top_value.loc[(judge, c)][2]
                    flags.append(f"straight-lining: {frac:.0%} of {c} scores are {value:g}")
        median = float(med_secs[judge]) if judge in med_secs.index else None
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
