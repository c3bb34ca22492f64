"""The answers a dashboard shows, one small function per protocol.

Each function takes a study and returns the protocol's figures as plain JSON. They are
the heavy part of a dashboard: the worker calls them (never a poll) and the snapshot
keeps their result with the version stamp it was computed at. A protocol unit names its
function by dotted path (``JudgingProtocol.dashboard_answers``).
"""

from __future__ import annotations

from dataclasses import replace

from django.utils.module_loading import import_string

from annotation.judging.protocols.registry import protocol_for_design
from annotation.judging.selectors.design import design_for_study, study_criteria
from annotation.judging.selectors.qc import judgments_fingerprint
from annotation.models import Study
from metrics.core.stats.data import validate_judgments
from metrics.core.stats.report import build_report
from metrics.reports import selectors as report_selectors
from metrics.reports.services.build import shared_points_scale, subset_in_criteria_order
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
    criteria_used = [c for c in study_criteria(study=study) if c["slug"] in judged.criteria]
    try:
        result = build_report(
            judged.frame,
            metric_inputs.scores or None,
            excluded_judges=judged.excluded,
            control_expected=judged.control_expected,
            criterion=s["criterion"],
            criteria=judged.criteria,
            normalize=s["normalize"],
            include_controls_in_mean=s["include_controls_in_mean"],
            subset_min=subset_in_criteria_order(s["subset_min"], judged.criteria),
            n_boot=s["n_boot"],
            confidence_level=s["confidence_level"],
            significance_level=s["significance_level"],
            seed=s["seed"],
            qc_alpha=judged.qc_alpha,
            min_shared=s["min_shared"],
            metric_runs=metric_inputs.runs,
            scale=shared_points_scale(criteria_used),
            scales={c["slug"]: c["scale"]["type"] for c in criteria_used},
            sections=DASHBOARD_SECTIONS,
            agreement_detail=False,
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


def comparison_answers(study: Study) -> dict:
    """Side by side: per question, Krippendorff's α (nominal) on the pairs, and the Bradley–Terry
    ranking of the first question with its bootstrap intervals, from the comparison report's own
    :func:`~annotation.judging.protocols.side_by_side.report.comparison_result` with the report's default settings (so
    the numbers equal a comparison report built at the same moment). α on pairs has no bootstrap
    interval and Bradley–Terry no significance clusters: those cells stay empty, never guessed."""
    from annotation.judging.protocols.side_by_side.report import DEFAULT_BT_BOOT, comparison_result

    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    try:
        result = comparison_result(study=study, settings=settings)
    except ValueError as exc:  # no answers yet, or not computable: say which, as the report would
        reason = "No comparisons yet." if "no comparison judgments" in str(exc) else f"Not computable yet: {exc}."
        return {"available": False, "reason": reason}
    n_judges = result["summary"]["n_judges"]
    agreement = []
    for q in result["questions"]:
        a = result["comparison"][q["slug"]]["agreement"]
        agreement.append(
            {
                "criterion": q["name"],
                "level": "nominal",
                "alpha": a.get("alpha"),
                "ci_low": None,
                "ci_high": None,
                "n_items": a.get("units"),
                "n_judges": n_judges,
                "note": None if a.get("alpha") is not None else "too few pairs judged twice",
            }
        )
    first = result["questions"][0]
    bt = result["comparison"][first["slug"]].get("bradley_terry")
    systems = [
        {
            "rank": i + 1,
            "system": r["system"],
            "mean": r["theta"],
            "ci_low": r["ci_low"],
            "ci_high": r["ci_high"],
            "cluster": None,
            "pvalue_vs_next": None,
        }
        for i, r in enumerate(bt["ranking"] if bt else [])
    ]
    return {
        "available": True,
        "fingerprint": judgments_fingerprint(study=study),
        "settings": {
            "criterion": first["slug"],
            "n_boot": bt["n_boot"] if bt else int(settings["n_boot"] or DEFAULT_BT_BOOT),
            "confidence_level": result["settings"]["confidence_level"],
            "significance_level": None,
            "seed": result["settings"]["seed"],
        },
        "agreement": agreement,
        "ranking": {"measure": f"Bradley–Terry θ ({first['name']})", "systems": systems},
        "metrics": {"segment": [], "system": [], "runs": []},
        "n_judgment_rows": result["summary"]["n_comparisons"],
    }


def esa_answers(study: Study) -> dict:
    """Error span annotation: the ranking by ESA score with its bootstrap intervals and
    significance clusters, from the ESA report's own :func:`~annotation.judging.protocols.esa.report.esa_result`
    with the report's default settings (equal to an ESA report built at the same moment). Span
    agreement is an F1 and a κ, not Krippendorff's α: the agreement table stays empty and the
    note points to the report."""
    from annotation.judging.protocols.esa.report import esa_result

    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    try:
        result = esa_result(study=study, settings=settings)
    except ValueError as exc:
        reason = "No error span judgments yet." if "no ESA judgments" in str(exc) else f"Not computable yet: {exc}."
        return {"available": False, "reason": reason}
    systems = [
        {
            "rank": r["rank"],
            "system": r["system"],
            "mean": r["mean"],
            "ci_low": r["ci_low"],
            "ci_high": r["ci_high"],
            "cluster": r["cluster"],
            "pvalue_vs_next": r.get("pvalue_vs_next"),
        }
        for r in result["ranking"]
    ]
    level = result["settings"]["confidence_level"]
    return {
        "available": True,
        "fingerprint": judgments_fingerprint(study=study),
        "settings": {
            "criterion": "esa",
            "n_boot": result["settings"]["n_boot"],
            "confidence_level": level,
            "significance_level": round(1 - level, 10),
            "seed": result["settings"]["seed"],
        },
        "agreement": [],
        "note": "Span agreement (character F1, word κ) is in the ESA report."
        + (" Ranking: not enough data yet (two systems and two originals at least)." if not systems else ""),
        "ranking": {"measure": "ESA score (0–100)", "systems": systems},
        "metrics": {"segment": [], "system": [], "runs": []},
        "n_judgment_rows": result["summary"]["n_judgments"] + result["summary"]["n_control_judgments"],
    }


def ranking_answers(study: Study) -> dict:
    """Ranking: Kendall's W between judges (mean over the sets ranked by two judges or more) and
    the Plackett–Luce ranking with its bootstrap intervals and clusters, from the ranking report's
    own :func:`~annotation.judging.protocols.ranking.report.ranking_result` with the report's default settings (so the
    numbers equal a ranking report built at the same moment). W has no interval: those cells stay
    empty, never guessed."""
    from annotation.judging.protocols.ranking.report import DEFAULT_PL_BOOT, ranking_result

    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    try:
        result = ranking_result(study=study, settings=settings)
    except ValueError as exc:
        reason = "No rankings yet." if "no rankings" in str(exc) else f"Not computable yet: {exc}."
        return {"available": False, "reason": reason}
    conc = result["concordance"]
    agreement = [
        {
            "criterion": "ranking",
            "level": "Kendall's W",
            "alpha": conc.get("mean_w"),
            "ci_low": None,
            "ci_high": None,
            "n_items": conc.get("n_originals"),
            "n_judges": result["summary"]["n_judges"],
            "note": None if conc.get("mean_w") is not None else "too few sets ranked twice",
        }
    ]
    systems = [
        {
            "rank": i + 1,
            "system": r["system"],
            "mean": r["strength"],
            "ci_low": r["ci_low"],
            "ci_high": r["ci_high"],
            "cluster": r["cluster"],
            "pvalue_vs_next": r["p_next"],
        }
        for i, r in enumerate(result["systems"])
    ]
    return {
        "available": True,
        "fingerprint": judgments_fingerprint(study=study),
        "settings": {
            "criterion": "ranking",
            "n_boot": result["settings"]["n_boot"] or DEFAULT_PL_BOOT,
            "confidence_level": result["settings"]["confidence_level"],
            "significance_level": 0.05,
            "seed": result["settings"]["seed"],
        },
        "agreement": agreement,
        "ranking": {"measure": "Plackett–Luce log-strength β", "systems": systems},
        "metrics": {"segment": [], "system": [], "runs": []},
        "n_judgment_rows": result["summary"]["n_rankings"],
    }


def study_answers(study: Study) -> dict:
    design = design_for_study(study=study)
    if design is None:
        return {"available": False, "reason": "No judging design yet."}
    unit = protocol_for_design(design)
    if not unit.dashboard_answers:
        return {"available": False, "reason": f"No live figures for {unit.name} studies yet: build the report."}
    return import_string(unit.dashboard_answers)(study)
