"""ESA pages: the judge's item page (mark spans, score, submit) and the researcher's exports.

Judge pages render only :class:`~.services.JudgeEsaItem` values, the design's categories and
the page's own words: no system, control flag or database id reaches the judge's browser.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import StreamingHttpResponse
from django.shortcuts import redirect
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.importing.reading import StudyImportError
from annotation.web import csv_response, researcher_study_required

from ...models import JudgingDesign
from ...web import JudgePages, export_filename
from . import selectors as esa_reads
from . import services as esa
from .imports import esa_proposals_import_upload
from .unit import ESA
from .words import page_words


def _entry_context(study, entry, *, field_errors, posted) -> dict:
    design = JudgingDesign.objects.get(study=study)
    spans, score = entry.spans, entry.score
    if posted is not None:  # the judge's own submission, sent back with the error
        spans, score = posted
    data = {
        "original": entry.original,
        "candidate": entry.candidate,
        "spans": spans,
        "score": score,
        "categories": esa.categories_allowed(design),
        "pending": entry.proposals_pending and posted is None,
        "words": page_words(),
    }
    return {
        "item": entry,
        "esa_data": data,
        "score_value": "" if score is None else f"{score:g}",
    }


def _spans_posted(request):
    try:
        return json.loads(request.POST.get("spans") or "[]")
    except ValueError:
        return None


def _float_or_none(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _posted(request, study, entry):
    """The spans and the score the judge sent, drawn again with a refusal."""
    spans = _spans_posted(request)
    score = request.POST.get("score") or None
    return (spans if isinstance(spans, list) else entry.spans, None if score is None else _float_or_none(score))


#: The judge-page flow (annotation.judging.web.JudgePages) on ESA items.
PAGES = JudgePages(
    unit=ESA,
    page_template="judging/esa/page.html",
    done_template="judging/esa/done.html",
    check_warning=lambda: _(
        "That answer was not the one an attentive reader gives: that item was a check, "
        "a copy of the original or an unrelated sentence. Please read each item carefully."
    ),
    entry_context=_entry_context,
    answer_posted=lambda request, study, token: {
        "spans": _spans_posted(request),
        "score": request.POST.get("score") or None,
    },
    posted=_posted,
)
esa_page, esa_revise, esa_submit_view = PAGES.views("esa_page", "esa_revise", "esa_submit_view")


@researcher_study_required
@require_GET
def export_esa_csv(request, study):
    """Every latest ESA judgment with its system, spans and score (researchers only)."""
    return csv_response(esa_reads.esa_export_rows(study=study), export_filename(study, "esa"))


@researcher_study_required
@require_GET
def export_esa_jsonl(request, study):
    """Every latest ESA judgment as a JSON line (code-point offsets, end exclusive; researchers only)."""
    response = StreamingHttpResponse(
        esa_reads.esa_jsonl_lines(study=study), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{slugify(study.name) or "study"}-esa-spans.jsonl"'
    return response


@researcher_study_required
@require_POST
def esa_proposals_upload(request, study):
    """The design page's upload of proposed spans (all or nothing; size checked before reading)."""
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a file of proposed spans to import.")
        return redirect("judging:design", study_id=study.pk)
    try:
        s = esa_proposals_import_upload(study=study, upload=upload)
    except StudyImportError as exc:
        messages.error(request, "Nothing was imported:\n" + exc.describe(limit=20))
        return redirect("judging:design", study_id=study.pk)
    messages.success(
        request,
        f"Imported {s.spans:,} proposed spans for {s.candidates:,} candidates from "
        f"{upload.name}" + (f", replacing the proposals of {s.replaced:,}" if s.replaced else "") + ".",
    )
    return redirect("judging:design", study_id=study.pk)
