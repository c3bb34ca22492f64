"""The report of a side-by-side comparison study: its build (worker side) and its tables.

A comparison study's report is built from its comparison judgments instead of the
absolute ratings: per question (the overall preference, or each criterion), win rates
per system pair and per system with ties counted, a Bradley–Terry ranking with
bootstrap intervals, Krippendorff's α (nominal) on pairs, and each judge's accuracy
on the control pairs (:func:`metrics.core.stats.comparison.comparison_summary`).
The result is stored as ``{"protocol": "comparison", "questions": [...],
"comparison": {question: summary}, "summary": {...}, "settings": {...}}``; absolute
studies' reports are untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.judging.models import JudgingDesign
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.qc import (
    agreement_row,
    answers_available,
    answers_of_result,
    ranked_system,
    report_of_result,
)
from metrics.core.stats.comparison import comparison_summary
from metrics.reports.computed import ReportComputed
from metrics.reports.exports.cells import pct_whole
from metrics.reports.exports.columns import JUDGE, LOSSES, PASSES, PVALUE, RANK, SYSTEM, TIES, WINS, N, ci_column
from metrics.reports.exports.model import Column, ReportTable
from metrics.reports.models import Report
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from . import services as judging_comparison

#: Bootstrap resamples of the Bradley–Terry intervals when the settings leave n_boot empty.
DEFAULT_BT_BOOT = 500


def side_by_side_result(*, study, settings: Mapping[str, Any]) -> dict:
    """Everything the report shows for a comparison study (JSON-able). ValueError without answers."""
    design = JudgingDesign.objects.get(study=study)
    records = judging_comparison.side_by_side_records(study=study)
    if not any(records.values()):
        raise ValueError("the study has no comparison judgments")
    excluded = sorted(judges_excluded(study=study))
    level = float(settings.get("confidence_level") or 0.95)
    per_question = {
        slug: comparison_summary(
            rows,
            excluded_judges=excluded,
            qc_alpha=design.qc_alpha,
            n_boot=int(settings.get("n_boot") or DEFAULT_BT_BOOT),
            confidence_level=level,
            seed=int(settings.get("seed") or 0),
        )
        for slug, rows in records.items()
        if rows
    }
    questions = [
        {"slug": q["slug"], "name": q["name"]}
        for q in judging_comparison.questions(design)
        if q["slug"] in per_question
    ]
    first = per_question[questions[0]["slug"]]
    return {
        "protocol": design.protocol,  # the study's stored protocol: this one
        "questions": questions,
        "comparison": per_question,
        "summary": {
            "n_comparisons": first["n_comparisons"],
            "n_control_comparisons": first["n_control_comparisons"],
            "n_judges": first["n_judges"],
            "systems": sorted(r["system"] for r in first["systems"]),
        },
        "settings": {"confidence_level": level, "seed": int(settings.get("seed") or 0)},
        "excluded_judges": excluded,
    }


def side_by_side_report_compute(*, report: Report, settings: Mapping[str, Any]) -> ReportComputed:
    """The report of a comparison study (the unit's ``report_compute``, which
    :func:`metrics.reports.services.build.report_build` runs)."""
    return report_of_result(
        side_by_side_result, study=report.study, settings=settings, rows=lambda s: s["n_comparisons"]
    )


def side_by_side_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The comparison report's tables, per question, in page order."""
    ci = pct_whole(float((result.get("settings") or {}).get("confidence_level", 0.95)))
    tables = []
    for q in result.get("questions", []):
        slug, name = q["slug"], q["name"]
        s = result["comparison"][slug]
        bt = s.get("bradley_terry") or {}
        tables.append(
            ReportTable(
                f"{slug}_bt_ranking",
                f"System ranking (Bradley–Terry) — {name}",
                f"θ per system (log-strength, centred on 0; higher is better) fitted with choix's I-LSR "
                f"(regularisation α = {bt.get('alpha')}); a tie counts as half a win each; {ci} percentile bootstrap "
                f"intervals over {bt.get('n_boot')} resamples of the {bt.get('n')} comparisons. Controls left out.",
                (RANK, SYSTEM, Column("theta", "θ", "num", latex=r"$\theta$"), ci_column(ci)),
                [
                    {"rank": r["rank"], "system": r["system"], "theta": r["theta"], "ci": (r["ci_low"], r["ci_high"])}
                    for r in bt.get("ranking") or []
                ],
            )
        )
        tables.append(
            ReportTable(
                f"{slug}_system_wins",
                f"Win rates per system — {name}",
                "Every genuine comparison of each system: wins, ties and losses; score = (wins + ties/2) / n; "
                "win rate without ties = wins / (wins + losses).",
                (
                    SYSTEM,
                    N,
                    WINS,
                    TIES,
                    LOSSES,
                    Column("score", "Score", "num", latex="Score"),
                    Column("win_rate", "Win rate (no ties)", "num", latex="Win rate"),
                ),
                list(s["systems"]),
            )
        )
        tables.append(
            ReportTable(
                f"{slug}_pair_wins",
                f"Win rates per system pair — {name}",
                "Per pair of systems (A, B in name order, whatever side they were shown on): A's wins, ties, B's wins; "
                "A's score = (A's wins + ties/2) / n.",
                (
                    Column("system_a", "A", latex="A"),
                    Column("system_b", "B", latex="B"),
                    Column("n", "n", "int"),
                    Column("wins_a", "A wins", "int"),
                    Column("ties", "Ties", "int"),
                    Column("wins_b", "B wins", "int"),
                    Column("score_a", "A's score", "num"),
                    Column("win_rate_a", "A's win rate (no ties)", "num"),
                ),
                list(s["pairs"]),
            )
        )
        ag = s["agreement"]
        tables.append(
            ReportTable(
                f"{slug}_agreement",
                f"Agreement on pairs — {name}",
                "Krippendorff's α (nominal) over the three answers (A better, tie, B better, with A and B the systems "
                "in name order), units = (original, system pair) judged by at least two judges.",
                (
                    Column("alpha", "α (nominal)", "r"),
                    Column("units", "Pairs", "int"),
                    Column("judgments", "Judgments", "int"),
                ),
                [ag],
            )
        )
        tables.append(
            ReportTable(
                f"{slug}_controls",
                f"Judges on control pairs — {name}",
                "A control candidate against a genuine paraphrase of the same original; the genuine one is expected "
                "to win. p: one-sided binomial test against chance (1/3); a judge passes when p < the design's QC level.",
                (
                    JUDGE,
                    Column("n", "Control pairs", "int"),
                    Column("correct", "As expected", "int"),
                    Column("accuracy", "Accuracy", "num"),
                    PVALUE,
                    PASSES,
                ),
                list(s["controls"]),
            )
        )
    return tables


# --- the dashboard's live figures ------------------------------------------------------


def side_by_side_answers(study) -> dict:
    """Side by side: per question, Krippendorff's α (nominal) on the pairs, and the Bradley–Terry
    ranking of the first question with its bootstrap intervals, from the comparison report's own
    :func:`side_by_side_result` with the report's default settings (so
    the numbers equal a comparison report built at the same moment). α on pairs has no bootstrap
    interval and Bradley–Terry no significance clusters: those cells stay empty, never guessed."""
    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    result = answers_of_result(
        side_by_side_result,
        study=study,
        settings=settings,
        none_yet=("no comparison judgments", "No comparisons yet."),
    )
    if result.get("available") is False:
        return result
    agreement = [
        agreement_row(
            criterion=q["name"],
            level="nominal",
            alpha=(a := result["comparison"][q["slug"]]["agreement"]).get("alpha"),
            n_items=a.get("units"),
            n_judges=result["summary"]["n_judges"],
            note="too few pairs judged twice",
        )
        for q in result["questions"]
    ]
    first = result["questions"][0]
    bt = result["comparison"][first["slug"]].get("bradley_terry")
    return answers_available(
        study=study,
        settings={
            "criterion": first["slug"],
            "n_boot": bt["n_boot"] if bt else int(settings["n_boot"] or DEFAULT_BT_BOOT),
            "confidence_level": result["settings"]["confidence_level"],
            "significance_level": None,
            "seed": result["settings"]["seed"],
        },
        agreement=agreement,
        measure=f"Bradley–Terry θ ({first['name']})",
        systems=[ranked_system(i + 1, r, mean="theta") for i, r in enumerate(bt["ranking"] if bt else [])],
        n_judgment_rows=result["summary"]["n_comparisons"],
    )
