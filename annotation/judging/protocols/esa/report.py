"""The report of an error span annotation (ESA) study: its build (worker side) and its tables.

Built from the latest ESA judgments (judges excluded on the QC page left out) with the
cores of :mod:`metrics.core.spans`: errors per system by severity
(:func:`~metrics.core.spans.esa.errors_by_severity`), the ESA score and the MQM-style
weighted score with the weights used (:func:`~metrics.core.spans.esa.esa_summary`), a
system ranking with bootstrap intervals and significance clusters
(:func:`~metrics.core.spans.esa.esa_system_ranking`), span agreement between judges (char
F1 and word κ: :func:`~metrics.core.spans.agreement.pairwise_span_agreement`), the
control checks, and, when spans were pre-filled, what judges did with the proposals
(:func:`~metrics.core.spans.prefill.proposal_outcomes`, :func:`~metrics.core.spans.prefill.prefill_timing`).

Stored as ``{"protocol": "esa", "summary": …, "systems": …, "errors": …, "ranking": …,
"agreement": …, "controls": …, "proposals": …, "timing": …, "weights": …, "settings": …}``.
Every figure that cannot be computed (too few judgments, one judge, no control) is stored
as null with a ``note`` ("not enough data"): the report never prints NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.qc import (
    answers_available,
    answers_of_result,
    ranked_system,
    report_of_result,
)
from metrics.core.spans.agreement import pairwise_span_agreement
from metrics.core.spans.esa import MQM_WEIGHTS, control_checks, errors_by_severity, esa_summary, esa_system_ranking
from metrics.core.spans.prefill import prefill_timing, proposal_outcomes
from metrics.core.stats.results import jsonable
from metrics.reports.computed import ReportComputed
from metrics.reports.exports.cells import pct_whole
from metrics.reports.exports.columns import CLUSTER, JUDGE, N_JUDGMENTS, RANK, SYSTEM, ci_column
from metrics.reports.exports.model import Column, ReportTable
from metrics.reports.models import Report
from metrics.reports.services.report_settings import DEFAULT_SETTINGS

from ..base import study_protocol_slug
from . import selectors as judging_esa

DEFAULT_BOOT = 1000
THIN = "not enough data"
#: The least genuine originals a ranking needs before it is worth bootstrapping.
MIN_RANKING_ORIGINALS = 2


def _note(row: dict, keys: tuple[str, ...]) -> dict:
    """``row`` with a ``note`` saying "not enough data" when any of ``keys`` is missing."""
    return row | {"note": THIN if any(row.get(k) is None for k in keys) else ""}


def esa_result(*, study, settings: Mapping[str, Any]) -> dict:
    """Everything the report shows for an ESA study (JSON-able). ValueError without judgments."""
    annotations, texts = judging_esa.esa_annotations(study=study)
    if not annotations:
        raise ValueError("the study has no ESA judgments")
    level = float(settings.get("confidence_level") or 0.95)
    seed = int(settings.get("seed") or 0)
    n_boot = int(settings.get("n_boot") or DEFAULT_BOOT)
    weights = dict(MQM_WEIGHTS)
    genuine = [a for a in annotations if not a.is_control]
    systems = jsonable(esa_summary(annotations, weights=weights).table.to_dict(orient="records")) if genuine else []
    errors = jsonable(errors_by_severity(annotations).to_dict(orient="records")) if genuine else []
    n_originals = len({a.original for a in genuine})
    ranking: list[dict] = []
    ranking_note = ""
    if len({a.system for a in genuine}) >= 2 and n_originals >= MIN_RANKING_ORIGINALS:
        ranking = [
            r.to_dict()
            for r in esa_system_ranking(
                annotations, by="esa", weights=weights, n_boot=n_boot, significance_level=1 - level, seed=seed
            )
        ]
    else:
        ranking_note = THIN
    agreement = [_note(a.to_dict(), ("char_f1", "word_kappa")) for a in pairwise_span_agreement(annotations, texts)]
    controls = [jsonable(c) for c in control_checks(annotations)]
    proposals = None
    timing = None
    if any(a.proposed for a in annotations):
        proposals = _note(proposal_outcomes(annotations).to_dict(), ("precision_strict", "recall"))
        timing = _note(
            prefill_timing(annotations, n_boot=n_boot, confidence_level=level, seed=seed).to_dict(),
            ("saved", "saved_low"),
        )
    judges = {a.judge for a in annotations}
    return {
        "protocol": study_protocol_slug(study),  # the study's stored protocol: this one
        "weights": weights,
        "systems": [_note(r, ("esa", "esa_z", "mqm")) for r in systems],
        "errors": errors,
        "ranking": ranking,
        "ranking_note": ranking_note,
        "agreement": agreement,
        "agreement_note": "" if agreement else THIN,
        "controls": controls,
        "proposals": proposals,
        "timing": timing,
        "summary": {
            "n_judgments": len(genuine),
            "n_control_judgments": len(annotations) - len(genuine),
            "n_judges": len(judges),
            "n_originals": n_originals,
            "systems": sorted({a.system for a in genuine}),
        },
        "settings": {"confidence_level": level, "seed": seed, "n_boot": n_boot},
        "excluded_judges": sorted(judges_excluded(study=study)),
    }


def esa_report_compute(*, report: Report, settings: Mapping[str, Any]) -> ReportComputed:
    """The report of an ESA study (the unit's ``report_compute``, which
    :func:`metrics.reports.services.build.report_build` runs)."""
    return report_of_result(
        esa_result, study=report.study, settings=settings, rows=lambda s: s["n_judgments"] + s["n_control_judgments"]
    )


NOTE = Column("note", "Note", latex=None)


def esa_tables(result: Mapping[str, Any]) -> list[ReportTable]:
    """The ESA report's tables, in page order."""
    settings = result.get("settings") or {}
    ci = pct_whole(float(settings.get("confidence_level", 0.95)))
    w = result.get("weights") or MQM_WEIGHTS
    tables = [
        ReportTable(
            "esa_systems",
            "ESA and MQM-weighted scores per system",
            f"ESA: the judges' 0–100 score, raw and as per-judge z-scores; MQM-weighted: −Σ weights of the marked "
            f"spans, minor = {w['minor']:g}, major = {w['major']:g} (0 = no error). Each a mean over originals of the "
            "mean over that original's judges; genuine candidates only (controls left out).",
            (
                SYSTEM,
                Column("n_originals", "Originals", "int", latex="Orig."),
                N_JUDGMENTS,
                Column("esa", "ESA (0–100)", "num", latex="ESA"),
                Column("esa_z", "ESA z", "num", latex="ESA $z$"),
                Column("mqm", "MQM-weighted", "num", latex="MQM"),
                Column("minor_per_judgment", "Minor / judgment", "num", latex="Minor"),
                Column("major_per_judgment", "Major / judgment", "num", latex="Major"),
                NOTE,
            ),
            list(result.get("systems") or []),
        ),
        ReportTable(
            "esa_errors",
            "Errors per system by severity",
            "Spans marked on genuine candidates: minor and major in all and per judgment; omissions = spans on the "
            "original plus [missing] markers. Fewest major errors per judgment first.",
            (
                SYSTEM,
                N_JUDGMENTS,
                Column("minor", "Minor", "int", latex="Minor"),
                Column("major", "Major", "int", latex="Major"),
                Column("minor_per_judgment", "Minor / judgment", "num"),
                Column("major_per_judgment", "Major / judgment", "num"),
                Column("omissions", "Omissions", "int", latex="Omis."),
            ),
            list(result.get("errors") or []),
        ),
        ReportTable(
            "esa_ranking",
            "System ranking by ESA score",
            f"Mean over originals of the per-original ESA score; {ci} percentile bootstrap intervals over originals "
            f"({settings.get('n_boot', DEFAULT_BOOT)} resamples); a new cluster starts where the paired bootstrap "
            f"finds a system significantly worse than the one above it (p < {1 - float(settings.get('confidence_level', 0.95)):.2f})."
            + (
                f" Not shown: {result['ranking_note']} (two systems and two originals at least)."
                if result.get("ranking_note")
                else ""
            ),
            (
                RANK,
                CLUSTER,
                SYSTEM,
                Column("mean", "ESA", "num", latex="ESA"),
                ci_column(ci),
                Column("n", "Originals", "int"),
                Column("pvalue_vs_next", "p vs next", "p"),
            ),
            [r | {"ci": (r.get("ci_low"), r.get("ci_high"))} for r in result.get("ranking") or []],
        ),
        ReportTable(
            "esa_agreement",
            "Span agreement between judges",
            "Per pair of judges on the genuine items both annotated: character-level precision, recall and F1 "
            "(the first judge as reference), word-level F1, Cohen's κ on words marked or not, and κ on the "
            "severity (none, minor, major)."
            + (
                f" Not shown: {result['agreement_note']} (two judges sharing an item)."
                if result.get("agreement_note")
                else ""
            ),
            (
                Column("judge_a", "Judge A"),
                Column("judge_b", "Judge B"),
                Column("n_items", "Items", "int"),
                Column("char_precision", "Char P", "num"),
                Column("char_recall", "Char R", "num"),
                Column("char_f1", "Char F1", "num"),
                Column("word_f1", "Word F1", "num"),
                Column("word_kappa", "Word κ", "r"),
                Column("word_kappa_severity", "Severity κ", "r"),
                NOTE,
            ),
            list(result.get("agreement") or []),
        ),
        ReportTable(
            "esa_controls",
            "Control checks",
            "Each annotated control: an identical copy passes with no major span; an unrelated sentence with a "
            "major span or a score of at most 30.",
            (JUDGE, Column("control_kind", "Control"), Column("passed", "Passed", "bool"), Column("reason", "Why")),
            list(result.get("controls") or []),
        ),
    ]
    if result.get("proposals"):
        p = result["proposals"]
        tables.append(
            ReportTable(
                "esa_proposals",
                "Pre-filled spans: what judges did with them",
                "Proposals from the word aligner (unaligned words). Accepted: kept at the same place (severity may "
                "change); edited: not kept as is but overlapped by a kept span; deleted: neither; added: kept spans "
                "overlapping no proposal. Precision (strict) = accepted / proposed; (lenient) = (accepted + edited) / "
                "proposed; recall = kept spans overlapping a proposal / kept spans.",
                (
                    Column("n_annotations", "Annotations", "int"),
                    Column("proposed", "Proposed", "int"),
                    Column("accepted", "Accepted", "int"),
                    Column("severity_changed", "Severity changed", "int"),
                    Column("edited", "Edited", "int"),
                    Column("deleted", "Deleted", "int"),
                    Column("added", "Added", "int"),
                    Column("precision_strict", "Precision (strict)", "num"),
                    Column("precision_lenient", "Precision (lenient)", "num"),
                    Column("recall", "Recall", "num"),
                    NOTE,
                ),
                [p],
            )
        )
        t = result.get("timing") or {}
        tables.append(
            ReportTable(
                "esa_timing",
                "Time with and without pre-filled spans",
                f"Active seconds per annotation with proposals and without; saved = without − with, {ci} percentile "
                "bootstrap interval (two items in each group at least).",
                (
                    Column("n_with", "With (n)", "int"),
                    Column("n_without", "Without (n)", "int"),
                    Column("seconds_with", "Seconds with", "num"),
                    Column("seconds_without", "Seconds without", "num"),
                    Column("saved", "Saved", "num"),
                    Column("ci", f"{ci} CI", "ci"),
                    NOTE,
                ),
                [t | {"ci": (t.get("saved_low"), t.get("saved_high"))}] if t else [],
            )
        )
    return tables


# --- the dashboard's live figures ------------------------------------------------------


def esa_answers(study) -> dict:
    """Error span annotation: the ranking by ESA score with its bootstrap intervals and
    significance clusters, from the ESA report's own :func:`esa_result`
    with the report's default settings (equal to an ESA report built at the same moment). Span
    agreement is an F1 and a κ, not Krippendorff's α: the agreement table stays empty and the
    note points to the report."""
    settings = {k: DEFAULT_SETTINGS.get(k) for k in ("confidence_level", "seed", "n_boot")}
    result = answers_of_result(
        esa_result, study=study, settings=settings, none_yet=("no ESA judgments", "No error span judgments yet.")
    )
    if result.get("available") is False:
        return result
    systems = [
        ranked_system(r["rank"], r, mean="mean", cluster=r["cluster"], pvalue_vs_next=r.get("pvalue_vs_next"))
        for r in result["ranking"]
    ]
    level = result["settings"]["confidence_level"]
    return answers_available(
        study=study,
        settings={
            "criterion": "esa",
            "n_boot": result["settings"]["n_boot"],
            "confidence_level": level,
            "significance_level": round(1 - level, 10),
            "seed": result["settings"]["seed"],
        },
        agreement=[],
        note="Span agreement (character F1, word κ) is in the ESA report."
        + (" Ranking: not enough data yet (two systems and two originals at least)." if not systems else ""),
        measure="ESA score (0–100)",
        systems=systems,
        n_judgment_rows=result["summary"]["n_judgments"] + result["summary"]["n_control_judgments"],
    )
