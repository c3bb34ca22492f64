"""The study's judging design as the other reads need it: the design row, the protocol,
the criteria and the controls' expected values (PEM's defaults without a design). The
protocol is asked of its unit (:mod:`annotation.judging.protocols.registry`)."""

from __future__ import annotations

from annotation.models import ImportJob, Study

from .. import scales
from ..defaults import default_criteria, default_expected_scores
from ..enums import JUDGMENTS_JOB_KEY
from ..models import JudgingDesign


def design_for_study(*, study: Study) -> JudgingDesign | None:
    return JudgingDesign.objects.filter(study=study).first()


def study_criteria(*, study: Study) -> list[dict]:
    """The study's criteria with their scales (PEM's four on 1–5 when it has no design)."""
    design = design_for_study(study=study)
    if design is None:
        return default_criteria()
    return design.criteria


def study_criteria_slugs(*, study: Study) -> list[str]:
    return [c["slug"] for c in study_criteria(study=study)]


def study_control_expected(*, study: Study) -> dict[str, dict[str, int | float]]:
    """Expected value per control kind and criterion, from the design (PEM's defaults if none).

    Criteria whose expected value is unknown (a non-PEM criterion nobody filled in) are
    left out: their controls are judged, but QC and the human reference have no fixed
    value for them there."""
    design = design_for_study(study=study)
    if design is None:
        return default_expected_scores()
    return {k: {c: v for c, v in scores.items() if v is not None} for k, scores in design.expected_scores.items()}


def study_qc_tests(*, study: Study) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """The judge control tests the study's design supports, per criterion and scale
    (:func:`annotation.judging.scales.criteria_qc_tests`)."""
    return scales.criteria_qc_tests(study_criteria(study=study), study_control_expected(study=study))


def judgments_import_jobs(*, study: Study, limit: int = 5) -> list[ImportJob]:
    """The study's latest judgments imports that ran (or run) in a worker, newest first (the
    design page shows their progress, result or errors)."""
    return list(
        ImportJob.objects.filter(study=study, summary__has_key=JUDGMENTS_JOB_KEY).order_by("-created_at")[:limit]
    )
