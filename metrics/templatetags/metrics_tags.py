"""Formatting helpers of the metrics pages."""

from __future__ import annotations

import math

from django import template

from metrics.core.registry import UnknownMetric, get_metric

register = template.Library()


@register.filter
def metric_number(value, digits: int = 4) -> str:
    """A score with ``digits`` decimals; an em dash for missing or undefined values."""
    if value is None:
        return "—"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(x):
        return "—"
    return f"{x:.{int(digits)}f}"


@register.filter
def changed_params(run) -> str:
    """The run's parameters that differ from the metric's defaults, as ``k=v, …``."""
    try:
        specs = get_metric(run.metric).params
    except UnknownMetric:
        specs = {}
    parts = []
    for key, value in (run.params or {}).items():
        spec = specs.get(key)
        if spec is not None and value == spec.default:
            continue
        parts.append(f"{key}={'none' if value is None else value}")
    return ", ".join(parts) or "defaults"


@register.filter
def param_value(value) -> str:
    """A parameter value as it is written in signatures and on the command line."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
