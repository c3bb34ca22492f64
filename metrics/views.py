"""Researcher pages of metric runs: list and start runs, progress, cancel, details, export, PEM models."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from annotation.web import researcher_study_required, study_context
from metrics.core.cards import direction_text
from metrics.core.registry import UnknownMetric
from metrics.services.pem_models import PEM_FEATURE_RESOURCES, pem_model_create, pem_model_run_create
from metrics.services.resources import metric_resource_create
from metrics.services.runs import metric_run_cancel, metric_run_create, metric_run_retry

from . import selectors
from .exports import run_export_csv, run_export_json
from .forms import MetricResourceUploadForm, MetricRunForm, PemTrainForm
from .models import MetricRun, PemModel

SCORES_PER_PAGE = 50


def _messages_of(exc: ValidationError) -> list[str]:
    if hasattr(exc, "message_dict"):
        return [f"{k}: {m}" if k != "__all__" else m for k, msgs in exc.message_dict.items() for m in msgs]
    return list(exc.messages)


def _pem_resource_specs() -> list[dict]:
    """The pem metric's feature resources (phrase table, LM), if pem is registered."""
    try:
        entry = selectors.metric_catalog_entry("pem")
    except KeyError:
        return []
    return [r for r in entry["resources"] if r["name"] in PEM_FEATURE_RESOURCES]


def _run_status_url(study, run) -> str:
    return reverse("metrics:run_status", kwargs={"study_id": study.pk, "run_id": run.pk})


@researcher_study_required
def runs(request, study):
    """The study's runs with progress, and the forms to start a run, upload a resource, train PEM."""
    catalog = selectors.metric_catalog()
    resources = list(selectors.metric_resources_for_user(user=request.user))
    form = MetricRunForm(request.POST or None, catalog=catalog, resources=resources)
    if request.method == "POST" and form.is_valid():
        try:
            run = metric_run_create(study=study, created_by=request.user, **form.run_arguments())
        except ValidationError as exc:
            for msg in _messages_of(exc):
                form.add_error(None, msg)
        else:
            messages.success(
                request,
                f"Run #{run.pk} of {run.metric} is queued: {run.n} candidates in {run.progress_total} chunk(s).",
            )
            return redirect("metrics:runs", study_id=study.pk)
    run_list = list(selectors.metric_runs_for_study(study=study)[:200])
    pem_models = list(selectors.pem_models_for_user(user=request.user))
    active = [{"id": r.pk, "url": _run_status_url(study, r)} for r in run_list if r.is_active]
    active += [
        {"id": f"pem-{m.pk}", "url": reverse("metrics:pem_status", kwargs={"study_id": study.pk, "pem_id": m.pk})}
        for m in pem_models
        if m.study_id == study.pk and not m.is_finished
    ]
    return render(
        request,
        "metrics/runs.html",
        study_context(
            study,
            runs=run_list,
            form=form,
            metric_groups=form.metric_groups(),
            upload_form=MetricResourceUploadForm(),
            resources=resources,
            pem_models=pem_models,
            pem_available=any(m["slug"] == "pem" for m in catalog),
            pem_form=PemTrainForm(resource_specs=_pem_resource_specs(), resources=resources),
            poll=active,
        ),
    )


@researcher_study_required
def run_detail(request, study, run_id: int):
    run = get_object_or_404(MetricRun, pk=run_id, study=study)
    system = request.GET.get("system") or None
    page = Paginator(selectors.metric_scores_page(run=run, system=system), SCORES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    resource_rows = []
    if run.resources:
        found = selectors.metric_resources_by_id(ids=run.resources.values())
        resource_rows = [{"name": k, "resource": found.get(v), "id": v} for k, v in run.resources.items()]
    try:
        card = selectors.metric_catalog_entry(run.metric)["card"]
    except UnknownMetric:
        card = None  # a run of a metric no longer registered still shows its numbers
    if card is not None:
        card = card | {"direction_text": direction_text(card["direction"])}
    return render(
        request,
        "metrics/run_detail.html",
        study_context(
            study,
            run=run,
            card=card,
            page=page,
            system=system,
            systems=[s["system"] for s in run.system_scores],
            resource_rows=resource_rows,
            poll=[{"id": run.pk, "url": _run_status_url(study, run)}] if run.is_active else [],
        ),
    )


def run_status_payload(run: MetricRun) -> dict:
    return {
        "id": run.pk,
        "status": run.status,
        "phase": run.phase,
        "percent": run.percent,
        "done": run.progress_done,
        "total": run.progress_total,
        "unit": "chunks",
        "error": run.error,
        "corpus_score": run.corpus_score,
        "ci_low": run.ci_low,
        "ci_high": run.ci_high,
    }


@researcher_study_required
@require_GET
def run_status(request, study, run_id: int):
    run = get_object_or_404(MetricRun, pk=run_id, study=study)
    return JsonResponse(run_status_payload(run))


@researcher_study_required
@require_POST
def run_cancel(request, study, run_id: int):
    run = get_object_or_404(MetricRun, pk=run_id, study=study)
    run = metric_run_cancel(run=run)
    if run.status == "cancelled":
        messages.info(request, f"Run #{run.pk} of {run.metric} is cancelled.")
    else:
        messages.info(request, f"Run #{run.pk} had already finished ({run.status}).")
    if request.POST.get("next") == "detail":
        return redirect("metrics:run_detail", study_id=study.pk, run_id=run.pk)
    return redirect("metrics:runs", study_id=study.pk)


@researcher_study_required
@require_POST
def run_retry(request, study, run_id: int):
    run = get_object_or_404(MetricRun, pk=run_id, study=study)
    try:
        metric_run_retry(run=run)
    except ValidationError as exc:
        messages.error(request, " ".join(_messages_of(exc)))
    else:
        messages.success(request, f"Run #{run.pk} of {run.metric} is queued again.")
    return redirect("metrics:runs", study_id=study.pk)


@researcher_study_required
@require_GET
def run_export(request, study, run_id: int, fmt: str):
    run = get_object_or_404(MetricRun, pk=run_id, study=study)
    stem = f"{slugify(study.name) or 'study'}-{run.metric}-run{run.pk}"
    if fmt == "csv":
        response = HttpResponse(run_export_csv(run=run), content_type="text/csv; charset=utf-8")
    elif fmt == "json":
        response = HttpResponse(
            json.dumps(run_export_json(run=run), ensure_ascii=False, indent=1),
            content_type="application/json; charset=utf-8",
        )
    else:
        raise Http404("unknown export format")
    response["Content-Disposition"] = f'attachment; filename="{stem}.{fmt}"'
    return response


@researcher_study_required
@require_POST
def resource_upload(request, study):
    form = MetricResourceUploadForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            res = metric_resource_create(
                name=form.cleaned_data["name"],
                kind=form.cleaned_data["kind"],
                file=form.cleaned_data["file"],
                owner=request.user,
                study=study,
                description=form.cleaned_data["description"],
            )
        except ValidationError as exc:
            messages.error(request, "The resource was not stored: " + " ".join(_messages_of(exc)))
        else:
            messages.success(request, f"Stored resource “{res.name}” (sha256 {res.short_hash}…).")
    else:
        errs = [f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()]
        messages.error(request, "The resource was not stored: " + "; ".join(errs))
    return redirect("metrics:runs", study_id=study.pk)


@researcher_study_required
@require_POST
def pem_train(request, study):
    resources = list(selectors.metric_resources_for_user(user=request.user))
    form = PemTrainForm(request.POST, resource_specs=_pem_resource_specs(), resources=resources)
    if form.is_valid():
        try:
            model = pem_model_create(
                study=study,
                name=form.cleaned_data["name"],
                created_by=request.user,
                feature_resources=form.feature_resources(),
                test_share=form.cleaned_data["test_share"],
                seed=form.cleaned_data["seed"],
            )
        except ValidationError as exc:
            messages.error(request, "PEM training was not started: " + " ".join(_messages_of(exc)))
        else:
            messages.success(request, f"PEM model “{model.name}” is being trained on this study's judgments.")
    else:
        errs = [f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()]
        messages.error(request, "PEM training was not started: " + "; ".join(errs))
    return redirect("metrics:runs", study_id=study.pk)


def _usable_pem_model(request, pem_id: int) -> PemModel:
    model = selectors.pem_models_for_user(user=request.user).filter(pk=pem_id).first()
    if model is None:
        raise Http404("no such PEM model")
    return model


@researcher_study_required
@require_POST
def pem_run(request, study, pem_id: int):
    """Score this study with a trained PEM model (trained here or on another study)."""
    model = _usable_pem_model(request, pem_id)
    try:
        run = pem_model_run_create(pem_model=model, study=study, created_by=request.user)
    except ValidationError as exc:
        messages.error(request, "The PEM run was not started: " + " ".join(_messages_of(exc)))
    else:
        messages.success(request, f"Run #{run.pk} of pem with model “{model.name}” is queued.")
    return redirect("metrics:runs", study_id=study.pk)


@researcher_study_required
@require_GET
def pem_status(request, study, pem_id: int):
    model = get_object_or_404(PemModel, pk=pem_id, study=study)
    return JsonResponse(
        {
            "id": model.pk,
            "status": model.status,
            "phase": model.phase,
            "percent": model.percent,
            "done": model.progress_done,
            "total": model.progress_total,
            "unit": "steps",
            "error": model.error,
            "test_pearson": model.test_pearson,
        }
    )
