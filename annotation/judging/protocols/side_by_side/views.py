"""Side-by-side comparison pages: the judge's pair page and the researcher's CSV export.

Judge pages render only :class:`~.services.JudgePair` values and
the question texts: no system, control flag or database id reaches the judge's
browser, and the left/right sides were drawn per judge (recorded server-side).
"""

from __future__ import annotations

from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotation.web import csv_response, researcher_study_required

from ...models import JudgingDesign
from ...web import JudgePages, export_filename
from . import services
from .unit import SIDE_BY_SIDE


def _questions(study) -> list[dict]:
    return services.questions(JudgingDesign.objects.get(study=study))


def _entry_context(study, pair, *, field_errors, posted) -> dict:
    answers = posted if posted is not None else (pair.answers or {})
    design = JudgingDesign.objects.get(study=study)
    questions = services.questions(design)
    for q in questions:
        q["checked"] = answers.get(q["slug"])
        q["errors"] = field_errors.get(q["slug"], [])
    return {
        "pair": pair,
        "questions": questions,
        # keys follow the screen: on a mirrored (right-to-left) page A is drawn on the right
        "answers": SIDE_BY_SIDE.answers_for_page(design=design, rtl=get_language_bidi()),
    }


def _posted(request, study, _pair) -> dict:
    return {q["slug"]: request.POST.get(q["slug"]) for q in _questions(study) if request.POST.get(q["slug"])}


#: The judge-page flow (annotation.judging.web.JudgePages) on pairs.
PAGES = JudgePages(
    unit=SIDE_BY_SIDE,
    page_template="judging/side_by_side/page.html",
    done_template="judging/side_by_side/done.html",
    check_warning=lambda: _(
        "That answer was not the one an attentive reader gives: that pair was a check, "
        "one side a copy of the original and the other an unrelated sentence. "
        "Please read each pair carefully."
    ),
    entry_context=_entry_context,
    answer_posted=lambda request, study, token: {"answers": _posted(request, study, None)},
    posted=_posted,
)
side_by_side_page, side_by_side_revise, side_by_side_submit_view = PAGES.views(
    "side_by_side_page", "side_by_side_revise", "side_by_side_submit_view"
)


@researcher_study_required
@require_GET
def export_side_by_side_csv(request, study):
    """Every latest comparison answer with the systems shown on each side (researchers only)."""
    return csv_response(services.side_by_side_export_rows(study=study), export_filename(study, "comparisons"))
