"""The absolute protocol's pages: the rating page (the resume point, and the door every judge
of every protocol comes in by), revising an earlier item, submitting, the end page, and the
attention check's own page (the other protocols draw theirs among their items).

They render only :class:`~.selectors.JudgeItem` values and the design's criteria texts: no
system, control kind, expected score or database id of a candidate, original or system
reaches the judge's browser.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotation.web import end_code_context, participant_page

from ... import screening
from ...errors import JudgingError, JudgmentInvalid
from ...forms import JudgmentForm
from ...models import AttentionCheck
from ...selectors.design import study_criteria
from ...web import (
    JudgePages,
    criteria_for_judge,
    judge_assignment,
    study_criteria_for_judge,
    thousands,
)
from ..registry import protocol_for_study
from .selectors import item_previous_for_judge
from .unit import ABSOLUTE


def _entry_context(study, item, *, field_errors, posted) -> dict:
    """The item's criteria on their scales, each with its value (the stored one, or what the
    judge sent back with a refusal) and its errors."""
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
        c["errors"] = field_errors.get(c["slug"], [])
    return {"item": item, "criteria": criteria}


def _form(request, study) -> JudgmentForm:
    return JudgmentForm(request.POST, criteria=study_criteria(study=study))


def _answer_posted(request, study, token: str) -> dict:
    """The scores the form sent, read on their scales; a form that cannot be read (no token,
    key or stamp, an active time out of range) is refused before the service is asked."""
    form = _form(request, study)
    if not form.is_valid():
        raise JudgmentInvalid(
            _("Give every criterion a value on its scale."),
            field_errors={k: [str(e) for e in v] for k, v in form.errors.items()},
        )
    return {"scores": form.scores()}


def _posted(request, study, item) -> dict:
    """What the judge sent, drawn again with a refusal (nothing when the form could not be read)."""
    form = _form(request, study)
    return form.scores() if form.is_valid() else {}


#: The judge-page flow (annotation.judging.web.JudgePages) on the rating page, the door every
#: judge of every protocol comes in by; its attention checks have their own page and its end
#: page its own URL.
PAGES = JudgePages(
    unit=ABSOLUTE,
    page_template="judging/absolute/rate.html",
    done_page="judging:finished",
    entry_context=_entry_context,
    answer_posted=_answer_posted,
    posted=_posted,
)
rate, revise, submit = PAGES.views("rate", "revise", "submit")


@login_required
@require_GET
@participant_page
def finished(request, study_id: int):
    study, assignment = judge_assignment(request, study_id)
    if isinstance(assignment, HttpResponse):  # not open, or screened out: that page
        return assignment
    unit = protocol_for_study(study=study)
    if unit.items_remaining(assignment=assignment):  # the completion code only once every item is done
        return redirect(unit.judge_page, study_id=study.pk)
    if unit is not ABSOLUTE:
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
    study, assignment = judge_assignment(request, study_id)
    if isinstance(assignment, HttpResponse):  # not open, or screened out: that page
        return assignment
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
