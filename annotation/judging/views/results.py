"""The researcher's pages on the judgments: judge QC and exclusions, the CSV exports and
the import of judgments collected elsewhere."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.importing.reading import StudyImportError
from annotation.judging.selectors.design import design_for_study, study_control_expected, study_criteria, study_qc_tests
from annotation.judging.selectors.exclusions import judge_exclusion_history
from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
from annotation.judging.selectors.qc import (
    STRAIGHTLINE_MIN_SCORES,
    STRAIGHTLINE_THRESHOLD,
    judge_qc,
    judgments_fingerprint,
)
from annotation.judging.services.exclusions import judge_exclusion_set
from annotation.judging.services.queueing import judgments_import_start
from annotation.models import ImportJob
from annotation.web import csv_response, researcher_study_required, study_context

from .. import scales
from ..enums import ImportMode
from ..errors import JudgingError
from ..forms import ExclusionForm
from ..protocols.registry import protocol_for_design
from ..web import export_filename


def _z_basis_display(scale) -> dict:
    """One judge's z-basis on one slider criterion as the QC table shows it: mean and SD,
    or why their z-scores are undefined (never NaN)."""
    if scale is None:
        return {"defined": False, "mu": "—", "sigma": "—", "why": "n = 0"}
    if not scale.defined:
        why = f"n = {scale.n}" if scale.n < 2 else "σ = 0"
        return {"defined": False, "mu": f"{scale.mu:.1f}", "sigma": "—", "why": why}
    return {"defined": True, "mu": f"{scale.mu:.1f}", "sigma": f"{scale.sigma:.1f}", "why": ""}


def _qc_display(row: dict, criteria: list[str], test_labels: dict[str, str]) -> dict:
    """Format one judge's QC result for the table (numbers as text, flags as a list)."""
    qc = row["qc"]
    out = {
        "judge": row["judge"],
        "excluded": row["excluded"],
        "screened_out": row.get("screened_out"),
        "z_basis": [_z_basis_display(s) for s in (row.get("z_basis") or {}).values()],
    }
    if qc is None:
        return out | {
            "verdict": "none",
            "flags": [],
            "n_items": 0,
            "n_controls": 0,
            "mad": ["—"] * len(criteria),
            "tests": [{"label": label, "passed": None, "p": "—"} for label in test_labels.values()],
            "median": "—",
            "straight": "—",
            "straight_flagged": False,
        }
    tested = any(t.passed is not None for t in qc.tests)
    top: tuple[Any, float] | None = max(qc.straightlining.items(), key=lambda kv: kv[1], default=None)
    return out | {
        # "pass" only when a test could run: no flags on a handful of items means little
        "verdict": "fail" if qc.flags else ("pass" if tested else "none"),
        "flags": list(qc.flags),
        "n_items": qc.n_items,
        "n_controls": qc.n_controls,
        "mad": [f"{qc.control_mad[c]:.2f}" if c in qc.control_mad else "—" for c in criteria],
        "tests": [
            {
                "label": test_labels.get(t.name, t.name),
                "passed": t.passed,
                "p": "—" if t.pvalue is None else f"{t.pvalue:.3g}",
            }
            for t in qc.tests
        ],
        "median": "—" if qc.median_seconds is None else f"{qc.median_seconds:.1f}",
        "straight": f"{top[1]:.0%} ({top[0]})" if top else "—",
        "straight_flagged": top is not None
        and top[1] >= STRAIGHTLINE_THRESHOLD
        and qc.n_items >= STRAIGHTLINE_MIN_SCORES,
    }


@researcher_study_required
@require_GET
def qc(request, study):
    design = design_for_study(study=study)
    unit = protocol_for_design(design)
    design_criteria = study_criteria(study=study)
    criteria = [c["slug"] for c in design_criteria]
    expected = study_control_expected(study=study)
    # The design's own control tests (per criterion and scale), headed by the criterion's name.
    test_labels = {
        name: scales.qc_test_label(design_criteria, crit, kinds) for name, crit, kinds in study_qc_tests(study=study)
    }
    # Criteria with no expected value for any control kind: their controls are judged
    # but cannot be checked (the QC page says so).
    unchecked = [c for c in criteria if not any(c in v for v in expected.values())]
    rows = [_qc_display(r, criteria, test_labels) for r in judge_qc(study=study)]
    return render(
        request,
        "judging/qc.html",
        study_context(
            study,
            rows=rows,
            alpha=design.qc_alpha if design else 0.05,
            criteria=criteria,
            unchecked=unchecked,
            test_labels=list(test_labels.values()),
            criterion_names=[c["name"] for c in design_criteria],
            untested=[c["name"] for c in design_criteria if scales.scale_unit(c["scale"]).qc_test is None],
            zscored_names=[c["name"] for c in design_criteria if scales.scale_unit(c["scale"]).zscored],
            history=judge_exclusion_history(study=study),
            fingerprint=judgments_fingerprint(study=study),
            protocol_qc_rows=unit.qc_rows(study=study),
            qc_template=unit.qc_template,
        ),
    )


@researcher_study_required
@require_POST
def exclusion(request, study, username: str):
    judge = get_object_or_404(User, username=username)
    form = ExclusionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose to exclude or include the judge.")
        return redirect("judging:qc", study_id=study.pk)
    try:
        row = judge_exclusion_set(
            study=study,
            judge=judge,
            excluded=form.cleaned_data["excluded"],
            decided_by=request.user,
            reason=form.cleaned_data["reason"],
        )
    except JudgingError as exc:
        messages.error(request, exc.message)
    else:
        if row is None:
            messages.info(
                request, f"{judge.username} was already {'excluded' if form.cleaned_data['excluded'] else 'included'}."
            )
        else:
            messages.success(
                request,
                f"{judge.username} is now {'excluded from' if row.excluded else 'included in'} "
                "every statistic of this study.",
            )
    return redirect(reverse("judging:qc", kwargs={"study_id": study.pk}))


@researcher_study_required
@require_GET
def export_tidy(request, study):
    return csv_response(export_tidy_rows(study=study), export_filename(study, "tidy"))


@researcher_study_required
@require_GET
def export_wide(request, study):
    return csv_response(export_wide_rows(study=study), export_filename(study, "wide"))


@researcher_study_required
@require_POST
def import_judgments(request, study):
    """The judging design page's upload of judgments collected elsewhere (all or nothing)."""
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a judgments file to import.")
        return redirect("judging:design", study_id=study.pk)
    try:
        mode = request.POST.get("mode") or ImportMode.REFUSE
        if mode not in ImportMode.values:
            return HttpResponseBadRequest(f"unknown import mode; choose one of {', '.join(ImportMode.values)}")
        s = judgments_import_start(study=study, data=upload.read(), filename=upload.name, mode=mode, user=request.user)
    except StudyImportError as exc:
        messages.error(request, "Nothing was imported:\n" + exc.describe(limit=20))
        return redirect("judging:design", study_id=study.pk)
    if isinstance(s, ImportJob):
        messages.info(
            request,
            f"{upload.name} is large, so a worker imports it: its progress is shown under Import judgments, "
            "and nothing is written unless the whole file is valid.",
        )
        return redirect(reverse("judging:design", kwargs={"study_id": study.pk}) + "#import-judgments")
    messages.success(
        request,
        f"Imported {s.judgments:,} judgments ({s.revisions:,} revisions) by {s.judges} judges "
        f"from {upload.name}; {s.judges_created} imported participants created; {s.replaced:,} values "
        f"replaced, {s.skipped:,} skipped as already there.",
    )
    return redirect("judging:design", study_id=study.pk)
