"""The report's findings: one list of warnings computed with the report.

Contract (other code reads it): ``report["warnings"]`` is a list of dicts
``{"code": str, "severity": "warning" | "info", "message": str, "subject": str | None}``,
warnings first, in a stable order.  ``subject`` names what the finding is about (a
judge, a pair "a / b", a criterion, a metric) or is None for the whole report.  The
report page shows the list at the top, every export carries it, the CLIs print it.

Why one list: numbers travel into papers without their captions; a finding that is
only visible in a caption (or nowhere, like an ICC on 3 items) is a finding lost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = ["WARNING_CODES", "report_warnings"]

# code -> what it means; docs/reports.md lists the same.
WARNING_CODES: dict[str, str] = {
    "judge_little_data": "a judge rated fewer genuine items than min_shared",
    "pair_low_overlap": "two judges share fewer items than min_shared: listed, not summarised",
    "interjudge_not_summarised": "no pair of judges could enter the inter-judge summary",
    "icc_refused": "too few items rated by every judge for an ICC",
    "icc_judges_left_out": "the ICC was computed without some judges so that enough items are complete",
    "icc_negative": "an ICC below 0 (judges disagree more than items differ)",
    "alpha_undefined": "Krippendorff's alpha could not be computed",
    "wide_interval": "an agreement interval spans more than half the coefficient's range",
    "few_items": "an agreement coefficient rests on fewer than min_shared items",
    "no_variance": "a criterion got the same score on every genuine item",
    "excluded_judges": "judges excluded from every table (kept in judge QC)",
    "judge_qc_failed": "a judge failed quality control but is not excluded",
    "metric_run_unused": "a metric run has no score on a judged item",
    "metric_run_partial": "a metric run scores only some of the judged items",
    "metric_run_stale": "a metric run is older than the data it scores",
    "control_convention_flip": "the metric ranking differs between genuine items and controls-in-reference",
    "meta_eval_few_systems": "the system-level metric meta-evaluation rests on fewer than 10 systems",
    "meta_eval_few_items": "the segment-level metric meta-evaluation rests on fewer than min_shared items",
    "meta_eval_ties_with_best": "metrics not significantly worse than the best: the ranking among them is not settled",
    "meta_eval_undefined": "a metric has no correlation with the human scores: its scores are constant on the items",
}

#: Below this many systems a system-level correlation (and its Williams test, with
#: n - 3 degrees of freedom) says little; WMT's metrics tasks use 10 or more.
MIN_SYSTEMS = 10


def _w(code: str, message: str, subject: str | None = None, severity: str = "warning") -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, "subject": subject}


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_warnings(
    report: Mapping[str, Any],
    *,
    frame: pd.DataFrame | None = None,
    metric_runs: Sequence[Mapping[str, Any]] = (),
) -> list[dict[str, Any]]:
    """The findings of a built (JSON-able) report; see the module docstring.

    ``frame`` is the validated judgments frame (every judge) for the checks that need
    raw scores (criteria with no variance, judges' item counts); ``metric_runs`` the
    run descriptions the report used (``{"name", "used", "n_scores", "stale", ...}``).
    """
    settings = report.get("settings") or {}
    min_shared = int(settings.get("min_shared") or 30)
    target = settings.get("criterion", "overall")
    excluded = list(settings.get("excluded_judges") or [])
    out: list[dict[str, Any]] = []

    # Judges with little data, pairs with little overlap, the inter-judge summary.
    if frame is not None and len(frame):
        genuine = frame.loc[~frame["is_control"].astype(bool) & (frame["criterion"] == target)]
        counts = genuine.groupby("judge")["item"].nunique()
        for judge, n in sorted(counts.items()):
            if n < min_shared and judge not in excluded:
                out.append(
                    _w(
                        "judge_little_data",
                        f"{judge} rated {n} genuine items (fewer than min_shared = {min_shared}): their "
                        "pairs are listed but do not enter the inter-judge summary",
                        str(judge),
                    )
                )
    t1 = report.get("table1") or {}
    for p in t1.get("pairs") or []:
        if p.get("summarised") is False:
            a, b = p["judges"]
            out.append(
                _w(
                    "pair_low_overlap",
                    f"{a} and {b} share {p.get('n_shared')} items (fewer than "
                    f"min_shared = {min_shared}): listed in Table 1, left out of its summary",
                    f"{a} / {b}",
                    severity="info",
                )
            )
    for level, summ in (t1.get("summary") or {}).items():
        if summ.get("statistic") is None and summ.get("note"):
            out.append(_w("interjudge_not_summarised", f"no {level}-level inter-judge summary: {summ['note']}", None))

    # Agreement coefficients.
    for crit, a in sorted((report.get("agreement") or {}).items()):
        if a.get("icc") is None and a.get("icc_reason"):
            out.append(_w("icc_refused", f"{crit}: no ICC — {a['icc_reason']}", crit))
        icc = a.get("icc") or {}
        any_icc = next(iter(icc.values()), None)
        if any_icc and any_icc.get("judges_left_out"):
            left = ", ".join(any_icc["judges_left_out"])
            out.append(
                _w(
                    "icc_judges_left_out",
                    f"{crit}: the ICCs use {any_icc['n_judges']} judges on the {any_icc['n_items']} items "
                    f"they all rated (of {any_icc.get('n_items_total')}); left out: {left}",
                    crit,
                )
            )
        negative = sorted(f for f, r in icc.items() if r.get("statistic") is not None and r["statistic"] < 0)
        if negative:
            out.append(
                _w(
                    "icc_negative",
                    f"{crit}: {', '.join(negative)} below 0 — the judges disagree more on "
                    "an item than items differ; read as no reliability",
                    crit,
                )
            )
        wide = sorted(
            f
            for f, r in icc.items()
            if r.get("ci_low") is not None and r.get("ci_high") is not None and r["ci_high"] - r["ci_low"] > 1
        )
        if wide:
            out.append(
                _w(
                    "wide_interval",
                    f"{crit}: the intervals of {', '.join(wide)} are wider than 1 — too few "
                    "items to say how reliable the judges are",
                    crit,
                )
            )
        alpha = (a.get("krippendorff_alpha") or {}).get("interval") or {}
        if alpha and alpha.get("statistic") is None:
            out.append(
                _w("alpha_undefined", f"{crit}: interval α not defined — {alpha.get('note') or 'no data'}", crit)
            )
        elif alpha:
            n = alpha.get("n_items") or 0
            low, high = alpha.get("ci_low"), alpha.get("ci_high")
            if n < min_shared:
                out.append(
                    _w(
                        "few_items",
                        f"{crit}: interval α = {_fmt(alpha.get('statistic'))} rests on {n} "
                        f"items with two or more ratings (fewer than min_shared = {min_shared})",
                        crit,
                    )
                )
            if low is not None and high is not None and high - low > 1.0:
                out.append(
                    _w(
                        "wide_interval",
                        f"{crit}: interval α's interval [{_fmt(low)}, {_fmt(high)}] is too wide to say anything",
                        crit,
                    )
                )

    # Criteria with no variance.
    if frame is not None and len(frame):
        live = frame.loc[~frame["judge"].isin(excluded) & ~frame["is_control"].astype(bool)]
        for crit, scores in sorted(live.groupby("criterion")["score"]):
            if scores.nunique() <= 1:
                value = scores.iloc[0] if len(scores) else None
                out.append(
                    _w(
                        "no_variance",
                        f"{crit}: every genuine item got the same score ({value:g}); no "
                        "correlation or agreement on it means anything",
                        crit,
                    )
                )

    # Judges: excluded ones, and failures that still count.
    if excluded:
        out.append(
            _w(
                "excluded_judges",
                f"excluded from every table (still in judge QC): {', '.join(excluded)}",
                None,
                severity="info",
            )
        )
    for q in report.get("judge_qc") or []:
        if q.get("passed") is False and not q.get("excluded"):
            flags = "; ".join(q.get("flags") or [])
            out.append(
                _w(
                    "judge_qc_failed",
                    f"{q['judge']} failed quality control but counts in every table: {flags}",
                    q["judge"],
                )
            )

    # Metric runs.
    genuine_items = (report.get("summary") or {}).get("n_genuine_items")
    for run in metric_runs:
        name = str(run.get("name") or run.get("metric"))
        if run.get("used") is False:
            out.append(_w("metric_run_unused", f"{name}: not used — {run.get('note') or 'no score'}", name))
        elif genuine_items and run.get("n_scores") is not None and run["n_scores"] < genuine_items:
            out.append(
                _w(
                    "metric_run_partial",
                    f"{name} scores {run['n_scores']} of the judged items "
                    f"({genuine_items} genuine); its correlations use those only",
                    name,
                    severity="info",
                )
            )
        if run.get("stale"):
            out.append(
                _w("metric_run_stale", f"{name}: {run.get('stale_reason') or 'older than the data it scores'}", name)
            )

    # Control conventions.
    main = report.get("metric_leaderboard") or {}
    alt = report.get("metric_leaderboard_with_controls") or {}
    for level in ("segment", "system"):
        a_rows, b_rows = main.get(level) or [], alt.get(level) or []
        order_a = [r["metric"] for r in sorted(a_rows, key=lambda r: r["rank"])]
        order_b = [r["metric"] for r in sorted(b_rows, key=lambda r: r["rank"])]
        if order_a and order_b and order_a != order_b:
            out.append(
                _w(
                    "control_convention_flip",
                    f"{level} level: the metric ranking on genuine items ({' > '.join(order_a)}) differs from "
                    f"the ranking with controls in the human reference, PEM §5.2 ({' > '.join(order_b)}); "
                    "the headline is the former",
                    level,
                )
            )

    out.extend(_meta_evaluation_warnings(report.get("metric_meta_evaluation") or {}, min_shared))

    order = {"warning": 0, "info": 1}
    return sorted(out, key=lambda w: order[w["severity"]])  # stable: keeps the order above within a severity


def _meta_evaluation_warnings(meta: Mapping[str, Any], min_shared: int) -> list[dict[str, Any]]:
    """Thin-data findings of ``report["metric_meta_evaluation"]``."""
    out = []
    system = meta.get("system") or {}
    if system.get("rows") and (system.get("n") or 0) < MIN_SYSTEMS:
        out.append(
            _w(
                "meta_eval_few_systems",
                f"the system-level metric correlations rest on {system.get('n')} "
                f"systems (fewer than {MIN_SYSTEMS}): one system can swing them, and a Williams test on them "
                "has little power",
                "system",
            )
        )
    segment = meta.get("segment") or {}
    if segment.get("rows") and (segment.get("n") or 0) < min_shared:
        out.append(
            _w(
                "meta_eval_few_items",
                f"the segment-level metric correlations rest on {segment.get('n')} "
                f"items (fewer than min_shared = {min_shared})",
                "segment",
            )
        )
    for level, block in (("segment", segment), ("system", system)):
        flat = [r["metric"] for r in block.get("rows") or [] if r.get("pearson") is None]
        if flat:
            out.append(
                _w(
                    "meta_eval_undefined",
                    f"{level} level: {', '.join(flat)} has no correlation with the human scores: its scores (or the "
                    f"human means) do not vary over the {block.get('n')} {'items' if level == 'segment' else 'systems'}, "
                    "so r, ρ and τ are undefined and it "
                    "is ranked last",
                    level,
                )
            )
    for level, block in (("segment", segment), ("system", system)):
        rows = block.get("rows") or []
        tied = [r["metric"] for r in rows if r.get("rank", 1) > 1 and r.get("significantly_worse") is False]
        if rows and tied:
            out.append(
                _w(
                    "meta_eval_ties_with_best",
                    f"{level} level: {', '.join(tied)} not significantly worse than {rows[0]['metric']} "
                    "(Williams test): read their order as a tie",
                    level,
                    severity="info",
                )
            )
    return out
