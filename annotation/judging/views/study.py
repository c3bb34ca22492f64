"""The researcher's pages of a study's judging: the design, opening (at once or in a
worker, with its progress), closing, reopening, resetting, late assignments and progress."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.serializers.json import DjangoJSONEncoder
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import Role
from annotation.judging.selectors.design import design_for_study, judgments_import_jobs
from annotation.judging.selectors.progress import study_has_judgments, study_progress
from annotation.judging.services.assignments import assignments_ensure_all
from annotation.judging.services.design import design_get_or_create, design_update
from annotation.judging.services.opening import study_judging_close, study_judging_reopen, study_judging_reset
from annotation.judging.services.queueing import study_judging_open_start
from annotation.models import Candidate, Original
from annotation.web import researcher_study_required, study_context
from config.jobs.enums import JobStatus

from .. import screening_views
from ..errors import JudgingError
from ..forms import DesignForm
from ..models import OpenJob
from ..protocols.registry import protocol_for_design
from ..web import open_job_payload


@researcher_study_required
@require_http_methods(["GET", "POST"])
def design(request, study):
    design = design_get_or_create(study=study)
    form = DesignForm(request.POST or None, design=design)
    if request.method == "POST" and form.is_valid():
        try:
            design_update(study=study, changes=form.changes())
        except JudgingError as exc:
            form.add_error(None, exc.message)
            for field, errs in exc.field_errors.items():
                for e in errs:
                    form.add_error(None, f"{field}: {e}")
        else:
            messages.success(request, "Design saved.")
            return redirect("judging:design", study_id=study.pk)
    n_originals = Original.objects.filter(study=study).count()
    n_candidates = Candidate.objects.filter(original__study=study).count()
    n_judges = (
        User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE).distinct().count()
    )
    n_controls = 0 if design.is_frozen else n_originals * sum(int(v) for v in design.control_counts.values())
    open_job = OpenJob.objects.filter(study=study).first()  # the latest
    if open_job is not None and not open_job.is_finished:
        open_state = "running"
    elif open_job is not None and open_job.status == JobStatus.FAILED and not design.is_frozen:
        open_state = "failed"
    elif open_job is not None and open_job.status == JobStatus.SUCCEEDED and design.is_frozen:
        open_state = "succeeded"
    else:
        open_state = None
    judgments_jobs = judgments_import_jobs(study=study)  # large judgments files, imported by a worker
    return render(
        request,
        "judging/design.html",
        study_context(
            study,
            design=design,
            form=form,
            n_originals=n_originals,
            n_candidates=n_candidates,
            n_judges=n_judges,
            n_items=n_candidates + n_controls,
            n_controls=n_controls,
            has_judgments=study_has_judgments(study=study),
            judgments_jobs=judgments_jobs,
            judgments_jobs_running=any(not j.is_finished for j in judgments_jobs),
            open_job=open_job,
            open_state=open_state,
            open_summary=open_summary_text(open_job.summary)
            if open_job is not None and open_state == "succeeded"
            else "",
            protocol=protocol_for_design(design),
            protocol_exports=protocol_for_design(design).exports,
            **screening_views.screening_context(study),
        ),
    )


def _post_action(request, study, action, success: str, target: str = "judging:design"):
    try:
        result = action()
    except JudgingError as exc:
        messages.error(request, exc.message)
        return redirect(target, study_id=study.pk)
    messages.success(request, success.format(result=result))
    return redirect(target, study_id=study.pk)


def open_summary_text(summary: dict) -> str:
    return (
        f"Judging is open: {summary['controls_created']:,} controls built, "
        f"{summary['judges']} judge(s) assigned {summary['assignment_items']:,} items in all."
    )


@researcher_study_required
@require_POST
def open_study(request, study):
    """Open judging: small studies at once (to the progress page), large ones in a worker (back to the design
    page, which shows the job's progress and then its outcome)."""
    try:
        job = study_judging_open_start(study=study, user=request.user)
    except JudgingError as exc:
        messages.error(request, exc.message)
        return redirect("judging:design", study_id=study.pk)
    if job.status == JobStatus.SUCCEEDED:
        messages.success(request, open_summary_text(job.summary))
        return redirect("judging:progress", study_id=study.pk)
    messages.info(
        request,
        "Judging is being opened in the background. Judges can start once every judge's list "
        "is built; this page shows the progress.",
    )
    return redirect("judging:design", study_id=study.pk)


@researcher_study_required
@require_GET
def open_job_status(request, study, open_job_id: int):
    job = get_object_or_404(OpenJob, pk=open_job_id, study=study)
    return JsonResponse(open_job_payload(job))


@researcher_study_required
@require_POST
def close_study(request, study):
    return _post_action(
        request,
        study,
        lambda: study_judging_close(study=study),
        "Judging is closed; no more judgments are accepted.",
        "judging:progress",
    )


@researcher_study_required
@require_POST
def reopen_study(request, study):
    return _post_action(
        request, study, lambda: study_judging_reopen(study=study), "Judging is open again.", "judging:progress"
    )


@researcher_study_required
@require_POST
def reset_study(request, study):
    return _post_action(
        request,
        study,
        lambda: study_judging_reset(study=study),
        "Judging was reset: assignments and controls are deleted and the design can be edited again.",
    )


@researcher_study_required
@require_POST
def assign_late(request, study):
    return _post_action(
        request,
        study,
        lambda: assignments_ensure_all(study=study),
        "{result} new judge assignment(s) built.",
        "judging:progress",
    )


@researcher_study_required
@require_GET
def progress(request, study):
    return render(
        request,
        "judging/progress.html",
        study_context(study, progress=study_progress(study=study), design=design_for_study(study=study)),
    )


@researcher_study_required
@require_GET
def progress_json(request, study):
    return JsonResponse(study_progress(study=study), encoder=DjangoJSONEncoder)
