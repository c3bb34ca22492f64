"""The absolute protocol's automatic QC screen-out: after each judgment, a worker tests the
judge's ratings of the known-bad controls against their ratings of genuine candidates
(:func:`qc_auto_check`), and screens the judge out where the study's rule says so."""

from __future__ import annotations

import pandas as pd

from annotation.models import Study
from metrics.core.stats.qc import judge_qc

from ...enums import CONTROL_KIND_OF_SYSTEM_KIND, ScreenOutRule
from ...models import Assignment, ScreeningSettings
from ...screening import screen_out
from ...selectors.design import study_control_expected, study_qc_tests
from .models import Judgment


def judge_frame(assignment: Assignment) -> pd.DataFrame:
    """One judge's latest judgments in the canonical tidy shape (what QC needs)."""
    rows = []
    for cand, original, kind, system, values, seconds in Judgment.objects.filter(
        study_id=assignment.study_id, judge_id=assignment.judge_id, is_latest=True
    ).values_list(
        "item__candidate_id",
        "item__candidate__original__external_id",
        "item__candidate__system__kind",
        "item__candidate__system__name",
        "values",
        "seconds",
    ):
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(kind)
        for crit, score in values.items():
            rows.append(
                (
                    str(assignment.judge_id),
                    str(cand),
                    original,
                    system,
                    control_kind is not None,
                    control_kind,
                    crit,
                    score,
                    seconds,
                )
            )
    return pd.DataFrame.from_records(
        rows,
        columns=["judge", "item", "original", "system", "is_control", "control_kind", "criterion", "score", "seconds"],
    )


def qc_auto_check(*, assignment: Assignment, settings: ScreeningSettings | None = None) -> bool:
    """Apply the automatic QC rule to one judge; True when it screened them out now.

    The rule: once the judge has rated at least ``qc_auto_min_controls`` controls,
    each control test of the design (:func:`annotation.judging.scales.criteria_qc_tests`:
    every ordered criterion with known-bad controls; :func:`metrics.core.stats.qc.judge_qc`, one-sided
    Mann–Whitney U of the known-bad controls' scores below genuine candidates') that
    can run must reach p < ``qc_auto_pvalue``; a test that does not screens the judge out.
    """
    settings = settings or ScreeningSettings.objects.filter(study_id=assignment.study_id).first()
    if settings is None or not settings.qc_auto or assignment.screened_out_at is not None:
        return False
    n_controls = Judgment.objects.filter(
        study_id=assignment.study_id,
        judge_id=assignment.judge_id,
        is_latest=True,
        item__candidate__system__kind__in=list(CONTROL_KIND_OF_SYSTEM_KIND),
    ).count()
    if n_controls < settings.qc_auto_min_controls:
        return False
    frame = judge_frame(assignment)
    study = Study(pk=assignment.study_id)
    (result,) = judge_qc(
        frame,
        control_expected=study_control_expected(study=study),
        tests=study_qc_tests(study=study),
        alpha=settings.qc_auto_pvalue,
        straightline_threshold=1.01,
    )
    failed = [t for t in result.tests if t.passed is False]
    if not failed:
        return False
    detail = "; ".join(f"{t.criterion} of {'/'.join(t.control_kinds)} controls p = {t.pvalue:.3g}" for t in failed)
    return screen_out(
        assignment=assignment,
        rule=ScreenOutRule.QC,
        reason=(
            f"Automatic QC after {n_controls} controls: not rated below genuine candidates at "
            f"p < {settings.qc_auto_pvalue:g} ({detail})."
        ),
    )


def qc_auto_check_run(*, assignment_id: int) -> bool:
    """The worker's side of :func:`after_judgment`: the automatic QC rule for one assignment
    (gone or already screened out: nothing). True when it screened the judge out now."""
    assignment = Assignment.objects.filter(pk=assignment_id).first()
    if assignment is None:
        return False
    return qc_auto_check(assignment=assignment)
