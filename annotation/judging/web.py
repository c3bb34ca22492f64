"""The judging web layer's shared helpers: what the judging pages and APIs of every
protocol (``views``, ``apis``, ``screening_views``, ``screening_apis``, ``protocols.*.views``
and ``protocols.*.apis``) share, below all of them.

* :func:`judged_study_or_404`, :func:`assignment_or_page`, :func:`gate_page`: the
  judge's study, their assignment, and what must come before their next item;
* :func:`criteria_for_judge`, :func:`study_criteria_for_judge`: the design's criteria as
  the judge's page renders them;
* :func:`thousands`, :func:`export_filename`: numbers and file names shown;
* :func:`open_job_payload`: an opening job's progress (the design page's poll and the API);
* :data:`TAG_JUDGE`, :data:`TAG_RESEARCHER`, :func:`judging_error`: the API's schema tags and
  its answer to a judging error.

Views and APIs import these from here, never from one another.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from rest_framework.response import Response

from annotation.enums import Role, StudyStatus
from annotation.judging.selectors.design import study_criteria
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.models import Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict
from annotation.web import AuthenticatedHttpRequest, study_language_activate
from config.jobs.enums import JobStatus

from . import scales, screening
from .errors import JudgingError
from .models import Assignment, OpenJob

#: The API schema's tags of the judge's and the researcher's endpoints.
TAG_JUDGE = ["judging (judge)"]
TAG_RESEARCHER = ["judging (researcher)"]


def judging_error(exc: JudgingError) -> Response:
    """The API's answer to a judging error: its message, its per-field errors, its status."""
    body: dict[str, Any] = {"detail": exc.message}
    if exc.field_errors:
        body["errors"] = exc.field_errors
    return Response(body, status=exc.status_code)


def thousands(value: int) -> str:
    """``value`` with thousands separators (``12,345``)."""
    return f"{value:,}"


def export_filename(study: Study, kind: str) -> str:
    """The file name of one of the study's judgment exports."""
    return f"{slugify(study.name) or 'study'}-judgments-{kind}.csv"


def open_job_payload(job: OpenJob) -> dict[str, Any]:
    """An opening job's state and progress, as the design page polls it and the API returns it."""
    return {
        "id": job.pk,
        "status": job.status,
        "phase": job.phase,
        "percent": job.percent,
        "done": job.progress_done,
        "total": job.progress_total,
        "error": job.error,
        "summary": job.summary if job.status == JobStatus.SUCCEEDED else None,
    }


# --- the judge's study and assignment ---------------------------------------------------------


def judged_study_or_404(request: AuthenticatedHttpRequest, study_id: int) -> Study:
    """The study, if the user judges it; 404 for everyone else (no hint that it exists)."""
    study = Study.objects.filter(pk=study_id, memberships__user=request.user, memberships__role=Role.JUDGE).first()
    if study is None:
        raise Http404("You are not a judge of this study.")
    if user_role_conflict(study=study, user=request.user):
        raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
    study_language_activate(study)  # the rest of the (participant_page) view speaks the study's language
    return study


def assignment_or_page(request: AuthenticatedHttpRequest, study: Study) -> Assignment | HttpResponse:
    """The judge's assignment when they may rate now, else the page that says the study is not open."""
    if study.status != StudyStatus.OPEN:
        return render(request, "judging/not_open.html", {"study": study})
    assignment = assignment_ensure_for_judge(study=study, judge=request.user)
    if assignment is None:
        return render(request, "judging/not_open.html", {"study": study})
    return assignment


def gate_page(request: HttpRequest, study: Study, assignment: Assignment, *, done: int) -> HttpResponse | None:
    """A redirect to what must come before the next real item (None: nothing)."""
    gate = screening.judge_gate(assignment=assignment, done=done)
    if gate is None:
        return None
    target = {"screened_out": "judging:screened_out", "training": "judging:training", "attention": "judging:attention"}[
        gate[0]
    ]
    return redirect(target, study_id=study.pk)


# --- the design's criteria on the judge's page -------------------------------------------------


def _point_keys(values: list[int]) -> list[str | None]:
    """Keyboard keys of a discrete scale's points: the digit of the value itself when every
    value is 0–9 (so 0–2 is typed 0, 1, 2 and 1–5 is typed 1–5), else 1…k for k ≤ 9, else none."""
    if all(0 <= v <= 9 for v in values):
        return [str(v) for v in values]
    if len(values) <= 9:
        return [str(i) for i in range(1, len(values) + 1)]
    return [None] * len(values)


def criteria_for_judge(criteria: list[dict]) -> list[dict[str, Any]]:
    """The design's criteria as the judge's page renders them: texts, scale type, points
    (value, label, key) or slider anchors. Nothing else of the design."""
    out = []
    for c in criteria:
        scale = c["scale"]
        unit = scales.scale_unit(scale)
        row = {
            "slug": c["slug"],
            "name": c["name"],
            "help": c.get("help", ""),
            "type": scale["type"],
            "continuous": unit.continuous,
        }
        if unit.continuous:
            anchors = scale.get("anchors", {})
            row |= {
                "min": scales.SLIDER_MIN,
                "max": scales.SLIDER_MAX,
                "low": anchors.get("low", ""),
                "mid": anchors.get("mid", ""),
                "high": anchors.get("high", ""),
                "points": [],
            }
        else:
            values, labels = scales.scale_values(scale), scales.scale_labels(scale)
            assert values is not None and labels is not None  # a points or categorical scale has both
            keys = (
                _point_keys(values)
                if scale["type"] == "points"
                else [str(i + 1) if len(values) <= 9 else None for i in range(len(values))]
            )
            row["points"] = [{"value": v, "label": lbl, "key": k} for v, lbl, k in zip(values, labels, keys)]
        out.append(row)
    return out


def study_criteria_for_judge(study: Study) -> list[dict[str, Any]]:
    """The study's design criteria, as :func:`criteria_for_judge` renders them."""
    return criteria_for_judge(study_criteria(study=study))
