"""Ranking pages: the judge's ranking page and the researcher's exports.

Judge pages render only :class:`~.services.JudgeRanking` values: texts named by their
place on the screen (1..k), never a system, a control flag or a database id; the screen
order was drawn per judge and set and is stored server-side.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import StreamingHttpResponse
from django.shortcuts import render
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotation.web import csv_response, participant_page, researcher_study_required

from ...enums import JudgmentSource
from ...models import JudgingDesign
from ...tokens import idempotency_key_new
from ...web import JudgePages, export_filename, thousands
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
        "judging/ranking/page.html",
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


def _posted(request, study, _entry) -> dict:
    """The ranks (1..k per screen place, equal ranks tied) and scores the judge sent."""
    return {name: request.POST.get(name, "") for name in request.POST if name.startswith(("rank_", "score_"))}


def _submit_post(request, study, token: str):
    entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=token)  # a set or a check
    posted = _posted(request, study, entry)
    design = JudgingDesign.objects.get(study=study)
    order = ranking.order_from_ranks({str(p): posted.get(f"rank_{p}") for p in entry.places}, k=len(entry.candidates))
    return rank_screening.answer_submit(
        study=study,
        judge=request.user,
        token=token,
        key=request.POST.get("key", ""),
        order=order,
        scores={str(p): posted.get(f"score_{p}") for p in entry.places} if design.ranking_scores else None,
        serve_stamp=request.POST.get("serve", ""),
        active_seconds=request.POST.get("active_seconds") or None,
        source=JudgmentSource.PAGE,
    )


#: The judge-page flow (annotation.judging.web.JudgePages) on ranking sets.
PAGES = JudgePages(
    unit=RANKING,
    done_template="judging/ranking/done.html",
    check_warning=lambda: _(
        "That order was not the one an attentive reader gives: that set was a check, "
        "one paraphrase a copy of the original and one an unrelated sentence. "
        "Please read each set carefully."
    ),
    render_entry=_render_ranking,
    submit_post=_submit_post,
    posted=_posted,
)


@participant_page
@login_required
@require_GET
def rank(request, study_id: int):
    """The judge's current set: the first one not yet ranked (the resume point)."""
    return PAGES.current(request, study_id)


@participant_page
@login_required
@require_GET
def rank_revise(request, study_id: int, token: str):
    """One earlier set of the judge's own assignment, to change the order."""
    return PAGES.revise(request, study_id, token)


@participant_page
@login_required
@require_POST
def rank_submit(request, study_id: int):
    """The ranking form's POST (a rank 1..k per screen place, equal ranks tied, and the
    scores): the same service as the API, then back to the resume point."""
    return PAGES.submit(request, study_id)


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
