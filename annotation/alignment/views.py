# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Pages of the alignment app: the annotator's task list, grid and guidelines; the
researcher's alignment page, pair preview, scoring runs, results and exports."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.importing import StudyImportError
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict
from annotation.enums import Role
from annotation.views import (member_language_activate, participant_page, researcher_study_required, study_context,
                              study_language_activate)

from . import exports, selectors, services
from .enums import ALIGNMENT_FORMATS, ScoringKind
from .forms import AlignerRunForm, AlignmentConfigForm, PairsImportForm, ParaphraseScoringForm, SystemImportForm, SystemScoringForm
from .models import AlignerRun, AlignmentAssignment, AlignmentPair, AlignmentSystem, ScoringRun


def _download(text: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _links(alignment) -> dict:
    if alignment is None:
        return None
    return {"sure": sorted([i, j] for i, j in alignment.sure), "possible": sorted([i, j] for i, j in alignment.possible)}


# ============================================================================ annotators

def annotator_assignment_required(view):
    """Load ``assignment_id``; only its annotator, while still an annotator of the study, may open it (403)."""

    @login_required
    @participant_page
    @wraps(view)
    def wrapper(request, assignment_id: int, *args, **kwargs):
        found = get_object_or_404(AlignmentAssignment.objects.select_related("pair"), pk=assignment_id)
        assignment = selectors.assignment_for_annotator(assignment_id=assignment_id, user=request.user)
        if assignment is None:
            if found.annotator_id == request.user.pk and user_role_conflict(study=found.pair.study_id, user=request.user):
                raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
            raise PermissionDenied("This pair is assigned to someone else.")
        study_language_activate(assignment.pair.study)
        return view(request, assignment, *args, **kwargs)

    return wrapper


@login_required
@participant_page
def home(request):
    """The annotator's task list: every assigned pair, by study, with its state."""
    member_language_activate(request, Role.ANNOTATOR)
    assignments = list(selectors.assignments_for_annotator(user=request.user))
    numbers = selectors.pair_numbers_for_annotator(user=request.user)
    studies: dict[int, dict] = {}
    for a in assignments:
        a.number = numbers.get(a.pk)
        entry = studies.setdefault(a.pair.study_id, {"study": a.pair.study, "assignments": [], "done": 0})
        entry["assignments"].append(a)
        entry["done"] += a.is_submitted
    from annotation.participation.views import end_code_context  # join-link participants: their code

    for entry in studies.values():
        if entry["done"] == len(entry["assignments"]):
            entry["end"] = end_code_context(user=request.user, study=entry["study"])
    nxt = selectors.assignment_next_for_annotator(user=request.user)
    if nxt is not None:
        nxt.number = numbers.get(nxt.pk)
    return render(request, "alignment/home.html", {"studies": list(studies.values()), "next": nxt,
                                                   "total": len(assignments)})


@login_required
@participant_page
def next_task(request):
    nxt = selectors.assignment_next_for_annotator(user=request.user)
    if nxt is None:
        member_language_activate(request, Role.ANNOTATOR)
        messages.info(request, _("You have no pairs left to align. Thank you!"))
        return redirect("alignment:home")
    return redirect("alignment:grid", assignment_id=nxt.pk)


@login_required
@participant_page
def guidelines(request):
    member_language_activate(request, Role.ANNOTATOR)
    return render(request, "alignment/guidelines.html")


def _grid_data(*, pair: AlignmentPair, label: str, links: dict, automatic, readonly: bool, revision: int = 0,
               active_seconds: float = 0.0, urls: dict | None = None, csrf_token: str = "") -> dict:
    """What grid.js reads. ``label`` names the pair: the researcher's id on researcher
    pages, the annotator's own pair number on theirs."""
    return {
        "pair": label, "tokens1": pair.tokens1, "tokens2": pair.tokens2,
        "sure": links["sure"], "possible": links["possible"], "automatic": _links(automatic),
        "readonly": readonly, "revision": revision, "active_seconds": active_seconds,
        "urls": urls or {}, "csrf_token": csrf_token,
    }


@annotator_assignment_required
def grid(request, assignment):
    """The alignment grid of one assigned pair (editable until submitted)."""
    from django.middleware.csrf import get_token

    services.assignment_open(assignment=assignment)
    pair = assignment.pair
    readonly = assignment.is_submitted
    nxt = selectors.assignment_next_for_annotator(user=request.user, after=assignment)
    mine = list(selectors.assignments_for_annotator(user=request.user).filter(pair__study=pair.study).values_list("pk", flat=True))
    position = mine.index(assignment.pk) + 1 if assignment.pk in mine else None
    data = _grid_data(
        pair=pair, label=str(position or ""), links={"sure": assignment.sure, "possible": assignment.possible},
        automatic=selectors.automatic_alignment_for(assignment=assignment), readonly=readonly,
        revision=assignment.revision, active_seconds=assignment.active_seconds, csrf_token=get_token(request),
        urls={
            "draft": reverse("alignment-api:assignment_draft", kwargs={"assignment_id": assignment.pk}),
            "submit": reverse("alignment-api:assignment_submit", kwargs={"assignment_id": assignment.pk}),
            "after_submit": reverse("alignment:grid", kwargs={"assignment_id": nxt.pk}) if nxt else reverse("alignment:home"),
        },
    )
    return render(request, "alignment/grid.html", {
        "assignment": assignment, "pair": pair, "study": pair.study, "grid_data": data, "readonly": readonly,
        "next": nxt, "position": position, "count": len(mine),
    })


# ============================================================================ researchers

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
        config_form=AlignmentConfigForm(systems=systems, prefix="config", initial={
            "annotators_per_pair": config.annotators_per_pair,
            "prefill_system": str(config.prefill_system_id or "")}),
        aligner_form=AlignerRunForm(prefix="aligner"),
        aligner_runs=selectors.aligner_runs_for_study(study=study),
        pairs_errors=[], system_errors=[], aligner_errors=[],
    )
    context.update(overrides)
    return render(request, "alignment/study.html", context, status=status)


@researcher_study_required
@require_GET
def study_page(request, study):
    """The researcher's alignment page of a study: data, systems, settings, people, exports."""
    return _study_page(request, study)


def _issues(exc: StudyImportError) -> list[str]:
    return [i.render(exc.filename) for i in exc.issues]


@researcher_study_required
@require_POST
def import_pairs(request, study):
    form = PairsImportForm(request.POST, request.FILES, prefix="pairs")
    if not form.is_valid():
        return _study_page(request, study, pairs_form=form, status=400)
    upload = form.cleaned_data["file"]
    try:
        summary = services.pairs_import_file(
            study=study, data=upload.read(), filename=upload.name, fmt=form.cleaned_data["format"] or None,
            pretokenized=form.cleaned_data["pretokenized"], replace=form.cleaned_data["replace"])
    except StudyImportError as exc:
        return _study_page(request, study, pairs_form=form, pairs_errors=_issues(exc), status=400)
    messages.success(request, f"Imported {upload.name}: {summary['pairs_added']} pairs in {summary['groups_added']} new groups.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def import_system(request, study):
    form = SystemImportForm(request.POST, request.FILES, prefix="system")
    if not form.is_valid():
        return _study_page(request, study, system_form=form, status=400)
    upload = form.cleaned_data["file"]
    try:
        system = services.system_alignments_import(
            study=study, name=form.cleaned_data["name"], data=upload.read(), filename=upload.name,
            fmt=form.cleaned_data["format"], replace=form.cleaned_data["replace"])
    except StudyImportError as exc:
        return _study_page(request, study, system_form=form, system_errors=_issues(exc), status=400)
    messages.success(request, f"Imported the alignments of system “{system.name}”.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def run_aligner(request, study):
    form = AlignerRunForm(request.POST, prefix="aligner")
    if not form.is_valid():
        return _study_page(request, study, aligner_form=form, status=400)
    try:
        services.aligner_run_create(study=study, user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _study_page(request, study, aligner_form=form, aligner_errors=exc.messages, status=400)
    messages.info(request, "The aligner is running in the background.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_GET
def aligner_run_status(request, study, run_id: int):
    run = get_object_or_404(AlignerRun, pk=run_id, study=study)
    return JsonResponse({"id": run.pk, "status": run.status, "phase": run.phase, "percent": run.percent,
                         "done": run.progress_done, "total": run.progress_total, "error": run.error})


@researcher_study_required
@require_POST
def update_settings(request, study):
    systems = list(selectors.systems_for_study(study=study))
    form = AlignmentConfigForm(request.POST, systems=systems, prefix="config")
    if not form.is_valid():
        return _study_page(request, study, config_form=form, status=400)
    prefill = form.cleaned_data["prefill_system"]
    system = AlignmentSystem.objects.filter(study=study, pk=int(prefill)).first() if prefill else None
    services.alignment_config_update(study=study, annotators_per_pair=form.cleaned_data["annotators_per_pair"],
                                     prefill_system=system, clear_prefill=system is None)
    messages.success(request, "Alignment settings saved.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_POST
def assign(request, study):
    try:
        result = services.assignments_create(study=study)
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
    services.system_delete(system=system)
    messages.success(request, f"System “{system.name}” deleted.")
    return redirect("alignment:study", study_id=study.pk)


@researcher_study_required
@require_GET
def export_alignments(request, study):
    try:
        text, filename, ctype = exports.alignment_export(
            study=study, source=request.GET.get("source", "gold"), fmt=request.GET.get("format", "pharaoh"))
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return _download(text, filename, ctype)


@researcher_study_required
@require_GET
def export_pairs(request, study, fmt: str):
    try:
        text, filename, ctype = exports.pairs_export(study=study, fmt=fmt)
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return _download(text, filename, ctype)


@researcher_study_required
@require_GET
def pair_list(request, study):
    """Every pair with how many annotators submitted it, paginated."""
    from django.db.models import Count, Q

    from .enums import AssignmentStatus

    qs = selectors.pairs_for_study(study=study).annotate(
        n_assigned=Count("assignments"), n_submitted=Count("assignments", filter=Q(assignments__status=AssignmentStatus.SUBMITTED)))
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(request, "alignment/pairs.html", study_context(study, page=page))


@researcher_study_required
@require_GET
def pair_view(request, study, pair_id: int):
    """A read-only grid of one pair showing any source: gold, a system, an annotator."""
    pair = get_object_or_404(AlignmentPair, pk=pair_id, study=study)
    sources = exports.alignment_sources(study=study)
    source = request.GET.get("source") or "gold"
    try:
        found, _name = exports.source_alignments(study, source)
    except exports.ExportError:
        found, source = {}, "gold"
    alignment = found.get(pair.pk)
    links = _links(alignment) or {"sure": [], "possible": []}
    previous = AlignmentPair.objects.filter(study=study, position__lt=pair.position).order_by("-position").first()
    following = AlignmentPair.objects.filter(study=study, position__gt=pair.position).order_by("position").first()
    return render(request, "alignment/pair.html", study_context(
        study, pair=pair, sources=sources, source=source, has_alignment=alignment is not None,
        grid_data=_grid_data(pair=pair, label=pair.external_id, links=links, automatic=None, readonly=True),
        previous=previous, following=following))


# ---------------------------------------------------------------------------- scoring

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
    if kind == ScoringKind.SYSTEM:
        form = SystemScoringForm(request.POST, systems=list(selectors.systems_for_study(study=study)), prefix="sys")
        overrides["system_form"] = form
        if form.is_valid():
            params = {"system": AlignmentSystem.objects.get(study=study, pk=int(form.cleaned_data["system"])),
                      "max_len": form.cleaned_data["max_len"], "use_possible": not form.cleaned_data["sure_only"]}
    elif kind == ScoringKind.PARAPHRASES:
        form = ParaphraseScoringForm(request.POST, request.FILES, prefix="para")
        overrides["table_form"] = form
        if form.is_valid():
            upload = form.cleaned_data["table"]
            params = {"table_data": upload.read(), "table_filename": upload.name,
                      "min_prob": form.cleaned_data["min_prob"], "max_len": form.cleaned_data["max_len"]}
    elif kind == ScoringKind.AGREEMENT:
        form = None
    else:
        return _scoring_page(request, study, scoring_errors=["Choose what to score."], status=400)
    if form is not None and not form.is_valid():
        return _scoring_page(request, study, status=400, **overrides)
    try:
        run = services.scoring_run_create(study=study, user=request.user, kind=kind, **params)
    except ValidationError as exc:
        return _scoring_page(request, study, scoring_errors=exc.messages, status=400, **overrides)
    except StudyImportError as exc:
        return _scoring_page(request, study, scoring_errors=_issues(exc), status=400, **overrides)
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
        for key, title in exports.RUN_TABLES[run.kind]:
            header, rows = exports.run_table(run, key)
            if key == "summary" and rows:
                # One row of many numbers reads better standing up: name, meaning, value.
                tables.append({"key": key, "title": title, "header": ["measure", "meaning", "value"],
                               "rows": [[h, SUMMARY_MEANINGS.get(h, ""), _cell(v)] for h, v in zip(header, rows[0])]})
                continue
            tables.append({"key": key, "title": title, "header": header,
                           "rows": [[_cell(v) for v in row] for row in rows]})
    return render(request, "alignment/run.html", study_context(study, run=run, tables=tables))


@researcher_study_required
@require_GET
def run_status(request, study, run_id: int):
    run = _run_or_404(study, run_id)
    return JsonResponse({"id": run.pk, "status": run.status, "phase": run.phase, "percent": run.percent,
                         "done": run.progress_done, "total": run.progress_total, "error": run.error})


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
    return _download(text, filename, ctype)
