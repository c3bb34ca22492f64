"""The researcher's alignment page of a study and its forms: imports, the aligner, settings, assignment, systems."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.alignment.services import systems as systems_module
from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.pairs import pairs_import_file
from annotation.alignment.services.queueing import aligner_run_create
from annotation.alignment.services.systems import system_alignments_import
from annotation.importing.reading import StudyImportError
from annotation.web import researcher_study_required, study_context

from .. import exports, selectors
from ..enums import ALIGNMENT_FORMATS
from ..forms import AlignerRunForm, AlignmentConfigForm, PairsImportForm, SystemImportForm
from ..models import AlignerRun, AlignmentSystem
from ._shared import import_issues


def _study_page(request, study, *, status: int = 200, **overrides):
    config = selectors.alignment_config_get(study=study)
    systems = list(selectors.systems_for_study(study=study))
    context = study_context(
        study,
        summary=selectors.study_alignment_summary(study=study),
        config=config,
        systems=systems,
        progress=selectors.annotator_progress(study=study),
        annotators=list(selectors.annotators_of_study(study=study)),
        sources=exports.alignment_sources(study=study),
        formats=[(k, v[0]) for k, v in ALIGNMENT_FORMATS.items()],
        pairs_form=PairsImportForm(prefix="pairs"),
        system_form=SystemImportForm(prefix="system"),
        config_form=AlignmentConfigForm(
            systems=systems,
            prefix="config",
            initial={
                "annotators_per_pair": config.annotators_per_pair,
                "prefill_system": str(config.prefill_system_id or ""),
            },
        ),
        aligner_form=AlignerRunForm(prefix="aligner"),
        aligner_runs=selectors.aligner_runs_for_study(study=study),
        pairs_errors=[],
        system_errors=[],
        aligner_errors=[],
    )
    context.update(overrides)
    return render(request, "alignment/study.html", context, status=status)


@researcher_study_required
@require_GET
def study_page(request, study):
    """The researcher's alignment page of a study: data, systems, settings, people, exports."""
    return _study_page(request, study)


@researcher_study_required
@require_POST
def import_pairs(request, study):
    form = PairsImportForm(request.POST, request.FILES, prefix="pairs")
    if not form.is_valid():
        return _study_page(request, study, pairs_form=form, status=400)
    upload = form.cleaned_data["file"]
    try:
        summary = pairs_import_file(
            study=study,
            data=upload.read(),
            filename=upload.name,
            fmt=form.cleaned_data["format"] or None,
            pretokenized=form.cleaned_data["pretokenized"],
            replace=form.cleaned_data["replace"],
        )
    except StudyImportError as exc:
        return _study_page(request, study, pairs_form=form, pairs_errors=import_issues(exc), status=400)
    messages.success(
        request, f"Imported {upload.name}: {summary['pairs_added']} pairs in {summary['groups_added']} new groups."
    )
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def import_system(request, study):
    form = SystemImportForm(request.POST, request.FILES, prefix="system")
    if not form.is_valid():
        return _study_page(request, study, system_form=form, status=400)
    upload = form.cleaned_data["file"]
    try:
        system = system_alignments_import(
            study=study,
            name=form.cleaned_data["name"],
            data=upload.read(),
            filename=upload.name,
            fmt=form.cleaned_data["format"],
            replace=form.cleaned_data["replace"],
        )
    except StudyImportError as exc:
        return _study_page(request, study, system_form=form, system_errors=import_issues(exc), status=400)
    messages.success(request, f"Imported the alignments of system “{system.name}”.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def run_aligner(request, study):
    form = AlignerRunForm(request.POST, prefix="aligner")
    if not form.is_valid():
        return _study_page(request, study, aligner_form=form, status=400)
    try:
        aligner_run_create(study=study, user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _study_page(request, study, aligner_form=form, aligner_errors=exc.messages, status=400)
    messages.info(request, "The aligner is running in the background.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_GET
def aligner_run_status(request, study, run_id: int):
    run = get_object_or_404(AlignerRun, pk=run_id, study=study)
    return JsonResponse(
        {
            "id": run.pk,
            "status": run.status,
            "phase": run.phase,
            "percent": run.percent,
            "done": run.progress_done,
            "total": run.progress_total,
            "error": run.error,
        }
    )


@researcher_study_required
@require_POST
def update_settings(request, study):
    systems = list(selectors.systems_for_study(study=study))
    form = AlignmentConfigForm(request.POST, systems=systems, prefix="config")
    if not form.is_valid():
        return _study_page(request, study, config_form=form, status=400)
    prefill = form.cleaned_data["prefill_system"]
    system = AlignmentSystem.objects.filter(study=study, pk=int(prefill)).first() if prefill else None
    alignment_config_update(
        study=study,
        annotators_per_pair=form.cleaned_data["annotators_per_pair"],
        prefill_system=system,
        clear_prefill=system is None,
    )
    messages.success(request, "Alignment settings saved.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def assign(request, study):
    try:
        result = assignments_create(study=study)
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    else:
        text = f"{result['created']} new assignments ({result['annotators_per_pair']} annotators per pair)."
        if result["pairs_short"]:
            text += f" {result['pairs_short']} pairs have fewer than k annotators: the study has only {result['annotators']}."
        messages.success(request, text)
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def system_delete(request, study, system_id: int):
    system = get_object_or_404(AlignmentSystem, pk=system_id, study=study)
    systems_module.system_delete(system=system)
    messages.success(request, f"System “{system.name}” deleted.")
    return redirect("alignment:study", study_id=study.pk)
