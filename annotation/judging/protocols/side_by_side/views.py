"""Side-by-side comparison pages: the judge's pair page and the researcher's CSV export.

Judge pages render only :class:`~annotation.judging.comparison.JudgePair` values and
the question texts: no system, control flag or database id reaches the judge's
browser, and the left/right sides were drawn per judge (recorded server-side).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.enums import StudyStatus
from annotation.web import csv_response, end_code_context, participant_page, researcher_study_required

from ... import screening
from ...enums import JudgmentSource
from ...errors import ItemNotFound, JudgingError
from ...models import JudgingDesign
from ...selectors.judge import progress_among_checks
from ...tokens import idempotency_key_new
from ...web import assignment_or_page, export_filename, gate_page, judged_study_or_404, thousands
from . import screening as sbs_screening
from . import services as comparison
from .unit import SIDE_BY_SIDE


def _questions(study) -> list[dict]:
    return comparison.questions(JudgingDesign.objects.get(study=study))


def _render_pair(request, study, pair, *, error=None, field_errors=None, posted=None, status=200):
    answers = posted if posted is not None else (pair.answers or {})
    design = JudgingDesign.objects.get(study=study)
    questions = comparison.questions(design)
    for q in questions:
        q["checked"] = answers.get(q["slug"])
        q["errors"] = (field_errors or {}).get(q["slug"], [])
    return render(
        request,
        "judging/compare.html",
        {
            "study": study,
            "pair": pair,
            "questions": questions,
            "key": idempotency_key_new(),
            "position_text": thousands(pair.position),
            "total_text": thousands(pair.total),
            "done_text": thousands(pair.done),
            "error": error,
            "back_keys": SIDE_BY_SIDE.back_keys,
            # keys follow the screen: on a mirrored (right-to-left) page A is drawn on the right
            "answers": SIDE_BY_SIDE.answers_for_page(design=design, rtl=get_language_bidi()),
        },
        status=status,
    )


def _comparison_study(request, study_id: int):
    """The judge's study, or None when it is not a side-by-side comparison."""
    study = judged_study_or_404(request, study_id)
    return study if SIDE_BY_SIDE.is_protocol_of(study) else None


@participant_page
@login_required
@require_GET
def compare(request, study_id: int):
    """The judge's current pair: the first one not yet answered (the resume point)."""
    study = _comparison_study(request, study_id)
    if study is None:  # a study rated one pair at a time: its own rating page
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    if assignment.instructions_seen_at is None:
        return redirect("judging:instructions", study_id=study.pk)
    gate = screening.judge_gate(assignment=assignment, done=comparison.pairs_done(assignment=assignment))
    if gate is not None and gate[1] is not None:  # an attention check (the one gate with a check): drawn like any pair
        return _render_pair(request, study, sbs_screening.attention_pair(check=gate[1]))
    if gate is not None:  # screened out, or the training first
        return gate_page(request, study, assignment, done=comparison.pairs_done(assignment=assignment))
    pair = comparison.pair_next_for_judge(assignment=assignment)
    if pair is None:
        last = comparison.pair_previous_for_judge(study=study, judge=request.user)
        return render(
            request,
            "judging/compare_done.html",
            {
                "study": study,
                # The checks among the items count, as every item's "n of N" did.
                "total_text": thousands(progress_among_checks(assignment=assignment, done=0)[1]),
                "last": last,
                "end": end_code_context(user=request.user, study=study),
            },
        )
    return _render_pair(request, study, pair)


@participant_page
@login_required
@require_GET
def compare_revise(request, study_id: int, token: str):
    """One earlier pair of the judge's own assignment, to change the answer."""
    study = _comparison_study(request, study_id)
    if study is None:  # a study rated one pair at a time: its own rating page
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    try:
        pair = sbs_screening.pair_or_attention_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_pair(request, study, pair)


@participant_page
@login_required
@require_POST
def compare_submit(request, study_id: int):
    """The pair form's POST: the same service as the API, then back to the resume point."""
    study = _comparison_study(request, study_id)
    if study is None:  # a study rated one pair at a time: its own rating page
        return redirect("judging:rate", study_id=study_id)
    token = request.POST.get("token", "")
    answers = {q["slug"]: request.POST.get(q["slug"]) for q in _questions(study) if request.POST.get(q["slug"])}
    try:  # a pair or an attention pair: one path, one answer (sbs_screening.answer_submit)
        result = sbs_screening.answer_submit(
            study=study,
            judge=request.user,
            token=token,
            key=request.POST.get("key", ""),
            answers=answers,
            serve_stamp=request.POST.get("serve", ""),
            active_seconds=request.POST.get("active_seconds") or None,
            source=JudgmentSource.PAGE,
        )
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    except JudgingError as exc:
        if study.status != StudyStatus.OPEN:
            return render(request, "judging/not_open.html", {"study": study}, status=exc.status_code)
        try:
            pair = sbs_screening.pair_or_attention_for_judge(study=study, judge=request.user, token=token)
        except ItemNotFound as missing:
            raise Http404(missing.message) from None
        return _render_pair(
            request, study, pair, error=exc.message, field_errors=exc.field_errors, posted=answers, status=400
        )
    if result.check_failed and not result.screened_out:
        # The "warn" policy tells the judge, once, after the fact (issue 25).
        messages.warning(
            request,
            _(
                "That answer was not the one an attentive reader gives: that pair was a check, "
                "one side a copy of the original and the other an unrelated sentence. "
                "Please read each pair carefully."
            ),
        )
    return redirect("judging:compare", study_id=study.pk)


@researcher_study_required
@require_GET
def export_comparisons(request, study):
    """Every latest comparison answer with the systems shown on each side (researchers only)."""
    return csv_response(comparison.comparison_export_rows(study=study), export_filename(study, "comparisons"))
