"""ESA pages: the judge's item page (mark spans, score, submit) and the researcher's exports.

Judge pages render only :class:`~.services.JudgeEsaItem` values, the design's categories and
the page's own words: no system, control flag or database id reaches the judge's browser.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.utils.translation import get_language_bidi
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.enums import StudyStatus
from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.web import csv_response, end_code_context, participant_page, researcher_study_required

from ... import screening
from ...enums import JudgmentSource
from ...errors import ItemNotFound, JudgingError
from ...models import JudgingDesign
from ...selectors.judge import progress_among_checks
from ...tokens import idempotency_key_new
from ...web import assignment_or_page, export_filename, gate_page, judged_study_or_404, thousands
from . import screening as esa_screening
from . import selectors as esa_reads
from . import services as esa
from .imports import esa_proposals_import
from .unit import ESA
from .words import page_words


def _render_item(request, study, entry, *, error=None, posted=None, status=200):
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
    return render(
        request,
        "judging/esa.html",
        {
            "study": study,
            "item": entry,
            "esa_data": data,
            "key": idempotency_key_new(),
            "position_text": thousands(entry.position),
            "total_text": thousands(entry.total),
            "done_text": thousands(entry.done),
            "error": error,
            "back_keys": ESA.back_keys,
            "text_dir": "rtl" if get_language_bidi() else "ltr",
            "score_value": "" if score is None else f"{score:g}",
        },
        status=status,
    )


def _esa_study(request, study_id: int):
    """The judge's study, or None when it is not an ESA study."""
    study = judged_study_or_404(request, study_id)
    return study if ESA.is_protocol_of(study) else None


@participant_page
@login_required
@require_GET
def esa_page(request, study_id: int):
    """The judge's current item: the first one not yet annotated (the resume point)."""
    study = _esa_study(request, study_id)
    if study is None:
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    if assignment.instructions_seen_at is None:
        return redirect("judging:instructions", study_id=study.pk)
    done = esa.items_done(assignment=assignment)
    gate = screening.judge_gate(assignment=assignment, done=done)
    if gate is not None and gate[0] == "attention":  # drawn like any item (blinded among them)
        assert gate[1] is not None  # judge_gate pairs "attention" with its check
        return _render_item(request, study, esa_screening.attention_item(check=gate[1]))
    if gate is not None:  # screened out, or the training first
        return gate_page(request, study, assignment, done=done)
    entry = esa.esa_item_next_for_judge(assignment=assignment)
    if entry is None:
        last = esa.esa_item_previous_for_judge(study=study, judge=request.user)
        return render(
            request,
            "judging/esa_done.html",
            {
                "study": study,
                # The checks among the items count, as every item's "n of N" did.
                "total_text": thousands(progress_among_checks(assignment=assignment, done=0)[1]),
                "last": last,
                "end": end_code_context(user=request.user, study=study),
            },
        )
    return _render_item(request, study, entry)


@participant_page
@login_required
@require_GET
def esa_revise(request, study_id: int, token: str):
    """One earlier item of the judge's own assignment, to change the spans or the score."""
    study = _esa_study(request, study_id)
    if study is None:
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    try:
        entry = esa_screening.item_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_item(request, study, entry)


@participant_page
@login_required
@require_POST
def esa_submit_view(request, study_id: int):
    """The item form's POST: the same service as the API, then back to the resume point."""
    study = _esa_study(request, study_id)
    if study is None:
        return redirect("judging:rate", study_id=study_id)
    token = request.POST.get("token", "")
    try:
        spans = json.loads(request.POST.get("spans") or "[]")
    except ValueError:
        spans = None
    score = request.POST.get("score") or None
    try:  # an item or an attention check: one path, one answer (esa_screening.answer_submit)
        result = esa_screening.answer_submit(
            study=study,
            judge=request.user,
            token=token,
            key=request.POST.get("key", ""),
            spans=spans,
            score=score,
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
            entry = esa_screening.item_for_judge(study=study, judge=request.user, token=token)
        except ItemNotFound as missing:
            raise Http404(missing.message) from None
        posted = (spans if isinstance(spans, list) else entry.spans, None if score is None else _float_or_none(score))
        return _render_item(request, study, entry, error=exc.message, posted=posted, status=400)
    if result.check_failed and not result.screened_out:
        # The "warn" policy tells the judge, once, after the fact (issue 25); with "end" the
        # screened-out page says it.
        messages.warning(
            request,
            _(
                "That answer was not the one an attentive reader gives: that item was a check, "
                "a copy of the original or an unrelated sentence. Please read each item carefully."
            ),
        )
    return redirect("judging:esa", study_id=study.pk)


def _float_or_none(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


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
        if upload.size > settings.PARAEVAL_IMPORT_MAX_BYTES:
            raise StudyImportError(
                upload.name,
                [
                    ImportIssue(
                        f"the file is {upload.size:,} bytes; the limit is {settings.PARAEVAL_IMPORT_MAX_BYTES:,}"
                    )
                ],
            )
        s = esa_proposals_import(study=study, data=upload.read(), filename=upload.name)
    except StudyImportError as exc:
        messages.error(request, "Nothing was imported:\n" + exc.describe(limit=20))
        return redirect("judging:design", study_id=study.pk)
    messages.success(
        request,
        f"Imported {s.spans:,} proposed spans for {s.candidates:,} candidates from "
        f"{upload.name}" + (f", replacing the proposals of {s.replaced:,}" if s.replaced else "") + ".",
    )
    return redirect("judging:design", study_id=study.pk)
