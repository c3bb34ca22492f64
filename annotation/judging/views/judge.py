"""The judge's pages: their studies, the rating page (the resume point), revising an
earlier item, submitting, the instructions and the end page.

They render only :class:`~annotation.judging.selectors.JudgeItem` values and the
design's criteria texts: no system, control kind, expected score or database id of a
candidate, original or system reaches the judge's browser.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import Role, StudyStatus
from annotation.judging.selectors.design import design_for_study, study_criteria
from annotation.judging.selectors.judge import (
    item_for_judge,
    item_next_for_judge,
    item_previous_for_judge,
    studies_for_judge,
)
from annotation.judging.services.assignments import assignment_ensure_for_judge, instructions_mark_seen
from annotation.judging.services.submission import judgment_submit
from annotation.web import end_code_context, member_language_activate, participant_page

from ..enums import JudgmentSource
from ..errors import ItemNotFound, JudgingError
from ..forms import JudgmentForm
from ..protocols.registry import protocol_for_design, protocol_for_study
from ..tokens import idempotency_key_new
from ..web import assignment_or_page, gate_page, judged_study_or_404, study_criteria_for_judge, thousands

#: This module's judge page, the one protocols whose ``judge_page`` it is are judged on.
RATE_PAGE = "judging:rate"


@login_required
@participant_page
def judge_home(request):
    member_language_activate(request, Role.JUDGE)
    rows = studies_for_judge(judge=request.user)
    for row in rows:
        if row["is_open"] and row["assignment"] is None:
            # Added after the study opened: build their assignment now.
            assignment_ensure_for_judge(study=row["study"], judge=request.user)
    if any(r["is_open"] and r["assignment"] is None for r in rows):
        rows = studies_for_judge(judge=request.user)
    return render(
        request,
        "judging/home.html",
        {"rows": [dict(r, done_text=thousands(r["done"]), total_text=thousands(r["total"])) for r in rows]},
    )


def _render_item(request, study, item, *, error=None, field_errors=None, posted=None, status=200):
    scores = posted if posted is not None else (item.scores or {})
    criteria = study_criteria_for_judge(study)
    for c in criteria:
        value = scores.get(c["slug"])
        if isinstance(value, str):  # posted back after an error: compare as the stored type
            try:
                value = float(value) if c["continuous"] else int(value)
            except ValueError:
                value = None
        c["checked"] = value
        c["errors"] = (field_errors or {}).get(c["slug"], [])
    return render(
        request,
        "judging/rate.html",
        {
            "study": study,
            "item": item,
            "criteria": criteria,
            "key": idempotency_key_new(),
            "position_text": thousands(item.position),
            "total_text": thousands(item.total),
            "done_text": thousands(item.done),
            "error": error,
        },
        status=status,
    )


@login_required
@require_GET
@participant_page
def rate(request, study_id: int):
    """The judge's current item: the first one not yet rated (the resume point)."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    unit = protocol_for_study(study=study)
    if unit.judge_page != RATE_PAGE:
        return redirect(unit.judge_page, study_id=study.pk)  # another protocol's own page
    if assignment.instructions_seen_at is None:
        return redirect("judging:instructions", study_id=study.pk)
    item = item_next_for_judge(assignment=assignment)
    gate = gate_page(request, study, assignment, done=item.done if item else assignment.n_items)
    if gate is not None:  # screened out, training first, or an attention check
        return gate
    if item is None:
        return redirect("judging:finished", study_id=study.pk)
    return _render_item(request, study, item)


@login_required
@require_GET
@participant_page
def revise(request, study_id: int, token: str):
    """One earlier item of the judge's own assignment, to change its scores."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    try:
        item = item_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_item(request, study, item)


@login_required
@require_POST
@participant_page
def submit(request, study_id: int):
    """The rating form's POST: the same service as the API, then back to the resume point."""
    study = judged_study_or_404(request, study_id)
    form = JudgmentForm(request.POST, criteria=study_criteria(study=study))
    token = request.POST.get("token", "")
    field_errors: Mapping[str, Any]  # the form's ErrorDict, or the service's per-criterion messages
    if not form.is_valid():
        error = _("Give every criterion a value on its scale.")
        field_errors, posted = form.errors, {}
    else:
        try:
            judgment_submit(
                study=study,
                judge=request.user,
                token=form.cleaned_data["token"],
                key=form.cleaned_data["key"],
                scores=form.scores(),
                serve_stamp=form.cleaned_data["serve"],
                active_seconds=form.cleaned_data.get("active_seconds"),
                source=JudgmentSource.PAGE,
            )
        except ItemNotFound as exc:
            raise Http404(exc.message) from None
        except JudgingError as exc:
            if study.status != StudyStatus.OPEN:
                return render(request, "judging/not_open.html", {"study": study}, status=exc.status_code)
            error, field_errors, posted = exc.message, exc.field_errors, form.scores()
        else:  # the service ran the automatic QC screen-out; the rate page shows its outcome
            return redirect("judging:rate", study_id=study.pk)
    try:
        item = item_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_item(request, study, item, error=error, field_errors=field_errors, posted=posted, status=400)


@login_required
@require_http_methods(["GET", "POST"])
@participant_page
def instructions(request, study_id: int):
    """Shown before the first item, and whenever the judge asks (the "?" key)."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if request.method == "POST":
        instructions_mark_seen(assignment=assignment)
        return redirect("judging:rate", study_id=study.pk)
    design = design_for_study(study=study)
    unit = protocol_for_design(design)
    context = unit.instructions_context(design=design, rtl=get_language_bidi()) if design is not None else {}
    criteria = study_criteria_for_judge(study)
    return render(
        request,
        unit.instructions_template,
        {
            "study": study,
            "criteria": criteria,
            "first_visit": assignment.instructions_seen_at is None,
            "total_text": thousands(assignment.n_items),
            "back_keys": unit.back_keys,
            # The slider keys are explained only where the design has a slider.
            "has_slider": any(c["continuous"] for c in criteria),
            **context,
        },
    )


@login_required
@require_GET
@participant_page
def finished(request, study_id: int):
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    unit = protocol_for_study(study=study)
    if unit.items_remaining(assignment=assignment):  # the completion code only once every item is done
        return redirect(unit.judge_page, study_id=study.pk)
    if unit.judge_page != RATE_PAGE:
        return redirect(unit.judge_page, study_id=study.pk)  # that protocol's own end page
    last = item_previous_for_judge(study=study, judge=request.user)
    return render(
        request,
        "judging/finished.html",
        {
            "study": study,
            "total_text": thousands(assignment.n_items),
            "last": last,
            "end": end_code_context(user=request.user, study=study),
        },
    )
