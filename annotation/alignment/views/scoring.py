"""The researcher's scoring pages: starting runs, a run's results and progress, its exports."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from annotation.alignment.services.queueing import scoring_run_create
from annotation.importing.reading import StudyImportError
from annotation.web import researcher_study_required, study_context

from .. import exports, selectors
from ..enums import ScoringKind
from ..forms import ParaphraseScoringForm, SystemScoringForm
from ..models import AlignmentSystem, ScoringRun
from ._shared import download, import_issues


def _scoring_page(request, study, *, status: int = 200, **overrides):
    systems = list(selectors.systems_for_study(study=study))
    context = study_context(
        study,
        runs=selectors.scoring_runs_for_study(study=study),
        summary=selectors.study_alignment_summary(study=study),
        system_form=SystemScoringForm(systems=systems, prefix="sys"),
        table_form=ParaphraseScoringForm(prefix="para"),
        scoring_errors=[],
    )
    context.update(overrides)
    return render(request, "alignment/scoring.html", context, status=status)


@researcher_study_required
def scoring(request, study):
    """Start scoring runs (system alignment, paraphrase table, agreement) and list them."""
    if request.method != "POST":
        return _scoring_page(request, study)
    kind = request.POST.get("kind")
    params: dict = {}
    overrides: dict = {}
    form: SystemScoringForm | ParaphraseScoringForm | None
    if kind == ScoringKind.SYSTEM:
        form = SystemScoringForm(request.POST, systems=list(selectors.systems_for_study(study=study)), prefix="sys")
        overrides["system_form"] = form
        if form.is_valid():
            params = {
                "system": AlignmentSystem.objects.get(study=study, pk=int(form.cleaned_data["system"])),
                "max_len": form.cleaned_data["max_len"],
                "use_possible": not form.cleaned_data["sure_only"],
            }
    elif kind == ScoringKind.PARAPHRASES:
        form = ParaphraseScoringForm(request.POST, request.FILES, prefix="para")
        overrides["table_form"] = form
        if form.is_valid():
            upload = form.cleaned_data["table"]
            params = {
                "table_data": upload.read(),
                "table_filename": upload.name,
                "min_prob": form.cleaned_data["min_prob"],
                "max_len": form.cleaned_data["max_len"],
            }
    elif kind == ScoringKind.AGREEMENT:
        form = None
    else:
        return _scoring_page(request, study, scoring_errors=["Choose what to score."], status=400)
    if form is not None and not form.is_valid():
        return _scoring_page(request, study, status=400, **overrides)
    try:
        run = scoring_run_create(study=study, user=request.user, kind=kind, **params)
    except ValidationError as exc:
        return _scoring_page(request, study, scoring_errors=exc.messages, status=400, **overrides)
    except StudyImportError as exc:
        return _scoring_page(request, study, scoring_errors=import_issues(exc), status=400, **overrides)
    return redirect("alignment:run", study_id=study.pk, run_id=run.pk)


#: What each summary number is (A: system links, S/P: gold sure/all links; PP: consistent phrase pairs).
SUMMARY_MEANINGS = {
    "link_precision": "|A∩P| / |A|",
    "link_recall": "|A∩S| / |S|",
    "link_f1": "harmonic mean of link precision and recall",
    "aer": "alignment error rate, 1 − (|A∩S| + |A∩P|) / (|A| + |S|)",
    "align_prec": "AlignPrec: Σ|PP(S) ∩ PP(M)| / Σ|PP(S)|",
    "align_recall": "AlignRecall: Σ|PP(S) ∩ PP(M)| / Σ|PP(M)|",
    "align_f1": "harmonic mean of AlignPrec and AlignRecall",
    "n_pairs": "sentence pairs scored",
    "n_pairs_without_system": "pairs with gold but no alignment from this system (left out)",
    "n_pairs_with_gold": "pairs with at least one submitted alignment",
    "lb_precision": "LB-Precision: correct / posited paraphrases",
    "rel_recall": "Rel-Recall: correct / reference paraphrases",
    "n_posited": "unique (phrase, paraphrase) pairs the table posits, per group",
    "n_correct": "of those, in the group's reference paraphrases",
    "n_reference": "reference paraphrases read off the gold",
    "n_groups": "groups scored",
    "n_table_entries": "entries in the uploaded table",
    "kappa": "Cohen's kappa over grid cells (none / sure / possible)",
    "kappa_linked": "Cohen's kappa over grid cells (linked / not linked)",
    "observed": "share of cells given the same label",
    "n_cells": "grid cells compared",
    "n_pairs_distinct": "sentence pairs aligned by two or more annotators",
    "n_annotator_pairs": "pairs of annotators compared",
}


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _run_or_404(study, run_id: int) -> ScoringRun:
    return get_object_or_404(ScoringRun.objects.select_related("system", "created_by"), pk=run_id, study=study)


@researcher_study_required
@require_GET
def run_detail(request, study, run_id: int):
    run = _run_or_404(study, run_id)
    tables = []
    if run.status == "succeeded":
        for key, title in exports.RUN_TABLES[ScoringKind(run.kind)]:
            header, rows = exports.run_table(run, key)
            if key == "summary" and rows:
                # One row of many numbers reads better standing up: name, meaning, value.
                tables.append(
                    {
                        "key": key,
                        "title": title,
                        "header": ["measure", "meaning", "value"],
                        "rows": [[h, SUMMARY_MEANINGS.get(h, ""), _cell(v)] for h, v in zip(header, rows[0])],
                    }
                )
                continue
            tables.append(
                {"key": key, "title": title, "header": header, "rows": [[_cell(v) for v in row] for row in rows]}
            )
    return render(request, "alignment/run.html", study_context(study, run=run, tables=tables))


@researcher_study_required
@require_GET
def run_status(request, study, run_id: int):
    run = _run_or_404(study, run_id)
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
@require_GET
def run_export(request, study, run_id: int, fmt: str):
    run = _run_or_404(study, run_id)
    if run.status != "succeeded":
        return HttpResponse("this run has no results", status=409, content_type="text/plain; charset=utf-8")
    try:
        text, filename, ctype = exports.run_export(run=run, fmt=fmt, table=request.GET.get("table", "summary"))
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return download(text, filename, ctype)
