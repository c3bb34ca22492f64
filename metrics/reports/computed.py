"""What a report computation hands back (:class:`ReportComputed`): plain data, below the
report job (:mod:`metrics.reports.services.build`) and below the protocols' own report
computations (``annotation/judging/protocols/<name>/report.py``), which import it without
importing the job."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReportComputed:
    """What a report computation hands back for :func:`~metrics.reports.services.build.report_build` to store.

    ``fingerprint`` must be read *before* the judgments the result was computed from,
    so that a judgment arriving meanwhile makes the report stale rather than silently
    included; ``versions`` (None: not recorded) goes into ``build_info`` with the
    packages' versions; ``plots`` are the figures (``slug``, ``title``, ``caption``,
    ``svg``) in page order.
    """

    result: dict[str, Any]
    fingerprint: str
    excluded_judges: list[str]
    n_judgment_rows: int
    metric_runs: list[Any] = field(default_factory=list)
    plots: Sequence[Any] = ()
    versions: Mapping[str, str] | None = None

    @classmethod
    def of_result(cls, result: dict[str, Any], *, fingerprint: str, n_judgment_rows: int) -> ReportComputed:
        """A report that is one result dict naming its ``excluded_judges`` (side by side, ESA,
        ranking: no figures, no metric runs)."""
        return cls(
            result=result,
            fingerprint=fingerprint,
            excluded_judges=result["excluded_judges"],
            n_judgment_rows=n_judgment_rows,
        )


#: A protocol's report computation: ``f(*, report, settings) -> ReportComputed``.
ReportCompute = Callable[..., ReportComputed]
