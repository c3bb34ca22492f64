"""The answers a dashboard shows: :func:`study_answers` asks the study's protocol unit
(``JudgingProtocol.dashboard_answers``), whose figures are plain JSON.

They are the heavy part of a dashboard: the worker calls them (never a poll) and the
snapshot keeps their result with the version stamp it was computed at. The absolute
protocol's are :func:`absolute_answers` here; side by side, ESA and ranking compute theirs
in their package's ``report.py`` from their report's own result.
"""

from __future__ import annotations

from dataclasses import replace

from annotation.judging.protocols.registry import protocol_for_design
from annotation.judging.selectors.design import design_for_study
from annotation.models import Study
from metrics.core.stats.data import validate_judgments
from metrics.core.stats.report import build_report
from metrics.reports import selectors as report_selectors
from metrics.reports.services.build import absolute_report_options
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

#: What the dashboard shows of a report: computed alone, each exactly as in the full report
#: (the pairwise tables, QC and meta-evaluation would be 80 % of a refresh at 500 judges).
DASHBOARD_SECTIONS = frozenset({"agreement", "system_ranking", "metric_leaderboard"})


def absolute_answers(study: Study) -> dict:
    """Agreement with its interval per criterion, the ranking with significance clusters and
    metric–human correlations of finished metric runs, from ``build_report`` called exactly as
    a report with the default settings calls it (so the numbers equal that report's)."""
    judged = report_selectors.report_judgment_inputs(study=study)
    if judged.frame.empty:
        return {"available": False, "reason": "No judgments yet."}
    judged = replace(judged, frame=validate_judgments(judged.frame))
    s = dict(DEFAULT_SETTINGS)
    metric_inputs = report_selectors.report_metric_inputs(study=study, judged_items=set(judged.frame["item"]))
    options = absolute_report_options(study=study, judged=judged, settings=s, metric_runs=metric_inputs.runs)
    try:
        result = build_report(
            judged.frame,
            metric_inputs.scores or None,
            options=replace(options, sections=DASHBOARD_SECTIONS, agreement_detail=False),
        )
    except ValueError as exc:  # e.g. every judge excluded: the report says the same
        return {"available": False, "reason": f"Not computable yet: {exc}."}
    agreement = []
    for criterion, a in result["agreement"].items():
        level = a.get("alpha_level") or "interval"
        alpha = (a.get("krippendorff_alpha") or {}).get(level) or {}
        agreement.append(
            {
                "criterion": criterion,
                "level": level,
                "alpha": alpha.get("statistic"),
                "ci_low": alpha.get("ci_low"),
                "ci_high": alpha.get("ci_high"),
                "n_items": a.get("n_items"),
                "n_judges": a.get("n_judges"),
                "note": alpha.get("note"),
            }
        )
    leaderboard = result.get("metric_leaderboard") or {}
    return {
        "available": True,
        "fingerprint": judged.fingerprint,
        "settings": {
            k: result["settings"][k] for k in ("criterion", "n_boot", "confidence_level", "significance_level", "seed")
        },
        "agreement": agreement,
        "ranking": result["system_ranking"],
        "metrics": {
            "segment": leaderboard.get("segment", []),
            "system": leaderboard.get("system", []),
            "runs": [r for r in metric_inputs.runs if r.get("used")],
        },
        "n_judgment_rows": int(result["summary"]["n_judgments"]),
    }


def study_answers(study: Study) -> dict:
    design = design_for_study(study=study)
    if design is None:
        return {"available": False, "reason": "No judging design yet."}
    unit = protocol_for_design(design)
    answers = unit.dashboard_answers(study=study)
    if answers is None:
        return {"available": False, "reason": f"No live figures for {unit.name} studies yet: build the report."}
    return answers
