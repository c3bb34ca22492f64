"""The dashboard's pages: the live dashboard, the planner and the bonus page. They read
and call services; the figures come from the cached snapshot through the API (dashboard.js)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from annotation.adaptive import services as adaptive_services
from annotation.adaptive.selectors import adaptive_for_study
from annotation.participation.selectors import participants_rows
from annotation.web import researcher_study_required, study_context

from .bonus import BonusRule, bonus_lines, bonus_sums, mturk_bonus_csv, prolific_bulk_bonus
from .forms import AdaptiveForm, BonusForm, PlanForm, RateForm
from .services import queueing, snapshot


def _errors(exc: ValidationError) -> str:
    return "; ".join(exc.messages)


@researcher_study_required
@require_GET
def dashboard(request, study):
    d = snapshot.dashboard_get_or_create(study=study)
    a = adaptive_for_study(study=study)
    return render(
        request,
        "dashboard/dashboard.html",
        study_context(
            study,
            dashboard=d,
            rate_form=RateForm(initial={"item_rate": d.item_rate, "currency": d.currency}),
            adaptive_form=AdaptiveForm(
                initial={
                    "enabled": a.enabled,
                    "stop_when_stable": a.stop_when_stable,
                    "level": a.level,
                    "min_judgments": a.min_judgments,
                    "min_judges": a.min_judges,
                    "max_judge_share": a.max_judge_share,
                    "window": a.window,
                }
                if a
                else None
            ),
        ),
    )


@researcher_study_required
@require_POST
def settings_save(request, study):
    form = RateForm(request.POST)
    if form.is_valid():
        snapshot.dashboard_settings_update(study=study, **form.cleaned_data)
        messages.success(request, "Rate saved; the projection follows.")
    else:
        messages.error(request, "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()))
    return redirect("dashboard:dashboard", study_id=study.pk)


@researcher_study_required
@require_POST
def adaptive_save(request, study):
    form = AdaptiveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(str(e) for e in v)}" for k, v in form.errors.items()))
        return redirect("dashboard:dashboard", study_id=study.pk)
    try:
        adaptive_services.adaptive_settings_update(study=study, changes=form.cleaned_data)
        messages.success(request, "Adaptive allocation " + ("on." if form.cleaned_data["enabled"] else "off."))
    except ValidationError as exc:
        messages.error(request, _errors(exc))
    return redirect("dashboard:dashboard", study_id=study.pk)


@researcher_study_required
def plan(request, study):
    d = snapshot.dashboard_get_or_create(study=study)
    status = 200
    if request.method == "POST":
        form = PlanForm(request.POST)
        status = 400  # unless queued: the form again, each refused value named at its field
        if form.is_valid():
            try:
                queueing.study_plan_request(study=study, raw=form.cleaned_data)
                messages.success(request, "Planning: the simulations run in the background.")
                return redirect("dashboard:plan", study_id=study.pk)
            except ValidationError as exc:
                messages.error(request, _errors(exc))
                for field, problems in (exc.message_dict if hasattr(exc, "error_dict") else {}).items():
                    form.add_error(field if field in form.fields else None, problems)
    else:
        params = (d.plan or {}).get("params") or {}
        form = PlanForm(
            initial={
                "n_originals": study.originals.count() or 50,
                **{
                    k: v
                    for k, v in params.items()
                    if k in PlanForm.base_fields and v is not None and k != "system_means"
                },
            }
        )
    return render(
        request, "dashboard/plan.html", study_context(study, dashboard=d, plan=d.plan or {}, form=form), status=status
    )


@researcher_study_required
@require_GET
def bonus(request, study):
    form = BonusForm(request.GET or None)
    lines, sums = [], None
    if form.is_bound and form.is_valid():
        try:
            rule = BonusRule(**form.cleaned_data)
            lines = bonus_lines(participants_rows(study=study), rule)
        except ValueError as exc:  # a bad rule, or one that pays someone more than the maximum
            form.add_error(None, str(exc))
        else:
            sums = bonus_sums(lines)
            fmt = request.GET.get("download")
            if fmt in ("prolific", "mturk"):
                body = prolific_bulk_bonus(lines) if fmt == "prolific" else mturk_bonus_csv(lines, reason=rule.reason)
                ext = "txt" if fmt == "prolific" else "csv"
                response = HttpResponse(
                    body, content_type="text/plain; charset=utf-8" if ext == "txt" else "text/csv; charset=utf-8"
                )
                response["Content-Disposition"] = (
                    f'attachment; filename="{slugify(study.name) or "study"}-bonus-{fmt}.{ext}"'
                )
                return response
            if fmt:
                return HttpResponse("download must be prolific or mturk", status=400, content_type="text/plain")
    if form.is_bound and form.errors and request.GET.get("download"):
        return HttpResponse(
            "; ".join(
                " ".join(str(e) for e in v) if k == "__all__" else f"{k}: {' '.join(str(e) for e in v)}"
                for k, v in form.errors.items()
            ),
            status=400,
            content_type="text/plain",
        )
    return render(
        request,
        "dashboard/bonus.html",
        study_context(study, form=form, lines=lines, sums=sums, query=request.GET.urlencode()),
        status=400 if form.is_bound and form.errors else 200,
    )
