"""The absolute protocol's pages: the rating page (the resume point, and the door every judge
of every protocol comes in by), revising an earlier item, submitting, the end page, and the
attention check's own page (the other protocols draw theirs among their items).

They render only :class:`~.selectors.JudgeItem` values and the design's criteria texts: no
system, control kind, expected score or database id of a candidate, original or system
reaches the judge's browser.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import StudyStatus
from annotation.web import end_code_context, participant_page

from ... import screening
from ...enums import JudgmentSource
from ...errors import ItemNotFound, JudgingError
from ...forms import JudgmentForm
from ...models import AttentionCheck
from ...selectors.design import study_criteria
from ...tokens import idempotency_key_new
from ...web import (
    assignment_or_page,
    criteria_for_judge,
    gate_page,
    judged_study_or_404,
    study_criteria_for_judge,
    thousands,
)
from ..registry import protocol_for_study
from .selectors import item_for_judge, item_next_for_judge, item_previous_for_judge
from .services import judgment_submit

#: This module's judge page, the one protocols whose ``judge_page`` it is are judged on.
RATE_PAGE = "judging:rate"


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
        "judging/absolute/rate.html",
        {
            "study": study,
            "entry": item,  # the shared page's name (judging/_entry_page.html)
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
        "judging/absolute/finished.html",
        {
            "study": study,
            "total_text": thousands(assignment.n_items),
            "last": last,
            "end": end_code_context(user=request.user, study=study),
        },
    )


@participant_page
@login_required
@require_http_methods(["GET", "POST"])
def attention(request, study_id: int):
    """A waiting attention check (GET) or its answer (POST, then back to the items)."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    unit = protocol_for_study(study=study)
    if unit.attention_page != "judging:attention":  # its checks are drawn on its own judge page
        return redirect(unit.attention_page, study_id=study.pk)
    check = (
        AttentionCheck.objects.filter(assignment=assignment, answered_at__isnull=True)
        .select_related("assignment")
        .order_by("after_done", "id")
        .first()
    )
    error = None
    if request.method == "POST" and check is not None:
        try:
            check, failures, ended = screening.attention_answer(
                assignment=assignment, token=request.POST.get("token", ""), value=request.POST.get("value", "")
            )
        except JudgingError as exc:
            error = exc.message
        else:
            if ended:
                return redirect("judging:screened_out", study_id=study.pk)
            if not check.passed:
                messages.warning(
                    request,
                    _("That answer did not follow the attention check's instruction. Please read each page carefully."),
                )
            return redirect("judging:rate", study_id=study.pk)
    if check is None:
        return redirect("judging:rate", study_id=study.pk)
    shown = screening.attention_for_judge(check)
    criterion = criteria_for_judge([shown["criterion"]])[0]
    return render(
        request,
        "judging/absolute/attention.html",
        {"study": study, "check": shown, "criterion": criterion, "error": error},
        status=400 if error else 200,
    )
