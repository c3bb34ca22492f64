"""What table cells are made of, for every report's tables: statistics read out
of a result dict, Fisher-z intervals, percent labels and ISO timestamps."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from metrics.core.stats.results import CorrelationResult


def stat(d: Mapping | None, key: str = "statistic") -> Any:
    return None if not d else d.get(key)


def fisher_ci(d: Mapping | None, level: float) -> tuple[float | None, float | None] | None:
    """The correlation's Fisher-z interval (``CorrelationResult.confidence_interval``)."""
    if not d or d.get("statistic") is None:
        return None
    res = CorrelationResult(
        statistic=d["statistic"],
        pvalue=d.get("pvalue"),
        n=int(d.get("n") or 0),
        method=d.get("method", "pearson"),
        ci_low=d.get("ci_low"),
        ci_high=d.get("ci_high"),
    )
    low, high = res.confidence_interval(level)
    return (None if math.isnan(low) else low, None if math.isnan(high) else high)


def pct(level: float) -> str:
    return f"{level * 100:g} %"


def pct_whole(level: float) -> str:
    """A confidence level as a whole percent with no space ("95%"), as the protocols' own
    report tables label their intervals."""
    return f"{round(level * 100)}%"


def iso(dt) -> str | None:
    return dt.isoformat() if dt else None
