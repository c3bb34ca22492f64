"""Ranking pages: the judge's ranking page and the researcher's exports.

Judge pages render only :class:`~.services.JudgeRanking` values: texts named by their
place on the screen (1..k), never a system, a control flag or a database id; the screen
order was drawn per judge and set and is stored server-side.
"""

from __future__ import annotations

import json

from django.http import StreamingHttpResponse
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotation.web import csv_response, researcher_study_required

from ...models import JudgingDesign
from ...web import JudgePages, export_filename
from . import screening as rank_screening
from . import selectors as ranking_reads
from . import services as ranking
from .unit import RANKING


def _entry_context(study, entry, *, field_errors, posted) -> dict:
    ranks = dict(entry.ranks)
    scores = dict(entry.scores)
    if posted is not None:  # a refused submission: show what the judge sent
        ranks = {p: posted.get(f"rank_{p}", "") for p in entry.places}
        scores = {p: posted.get(f"score_{p}", "") for p in entry.places}
    candidates = [
        {
            "place": p,
            "text": text,
            "rank": ranks.get(p, ""),
            "score": scores.get(p, ""),
            "rank_errors": field_errors.get(f"rank_{p}", []),
            "score_errors": field_errors.get(f"score_{p}", []),
        }
        for p, text in zip(entry.places, entry.candidates)
    ]
    # The list starts in the judge's last order when revising, else in the screen order.
    candidates.sort(key=lambda c: (c["rank"] if isinstance(c["rank"], int) else len(candidates) + 1, c["place"]))
    return {"entry": entry, "candidates": candidates, "k": len(entry.candidates)}


def _posted(request, study, _entry) -> dict:
    """The ranks (1..k per screen place, equal ranks tied) and scores the judge sent."""
    return {name: request.POST.get(name, "") for name in request.POST if name.startswith(("rank_", "score_"))}


def _answer_posted(request, study, token: str) -> dict:
    """The form's ranks as an order of screen places (best first, ties as lists), and the scores."""
    entry = rank_screening.entry_for_judge(study=study, judge=request.user, token=token)  # a set or a check
    posted = _posted(request, study, entry)
    design = JudgingDesign.objects.get(study=study)
    order = ranking.order_from_ranks({str(p): posted.get(f"rank_{p}") for p in entry.places}, k=len(entry.candidates))
    scores = {str(p): posted.get(f"score_{p}") for p in entry.places} if design.ranking_scores else None
    return {"order": order, "scores": scores}


#: The judge-page flow (annotation.judging.web.JudgePages) on ranking sets: the form's POST sends
#: a rank 1..k per screen place (equal ranks tied) and the scores.
PAGES = JudgePages(
    unit=RANKING,
    page_template="judging/ranking/page.html",
    done_template="judging/ranking/done.html",
    check_warning=lambda: _(
        "That order was not the one an attentive reader gives: that set was a check, "
        "one paraphrase a copy of the original and one an unrelated sentence. "
        "Please read each set carefully."
    ),
    entry_context=_entry_context,
    answer_posted=_answer_posted,
    posted=_posted,
)
rank, rank_revise, rank_submit = PAGES.views("rank", "rank_revise", "rank_submit")


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
