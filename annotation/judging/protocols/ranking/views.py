"""Ranking pages: the judge's ranking page and the researcher's exports.

Judge pages render only :class:`~.services.JudgeRanking` values: texts named by their
place on the screen (1..k), never a system, a control flag or a database id; the screen
order was drawn per judge and set and is stored server-side.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
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
from . import screening as rank_screening
from . import selectors as ranking_reads
from . import services as ranking
from .unit import RANKING


def _render_ranking(request, study, entry, *, error=None, field_errors=None, posted=None, status=200):
    ranks = dict(entry.ranks)
    scores = dict(entry.scores)
    if posted is not None:  # a refused submission: show what the judge sent
        ranks = {p: posted.get(f"rank_{p}", "") for p in entry.places}
        scores = {p: posted.get(f"score_{p}", "") for p in entry.places}
    errors = field_errors or {}
    candidates = [
        {
            "place": p,
            "text": text,
            "rank": ranks.get(p, ""),
            "score": scores.get(p, ""),
            "rank_errors": errors.get(f"rank_{p}", []),
            "score_errors": errors.get(f"score_{p}", []),
        }
        for p, text in zip(entry.places, entry.candidates)
    ]
    # The list starts in the judge's last order when revising, else in the screen order.
    candidates.sort(key=lambda c: (c["rank"] if isinstance(c["rank"], int) else len(candidates) + 1, c["place"]))
    return render(
        request,
        "judging/rank.html",
        {
            "study": study,
            "entry": entry,
            "candidates": candidates,
            "key": idempotency_key_new(),
            "position_text": thousands(entry.position),
            "total_text": thousands(entry.total),
            "done_text": thousands(entry.done),
            "k": len(entry.candidates),
            "error": error,
            "back_keys": RANKING.back_keys,
        },
        status=status,
    )


def _ranking_study(request, study_id: int):
    """The judge's study, or None when it is not a ranking study."""
    study = judged_study_or_404(request, study_id)
    return study if RANKING.is_protocol_of(study) else None


@participant_page
@login_required
@require_GET
def rank(request, study_id: int):
    """The judge's current set: the first one not yet ranked (the resume point)."""
    study = _ranking_study(request, study_id)
    if study is None:  # another protocol: its own page
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    if assignment.screened_out_at is not None:
        return redirect("judging:screened_out", study_id=study.pk)
    if assignment.instructions_seen_at is None:
        return redirect("judging:instructions", study_id=study.pk)
    done = ranking.rankings_done(assignment=assignment)
    gate = screening.judge_gate(assignment=assignment, done=done)
    if gate is not None and gate[0] == "attention":  # drawn like any set (blinded among them)
        assert gate[1] is not None  # judge_gate pairs "attention" with its check
        return _render_ranking(request, study, rank_screening.attention_entry(check=gate[1]))
    if gate is not None:  # screened out, or the training first
        return gate_page(request, study, assignment, done=done)
    entry = ranking.ranking_next_for_judge(assignment=assignment)
    if entry is None:
        last = ranking.ranking_previous_for_judge(study=study, judge=request.user)
        return render(
            request,
            "judging/rank_done.html",
            {
                "study": study,
                # The checks among the items count, as every item's "n of N" did.
                "total_text": thousands(progress_among_checks(assignment=assignment, done=0)[1]),
                "last": last,
                "end": end_code_context(user=request.user, study=study),
            },
        )
    return _render_ranking(request, study, entry)


@participant_page
@login_required
@require_GET
def rank_revise(request, study_id: int, token: str):
    """One earlier set of the judge's own assignment, to change the order."""
    study = _ranking_study(request, study_id)
    if study is None:
        return redirect("judging:rate", study_id=study_id)
    assignment = assignment_or_page(request, study)
    if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
        return assignment
    try:
        entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    return _render_ranking(request, study, entry)


@participant_page
@login_required
@require_POST
def rank_submit(request, study_id: int):
    """The ranking form's POST (a rank 1..k per screen place, equal ranks tied, and the
    scores): the same service as the API, then back to the resume point."""
    study = _ranking_study(request, study_id)
    if study is None:
        return redirect("judging:rate", study_id=study_id)
    token = request.POST.get("token", "")
    posted = {name: request.POST.get(name, "") for name in request.POST if name.startswith(("rank_", "score_"))}
    try:  # a set or an attention set alike (rank_screening.entry_for_judge)
        entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=token)
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    k = len(entry.candidates)
    design = JudgingDesign.objects.get(study=study)
    try:  # one path, one answer (rank_screening.answer_submit)
        order = ranking.order_from_ranks({str(p): posted.get(f"rank_{p}") for p in entry.places}, k=k)
        scores = {str(p): posted.get(f"score_{p}") for p in entry.places} if design.ranking_scores else None
        result = rank_screening.answer_submit(
            study=study,
            judge=request.user,
            token=token,
            key=request.POST.get("key", ""),
            order=order,
            scores=scores,
            serve_stamp=request.POST.get("serve", ""),
            active_seconds=request.POST.get("active_seconds") or None,
            source=JudgmentSource.PAGE,
        )
    except ItemNotFound as exc:
        raise Http404(exc.message) from None
    except JudgingError as exc:
        if study.status != StudyStatus.OPEN:
            return render(request, "judging/not_open.html", {"study": study}, status=exc.status_code)
        return _render_ranking(
            request, study, entry, error=exc.message, field_errors=exc.field_errors, posted=posted, status=400
        )
    if result.check_failed and not result.screened_out:
        # The "warn" policy tells the judge, once, after the fact (issue 25).
        messages.warning(
            request,
            _(
                "That order was not the one an attentive reader gives: that set was a check, "
                "one paraphrase a copy of the original and one an unrelated sentence. "
                "Please read each set carefully."
            ),
        )
    return redirect("judging:rank", study_id=study.pk)


@researcher_study_required
@require_GET
def export_rankings(request, study):
    """One row per ranked candidate of every latest ranking, with its system (researchers only)."""
    return csv_response(ranking_reads.ranking_export_rows(study=study), export_filename(study, "rankings"))


@researcher_study_required
@require_GET
def export_rankings_jsonl(request, study):
    """Every latest ranking in the ranking file format (``manage.py import_rankings`` reads it back)."""
    lines = (json.dumps(line, ensure_ascii=False) + "\n" for line in ranking_reads.ranking_export_lines(study=study))
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slugify(study.name) or "study"}-rankings.jsonl"'
    return response
