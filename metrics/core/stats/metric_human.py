"""Metric-vs-human correlation (PEM §6.2, Table 3) and a metric leaderboard."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .correlation import METHODS, correlation, segment_and_system, system_means
from .data import DEFAULT_CONTROL_EXPECTED, validate_judgments, validate_metric_scores
from .reference import human_reference
from .results import CorrelationResult, jsonable
from .significance import williams_test

__all__ = [
    "LeaderboardRow",
    "MetricHumanCorrelation",
    "metric_human_correlations",
    "metric_leaderboard",
]


@dataclass(frozen=True)
class MetricHumanCorrelation:
    """One metric against one human score (``"mean"`` or a judge id) at one level."""

    metric: str
    human: str
    level: str
    n: int
    results: dict[str, CorrelationResult]

    def to_dict(self) -> dict[str, Any]:
        """``{"metric", "human", "level", "n", <method>: {...}, ...}``."""
        out: dict[str, Any] = {"metric": self.metric, "human": self.human, "level": self.level, "n": self.n}
        out.update(jsonable(self.results))
        return out


def aligned_metrics(metrics_long: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """Metric scores as an item × metric frame restricted to judged items."""
    known = metrics_long.loc[metrics_long["item"].isin(ref.index)]
    if known.empty:
        raise ValueError("no metric score belongs to a judged item (check the item ids)")
    if known["system"].notna().any():
        given = known.dropna(subset=["system"])
        actual = ref["system"].reindex(given["item"]).to_numpy()
        bad = given["system"].to_numpy() != actual
        if bad.any():
            row = given.loc[bad].iloc[0]
            raise ValueError(
                f"metric {row['metric']!r} puts item {row['item']!r} in system {row['system']!r}, "
                "but the judgments disagree"
            )
    return known.pivot(index="item", columns="metric", values="score")


def metric_human_correlations(
    judgments: pd.DataFrame,
    metric_scores: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    criterion: str = "overall",
    methods: Sequence[str] = METHODS,
    include_controls_in_mean: bool = True,
    per_judge: bool = True,
    accuracy_groups: str | None = "original",
    control_expected: Mapping[str, Mapping[str, float]] = DEFAULT_CONTROL_EXPECTED,
    normalize: str | None = None,
    excluded_judges: Sequence[str] = (),
    reference: pd.DataFrame | None = None,
) -> tuple[MetricHumanCorrelation, ...]:
    """PEM Table 3: each metric against the human reference and against each judge.

    Segment level: over items with both a metric and a human score.  System level:
    per-system means of both over those same items.  Against ``"mean"`` the human
    score is :func:`~metrics.core.stats.reference.human_reference` (controls keep their
    fixed scores; they are included unless ``include_controls_in_mean=False``, as in
    PEM's "PEM vs. Human Avg." row); against a single judge controls are always
    excluded, "to make the results comparable to the inter-judge correlation" (PEM
    §6.2).  ``accuracy_groups="original"`` makes segment-level pairwise accuracy
    compare only candidates of the same original (item grouping, Deutsch et al.
    2023); ``None`` compares all pairs.  ``reference`` lets a caller pass an already
    computed human reference.
    """
    frame = validate_judgments(judgments, excluded_judges=excluded_judges)
    metrics_long = validate_metric_scores(metric_scores)
    ref = (
        reference
        if reference is not None
        else human_reference(frame, control_expected=control_expected, normalize=normalize)
    )
    if criterion not in ref.columns:
        raise ValueError(f"no judgments on criterion {criterion!r}")
    wide = aligned_metrics(metrics_long, ref)

    targets: list[tuple[str, pd.Series]] = []
    mean_ref = ref if include_controls_in_mean else ref.loc[~ref["is_control"].astype(bool)]
    targets.append(("mean", mean_ref[criterion].dropna()))
    if per_judge:
        rows = frame.loc[(frame["criterion"] == criterion) & ~frame["is_control"]]
        for judge, sub in rows.groupby("judge", sort=True):
            targets.append((str(judge), pd.Series(sub["score"].to_numpy(), index=sub["item"].to_numpy())))

    out = []
    for metric in wide.columns:
        mcol = wide[metric].dropna()
        for human_name, h in targets:
            items = h.index.intersection(mcol.index)
            hv = h.reindex(items).to_numpy(dtype=float)
            mv = mcol.reindex(items).to_numpy(dtype=float)
            systems = ref["system"].reindex(items).to_numpy()
            groups = ref[accuracy_groups].reindex(items).to_numpy() if accuracy_groups else None
            levels = segment_and_system(hv, mv, systems, methods=methods, groups=groups)
            n_sys = int(pd.unique(systems).size)
            out.append(MetricHumanCorrelation(str(metric), human_name, "segment", int(items.size), levels["segment"]))
            out.append(MetricHumanCorrelation(str(metric), human_name, "system", n_sys, levels["system"]))
    return tuple(out)


@dataclass(frozen=True)
class LeaderboardRow:
    """A metric's rank by correlation with the human reference at one level.

    ``williams_pvalue`` tests that the best metric correlates better than this one
    (one-tailed Williams test); None for the best metric or when n ≤ 3.
    ``significantly_worse`` is ``williams_pvalue < significance_level``.
    """

    metric: str
    level: str
    method: str
    statistic: float
    n: int
    rank: int
    williams_pvalue: float | None
    significantly_worse: bool | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with the same keys as the fields."""
        return jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


def metric_leaderboard(
    human,
    metrics: pd.DataFrame,
    *,
    systems=None,
    level: str = "segment",
    method: str = "pearson",
    significance_level: float = 0.05,
) -> tuple[LeaderboardRow, ...]:
    """Rank metrics by correlation with ``human``; Williams-test each against the best.

    ``metrics`` has one column per metric, aligned with ``human``.  At ``level=
    "system"`` scores are first averaged per system (``systems`` required).  Only items
    with every score present are used, so all correlations share one n (a
    precondition of the Williams test; Graham & Baldwin 2014).
    """
    h = np.asarray(human, dtype=float).ravel()
    m = metrics.to_numpy(dtype=float)
    names = [str(c) for c in metrics.columns]
    keep = ~np.isnan(h) & ~np.isnan(m).any(axis=1)
    h, m = h[keep], m[keep]
    if level == "system":
        if systems is None:
            raise ValueError("system-level leaderboard needs systems")
        s = np.asarray(systems).ravel()[keep]
        hs = system_means(h, s)
        m = (
            np.column_stack([system_means(m[:, k], s).reindex(hs.index).to_numpy() for k in range(m.shape[1])])
            if m.shape[1]
            else m
        )
        h = hs.to_numpy()
    elif level != "segment":
        raise ValueError(f"level must be 'segment' or 'system', not {level!r}")
    n = h.size
    stats = [correlation(h, m[:, k], method=method).statistic for k in range(m.shape[1])]
    order = sorted(range(len(names)), key=lambda k: (-(stats[k]) if math.isfinite(stats[k]) else math.inf, names[k]))
    out = []
    best = order[0] if order else None
    for rank, k in enumerate(order, start=1):
        p = None
        if best is not None and k != best and n > 3 and math.isfinite(stats[k]) and math.isfinite(stats[best]):
            r23 = correlation(m[:, best], m[:, k], method=method).statistic
            if math.isfinite(r23):
                try:
                    p = williams_test(stats[best], stats[k], r23, n).pvalue
                except ValueError:
                    p = None
        out.append(
            LeaderboardRow(
                names[k],
                level,
                method,
                float(stats[k]),
                int(n),
                rank,
                p,
                None if p is None else bool(p < significance_level),
            )
        )
    return tuple(out)
