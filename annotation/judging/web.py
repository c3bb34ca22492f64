"""The judging web layer's shared helpers: what the judging pages and APIs of every
protocol (``views``, ``apis``, ``screening_views``, ``screening_apis``, ``protocols.*.views``
and ``protocols.*.apis``) share, below all of them.

* :func:`judged_study_or_404`, :func:`assignment_or_page`, :func:`gate_page`: the
  judge's study, their assignment, and what must come before their next item;
* :class:`JudgePages`: the one judge-page flow (the resume point, an earlier item, the
  form's POST) of every protocol with a page of its own; the protocol's views supply how an
  item is found, drawn and submitted;
* :func:`criteria_for_judge`, :func:`study_criteria_for_judge`: the design's criteria as
  the judge's page renders them;
* :func:`thousands`, :func:`export_filename`: numbers and file names shown;
* :func:`open_job_payload`: an opening job's progress (the design page's poll and the API);
* :data:`TAG_JUDGE`, :data:`TAG_RESEARCHER`, :func:`judging_error`: the API's schema tags and
  its answer to a judging error.

Views and APIs import these from here, never from one another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST
from rest_framework.response import Response

from annotation.enums import Role, StudyStatus
from annotation.judging.selectors.design import study_criteria
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.models import Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE, user_role_conflict
from annotation.web import AuthenticatedHttpRequest, end_code_context, participant_page, study_language_activate
from config.jobs.enums import JobStatus

from . import scales, screening
from .enums import JudgmentSource
from .errors import ItemNotFound, JudgingError
from .models import Assignment, OpenJob
from .protocols.registry import protocol_for_study
from .selectors.judge import progress_among_checks
from .tokens import idempotency_key_new

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


def judge_assignment(
    request: AuthenticatedHttpRequest, study_id: int, *, screened_out_page: bool = True
) -> tuple[Study, Assignment | HttpResponse]:
    """The judge's study (404 for anyone else) and their assignment when they may judge now;
    else the page to show instead: the not-open page, or (``screened_out_page``) the way to the
    screened-out page."""
    study = judged_study_or_404(request, study_id)
    assignment = assignment_or_page(request, study)
    if screened_out_page and isinstance(assignment, Assignment) and assignment.screened_out_at is not None:
        return study, redirect("judging:screened_out", study_id=study.pk)
    return study, assignment


def gate_page(request: HttpRequest, study: Study, assignment: Assignment, *, done: int) -> HttpResponse | None:
    """A redirect to what must come before the next real item (None: nothing)."""
    gate = screening.judge_gate(assignment=assignment, done=done)
    if gate is None:
        return None
    return gate_redirect(study, gate[0])


def gate_redirect(study: Study, kind: str) -> HttpResponse:
    """The page of a gate (``judge_gate``'s kind: screened out, training, attention check)."""
    target = {"screened_out": "judging:screened_out", "training": "judging:training", "attention": "judging:attention"}[
        kind
    ]
    return redirect(target, study_id=study.pk)


# --- the judge's page of a protocol -------------------------------------------------------------


class JudgePages:
    """The judge-page flow every protocol with a page of its own shares (issue 39, item 3).

    The resume point (:meth:`current`): the not-open page, the study's own protocol's page
    when it is another's (the rating door sends every judge on), screened out, the
    instructions, the gate (training first, or an attention check: drawn on this page like
    any item, blinded among them, where the protocol's ``attention_page`` is its judge page;
    else that page), the next item, and the done page with the completion code (rendered
    there, or ``done_page``, where the protocol has an end page of its own). An earlier item
    (:meth:`revise`). The form's POST (:meth:`submit`): the protocol's one submission path
    (its unit's ``answer_submit``, items and checks alike), a refusal drawn again with what the
    judge sent, the "warn" policy's note after a failed check, and back to the resume point.
    :meth:`views` gives the three views a protocol's ``urls.py`` mounts.

    What differs is the protocol's: its unit finds the items (``entry_next``,
    ``entry_previous``, ``entry_for_token``, ``entry_attention``, as the next-item API does),
    answers ``is_protocol_of``, ``items_done`` and ``judge_page``, and takes an answer
    (``answer_submit``). Its views module declares the page's template and what it shows of an
    entry beyond the shared counts, key and error (``entry_context(study, entry,
    field_errors=, posted=)``), its answer as the form sent it (``answer_posted(request,
    study, token)``: the keyword arguments of ``answer_submit``), and what the judge sent,
    drawn again with a refusal (``posted(request, study, entry)``).
    """

    def __init__(
        self,
        *,
        unit: Any,
        page_template: str,
        entry_context: Callable[..., dict[str, Any]],
        answer_posted: Callable[[HttpRequest, Study, str], dict[str, Any]],
        posted: Callable[[HttpRequest, Study, Any], Any],
        done_template: str = "",
        done_page: str = "",
        check_warning: Callable[[], str] | None = None,
    ) -> None:
        self.unit = unit
        self.page_template = page_template
        self.done_template = done_template
        self.done_page = done_page
        self.check_warning = check_warning
        self.entry_context = entry_context
        self.answer_posted = answer_posted
        self.posted = posted

    def _study(self, request: AuthenticatedHttpRequest, study_id: int) -> Study | HttpResponse:
        """The judge's study, or the way to its own protocol's page when it is another's."""
        study = judged_study_or_404(request, study_id)
        return study if self.unit.is_protocol_of(study) else self._elsewhere(study)

    @staticmethod
    def _elsewhere(study: Study) -> HttpResponse:
        return redirect(protocol_for_study(study=study).judge_page, study_id=study.pk)

    def _entry(self, study: Study, judge: Any, token: str) -> Any:
        try:
            return self.unit.entry_for_token(study=study, judge=judge, token=token)
        except ItemNotFound as exc:
            raise Http404(exc.message) from None

    def render_entry(
        self, request: HttpRequest, study: Study, entry: Any, *, error=None, field_errors=None, posted=None, status=200
    ) -> HttpResponse:
        """One entry on the protocol's page: the shared counts, key and error, and its own context."""
        context = {
            "study": study,
            "entry": entry,  # the shared page's name (judging/_entry_page.html)
            "key": idempotency_key_new(),
            "position_text": thousands(entry.position),
            "total_text": thousands(entry.total),
            "done_text": thousands(entry.done),
            "error": error,
            "back_keys": self.unit.back_keys,
            **self.entry_context(study, entry, field_errors=field_errors or {}, posted=posted),
        }
        return render(request, self.page_template, context, status=status)

    def current(self, request: AuthenticatedHttpRequest, study_id: int) -> HttpResponse:
        """The judge's current item: the first one not yet answered (the resume point)."""
        study, assignment = judge_assignment(request, study_id)
        if isinstance(assignment, HttpResponse):  # not open, or screened out: that page
            return assignment
        if not self.unit.is_protocol_of(study):  # another protocol's study: its own page
            return self._elsewhere(study)
        if assignment.instructions_seen_at is None:
            return redirect("judging:instructions", study_id=study.pk)
        done = self.unit.items_done(assignment=assignment)
        gate = screening.judge_gate(assignment=assignment, done=done)
        if gate is not None and gate[0] == "attention" and self.unit.checks_among_items:
            assert gate[1] is not None  # judge_gate pairs "attention" with its check
            # Drawn like any item, blinded among them.
            return self.render_entry(request, study, self.unit.entry_attention(check=gate[1]))
        if gate is not None:  # screened out, the training first, or a check on its own page
            return gate_redirect(study, gate[0])
        entry = self.unit.entry_next(assignment=assignment)
        if entry is None and self.done_page:
            return redirect(self.done_page, study_id=study.pk)
        if entry is None:
            return render(
                request,
                self.done_template,
                {
                    "study": study,
                    # The checks among the items count, as every item's "n of N" did.
                    "total_text": thousands(progress_among_checks(assignment=assignment, done=0)[1]),
                    "last": self.unit.entry_previous(study=study, judge=request.user),
                    "end": end_code_context(user=request.user, study=study),
                },
            )
        return self.render_entry(request, study, entry)

    def revise(self, request: AuthenticatedHttpRequest, study_id: int, token: str) -> HttpResponse:
        """One earlier item of the judge's own assignment (or check), to change the answer."""
        study = self._study(request, study_id)
        if isinstance(study, HttpResponse):
            return study
        assignment = assignment_or_page(request, study)
        if isinstance(assignment, HttpResponse):  # not open to this judge now: that page
            return assignment
        return self.render_entry(request, study, self._entry(study, request.user, token))

    def submit(self, request: AuthenticatedHttpRequest, study_id: int) -> HttpResponse:
        """The form's POST: the same service as the API, then back to the resume point."""
        study = self._study(request, study_id)
        if isinstance(study, HttpResponse):
            return study
        token = request.POST.get("token", "")
        try:  # an item or an attention check: one path, one answer (the unit's answer_submit)
            result = self.unit.answer_submit(
                study=study,
                judge=request.user,
                token=token,
                key=request.POST.get("key", ""),
                serve_stamp=request.POST.get("serve", ""),
                active_seconds=request.POST.get("active_seconds") or None,
                source=JudgmentSource.PAGE,
                **self.answer_posted(request, study, token),
            )
        except ItemNotFound as exc:
            raise Http404(exc.message) from None
        except JudgingError as exc:
            if study.status != StudyStatus.OPEN:
                return render(request, "judging/not_open.html", {"study": study}, status=exc.status_code)
            entry = self._entry(study, request.user, token)
            return self.render_entry(
                request,
                study,
                entry,
                error=exc.message,
                field_errors=exc.field_errors,
                posted=self.posted(request, study, entry),
                status=400,
            )
        if result.check_failed and not result.screened_out and self.check_warning is not None:
            # The "warn" policy tells the judge, once, after the fact (issue 25); with "end" the
            # screened-out page says it.
            messages.warning(request, self.check_warning())
        return redirect(self.unit.judge_page, study_id=study.pk)

    def views(
        self, *names: str
    ) -> tuple[Callable[..., HttpResponse], Callable[..., HttpResponse], Callable[..., HttpResponse]]:
        """The three views of the protocol's page (the resume point, an earlier item, the POST),
        named ``names`` (as they show in tracebacks and in Django's resolver)."""

        @participant_page
        @login_required
        @require_GET
        def page(request, study_id: int):
            """The judge's current item: the first one not yet answered (the resume point)."""
            return self.current(request, study_id)

        @participant_page
        @login_required
        @require_GET
        def revise(request, study_id: int, token: str):
            """One earlier item of the judge's own assignment, to change the answer."""
            return self.revise(request, study_id, token)

        @participant_page
        @login_required
        @require_POST
        def submit(request, study_id: int):
            """The item form's POST: the same service as the API, then back to the resume point."""
            return self.submit(request, study_id)

        for view, name in zip((page, revise, submit), names, strict=True):
            view.__name__ = view.__qualname__ = name
        return page, revise, submit


def judge_page_paths(
    segment: str,
    name: str,
    views: tuple[Callable[..., HttpResponse], Callable[..., HttpResponse], Callable[..., HttpResponse]],
) -> list[URLPattern]:
    """The routes of a protocol's judge page, for the three views of :meth:`JudgePages.views`
    (the resume point, an earlier item, the POST): ``judge/studies/<id>/<segment>/`` named
    ``name``, its ``submit/`` named ``<name>_submit`` (before the token, which it would match)
    and ``<token>/`` named ``<name>_revise``."""
    page, revise, submit = views
    root = f"judge/studies/<int:study_id>/{segment}/"
    return [
        path(root, page, name=name),
        path(root + "submit/", submit, name=f"{name}_submit"),
        path(root + "<str:token>/", revise, name=f"{name}_revise"),
    ]


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
