"""The web layer's shared helpers: what the pages and APIs of every app (annotation,
judging, alignment, participation, metrics) use, below all of their views and APIs.

* :func:`participant_page`, :func:`study_language_activate`, :func:`member_language_activate`:
  a judge's or annotator's page renders in its study's language;
* :func:`researcher_study_required`, :func:`study_context`: a researcher's page of a study;
* :func:`get_managed_study`: the same check for the researcher's API endpoints;
* :func:`csv_response`: a streamed CSV download;
* :func:`end_code_context`: a join-link participant's end of the work (their code).

Views and APIs import these from here, never from one another, so no views module
needs another (and no circle runs through the web layer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from rest_framework.exceptions import PermissionDenied as ApiPermissionDenied

from . import selectors
from .enums import ParticipantStatus
from .judging.exports import csv_lines
from .models import Study
from .participation import selectors as participation_selectors
from .participation import services as participation_services


class AuthenticatedHttpRequest(HttpRequest):
    """The request of a page or endpoint behind a login: its user is a :class:`User`, never
    ``AnonymousUser`` (for the type checker; Django's own class at run time)."""

    user: User


# --- the participant's pages: the study's language ------------------------------------------


def participant_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Decorator of a judge's or annotator's page: it renders in its study's language.

    The view (or :func:`study_language_activate`, once it knows the study) activates a
    language inside this scope; the scope ends with the view, so the researcher pages,
    served later by the same thread, stay in ``LANGUAGE_CODE``. The view must render
    eagerly (``render``), not return a lazy ``TemplateResponse``.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        token = _participant_scope.set(True)
        try:
            with translation.override(settings.LANGUAGE_CODE):
                return view(request, *args, **kwargs)
        finally:
            _participant_scope.reset(token)

    return wrapper


#: True inside a participant_page view: only there may a view switch the thread's language.
_participant_scope: ContextVar[bool] = ContextVar("participant_scope", default=False)


def study_language_activate(study: Study) -> None:
    """Switch the current :func:`participant_page` scope to ``study``'s page language.

    Outside such a scope it does nothing: an activated language would outlive the request
    on this thread and turn the next (researcher's) page into the study's language."""
    if _participant_scope.get():
        translation.activate(study.language)


def member_language_activate(request: AuthenticatedHttpRequest, role: str) -> None:
    """For pages that list several studies: their common language (see selectors.language_for_member)."""
    if _participant_scope.get():
        translation.activate(
            selectors.language_for_member(user=request.user, role=role, default=settings.LANGUAGE_CODE)
        )


# --- the researcher's pages of a study ------------------------------------------------------

#: Sections other apps add to a study page: (url name, label). Missing ones are skipped.
STUDY_TABS = (
    ("annotation:study_detail", "Data"),
    ("annotation:study_generate", "Add a system"),
    ("judging:design", "Judging design"),
    ("judging:progress", "Judging progress"),
    ("dashboard:dashboard", "Dashboard"),
    ("judging:qc", "Judge QC"),
    ("alignment:study", "Alignment"),
    ("participation:study", "Field study"),
    ("participation:participants", "Participants"),
    ("metrics:runs", "Metrics"),
    ("reports:detail", "Report"),
)


def _tabs(study: Study) -> list[dict]:
    tabs = []
    for name, label in STUDY_TABS:
        try:
            tabs.append({"url": reverse(name, kwargs={"study_id": study.pk}), "label": label, "name": name})
        except NoReverseMatch:
            continue
    return tabs


def study_context(study: Study, **extra: Any) -> dict:
    """Context every researcher page of a study needs (header and tabs)."""
    return {"study": study, "study_tabs": _tabs(study), **extra}


def researcher_study_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Load ``study_id`` and allow only the study's researchers (403 for anyone else)."""

    @login_required
    @wraps(view)
    def wrapper(request: AuthenticatedHttpRequest, study_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        study = get_object_or_404(Study, pk=study_id)
        if not selectors.user_can_manage_study(study=study, user=request.user):
            raise PermissionDenied("Only this study's researchers may open this page.")
        return view(request, study, *args, **kwargs)

    return wrapper


def get_managed_study(request: AuthenticatedHttpRequest, study_id: int) -> Study:
    """The study, if the requesting user is one of its researchers (API endpoints); 404/403 otherwise."""
    study = get_object_or_404(Study, pk=study_id)
    if not selectors.user_can_manage_study(study=study, user=request.user):
        raise ApiPermissionDenied("Only this study's researchers may do this.")
    return study


def csv_response(rows: Iterable[list], filename: str) -> StreamingHttpResponse:
    """``rows`` streamed as a CSV download named ``filename``."""
    response = StreamingHttpResponse(csv_lines(rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --- the end of a participant's work ---------------------------------------------------------


def end_code_context(*, user: Any, study: Study, outcome: str = "completed") -> dict | None:
    """Context for ``templates/annotation/_end_code.html`` on a finished page (None: not a join-link participant).

    The judge's and the annotator's finished pages call this once the work is done:
    after-questions still to answer → a link to them; a timed-out participant → that
    message, no code; else the participant is recorded as completed and gets the
    code and the way back to the platform (:func:`selectors.end_context`).
    """
    participant = participation_selectors.participant_for_user(study=study, user=user)
    if participant is None:
        return None
    status = participation_selectors.participant_status(participant=participant)
    if status == ParticipantStatus.SCREENED_OUT:
        outcome = "screened_out"
    elif status == ParticipantStatus.TIMED_OUT:
        return {"outcome": "timed_out"}
    elif participation_selectors.questions_pending(participant=participant, phase="after"):
        return {
            "outcome": "questions",
            "questions_url": reverse("participation:questions", kwargs={"study_id": study.pk, "phase": "after"}),
        }
    if outcome == "completed":
        participant = participation_services.participant_complete(participant=participant)
    return participation_selectors.end_context(participant=participant, outcome=outcome)
