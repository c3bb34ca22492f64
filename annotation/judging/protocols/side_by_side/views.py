"""Side-by-side comparison pages: the judge's pair page and the researcher's CSV export.

Judge pages render only :class:`~.services.JudgePair` values and
the question texts: no system, control flag or database id reaches the judge's
browser, and the left/right sides were drawn per judge (recorded server-side).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.web import csv_response, participant_page, researcher_study_required

from ...enums import JudgmentSource
from ...models import JudgingDesign
from ...tokens import idempotency_key_new
from ...web import JudgePages, export_filename, thousands
from . import screening as sbs_screening
from . import services
from .unit import SIDE_BY_SIDE


def _questions(study) -> list[dict]:
    return services.questions(JudgingDesign.objects.get(study=study))


def _render_pair(request, study, pair, *, error=None, field_errors=None, posted=None, status=200):
    answers = posted if posted is not None else (pair.answers or {})
    design = JudgingDesign.objects.get(study=study)
    questions = services.questions(design)
    for q in questions:
        q["checked"] = answers.get(q["slug"])
        q["errors"] = (field_errors or {}).get(q["slug"], [])
    return render(
        request,
        "judging/side_by_side/page.html",
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


def _submit_post(request, study, token: str):
    return sbs_screening.answer_submit(
        study=study,
        judge=request.user,
        token=token,
        key=request.POST.get("key", ""),
        answers=_posted(request, study, None),
        serve_stamp=request.POST.get("serve", ""),
        active_seconds=request.POST.get("active_seconds") or None,
        source=JudgmentSource.PAGE,
    )


def _posted(request, study, _pair) -> dict:
    return {q["slug"]: request.POST.get(q["slug"]) for q in _questions(study) if request.POST.get(q["slug"])}


#: The judge-page flow (annotation.judging.web.JudgePages) on pairs.
PAGES = JudgePages(
    unit=SIDE_BY_SIDE,
    done_template="judging/side_by_side/done.html",
    check_warning=lambda: _(
        "That answer was not the one an attentive reader gives: that pair was a check, "
        "one side a copy of the original and the other an unrelated sentence. "
        "Please read each pair carefully."
    ),
    render_entry=_render_pair,
    submit_post=_submit_post,
    posted=_posted,
)


@participant_page
@login_required
@require_GET
def side_by_side_page(request, study_id: int):
    """The judge's current pair: the first one not yet answered (the resume point)."""
    return PAGES.current(request, study_id)


@participant_page
@login_required
@require_GET
def side_by_side_revise(request, study_id: int, token: str):
    """One earlier pair of the judge's own assignment, to change the answer."""
    return PAGES.revise(request, study_id, token)


@participant_page
@login_required
@require_POST
def side_by_side_submit_view(request, study_id: int):
    """The pair form's POST: the same service as the API, then back to the resume point."""
    return PAGES.submit(request, study_id)


@researcher_study_required
@require_GET
def export_side_by_side_csv(request, study):
    """Every latest comparison answer with the systems shown on each side (researchers only)."""
    return csv_response(services.side_by_side_export_rows(study=study), export_filename(study, "comparisons"))
