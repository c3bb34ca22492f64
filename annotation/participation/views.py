"""Field-study pages: the participant's join, consent, questions, resume and end; the researcher's
join links, consent/questions settings and participants table.

Participant pages show only the study's ``participant_title`` and the researcher's texts:
never the study's name, a system, a control, or anything about other participants.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import ParticipantStatus, Role
from annotation.judging.views import csv_response
from annotation.models import JoinLink, Participant, Study
from annotation.views import participant_page, researcher_study_required, study_context, study_language_activate
from config.auth import client_ip

from . import selectors, services
from .forms import AnswersForm, JoinLinkForm, SettingsForm

BACKEND = "django.contrib.auth.backends.ModelBackend"
#: Platform parameters a join page carries from its URL into the consent form.
PLATFORM_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId", "turkSubmitTo")


def _refused(request, message: str, status: int, study: Study | None = None):
    return render(request, "participation/refused.html", {"message": message, "study": study}, status=status)


def _continue(participant: Participant):
    return redirect("participation:continue", study_id=participant.study_id)


def _login(request, participant: Participant) -> None:
    if request.user.is_authenticated and request.user.pk == participant.user_id:
        return
    login(request, participant.user, backend=BACKEND)


def _address_allowed(request) -> bool:
    """At most PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR new participants from one address in an hour."""
    limit = settings.PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR
    if not limit:
        return True
    key = f"paraeval:join:{client_ip(request)}"
    cache.add(key, 0, timeout=3600)
    try:
        return cache.incr(key) <= limit
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=3600)
        return True


@participant_page
@never_cache
@require_http_methods(["GET", "POST"])
def join(request, token: str):
    """GET: the consent page (MTurk's preview: a preview). POST: accept (join) or decline (nothing stored)."""
    link = JoinLink.objects.select_related("study").filter(token=token).first()
    if link is None:
        return _refused(request, _("This link is not valid. Check that you copied all of it."), 404)
    study = link.study
    study_language_activate(study)  # the rest of the page (refusals too) speaks the study's language
    params = request.POST if request.method == "POST" else request.GET
    try:
        ids = services.platform_ids_parse(platform=link.platform, params=params)
    except services.JoinRefused as exc:
        return _refused(request, exc.message, exc.status, study)
    if ids.preview:
        return render(request, "participation/preview.html", {"study": study})
    if request.method == "POST" and request.POST.get("action") == "decline":
        return render(request, "participation/declined.html", {"study": study})
    # A returning platform id, or this browser's own participant: resume, never a second account.
    known = services.participant_for_platform_id(study=study, platform=link.platform, platform_id=ids.platform_id)
    if known is None and not ids.platform_id:
        known = selectors.participant_for_user(study=study, user=request.user)
    if known is not None:
        _login(request, known)
        return _continue(known)
    refusal = services.join_link_refusal(link=link)
    if refusal is not None:
        return _refused(request, refusal.message, refusal.status, study)
    consent = selectors.settings_for_study(study=study)
    carried = [(k, params[k]) for k in PLATFORM_PARAMS if params.get(k)]
    if request.method == "GET" or request.POST.get("action") != "accept":
        return render(request, "participation/consent.html", {
            "study": study, "consent_text": consent.consent_text if consent else "", "carried": carried})
    if not _address_allowed(request):
        return _refused(request, _("Too many people joined from your network in the last hour. Please try again later."),
                        429, study)
    try:
        participant, resume_token = services.participant_join(link=link, ids=ids)
    except services.JoinRefused as exc:
        return _refused(request, exc.message, exc.status, study)
    except IntegrityError:
        # The same platform id accepted twice at the same moment (two tabs, two links): the other one won.
        known = services.participant_for_platform_id(study=study, platform=link.platform, platform_id=ids.platform_id)
        if known is None:
            raise
        _login(request, known)
        return _continue(known)
    _login(request, participant)
    # Rendered (not redirected): the resume link exists only in this response; only its hash is stored.
    return render(request, "participation/welcome.html", {
        "study": study, "resume_url": request.build_absolute_uri(reverse("participation:resume", args=[resume_token])),
        "next_url": reverse("participation:continue", kwargs={"study_id": study.pk})})


@participant_page
@never_cache
@require_http_methods(["GET", "POST"])
def resume(request, token: str):
    """A participant's personal link back in (any browser). GET asks, POST signs in."""
    try:
        participant = services.participant_resume(token=token)
    except services.JoinRefused as exc:
        return _refused(request, exc.message, exc.status)
    study_language_activate(participant.study)
    if request.method == "POST":
        _login(request, participant)
        return _continue(participant)
    return render(request, "participation/resume.html", {"study": participant.study})


def _participant_or_404(request, study_id: int) -> Participant:
    participant = Participant.objects.select_related("study", "link").filter(study_id=study_id, user=request.user).first()
    if participant is None:
        raise Http404("You are not a participant of this study.")
    study_language_activate(participant.study)  # inside a participant_page: the study's language
    return participant


def _work_url(participant: Participant) -> str:
    if participant.role == Role.JUDGE:
        return reverse("judging:rate", kwargs={"study_id": participant.study_id})
    return reverse("alignment:home")


@participant_page
@login_required
@require_GET
def continue_(request, study_id: int):
    """Where a participant stands: questions first, then the work (or a timed-out page)."""
    participant = _participant_or_404(request, study_id)
    if selectors.participant_status(participant=participant) == ParticipantStatus.TIMED_OUT:
        return render(request, "participation/timed_out.html", {"study": participant.study,
                                                                  "timed_out_end": {"outcome": "timed_out"}})
    if selectors.questions_pending(participant=participant, phase="before"):
        return redirect("participation:questions", study_id=study_id, phase="before")
    return redirect(_work_url(participant))


@participant_page
@login_required
@require_http_methods(["GET", "POST"])
def questions(request, study_id: int, phase: str):
    if phase not in ("before", "after"):
        raise Http404
    participant = _participant_or_404(request, study_id)
    qs = selectors.questions_for(study=participant.study, phase=phase)
    form = AnswersForm(request.POST if request.method == "POST" else None, questions=qs)
    if request.method == "POST":
        errors = services.participant_answers_save(participant=participant, phase=phase, data=request.POST)
        if not errors:
            return redirect("participation:continue", study_id=study_id) if phase == "before" \
                else redirect(_work_url(participant) if participant.role == Role.ANNOTATOR
                              else reverse("judging:finished", kwargs={"study_id": study_id}))
        # The service's messages replace Django's own: add_error needs a cleaned form (an empty
        # POST, or any POST before is_valid, has no cleaned_data and add_error would raise).
        form.is_valid()
        form.errors.clear()
        for name, message in errors.items():
            form.add_error(name, message)
    return render(request, "participation/questions.html", {"study": participant.study, "form": form, "phase": phase})


def end_code_context(*, user, study: Study, outcome: str = "completed") -> dict | None:
    """Context for ``templates/annotation/_end_code.html`` on a finished page (None: not a join-link participant).

    The judge's and the annotator's finished pages call this once the work is done:
    after-questions still to answer → a link to them; a timed-out participant → that
    message, no code; else the participant is recorded as completed and gets the
    code and the way back to the platform (:func:`selectors.end_context`).
    """
    participant = selectors.participant_for_user(study=study, user=user)
    if participant is None:
        return None
    status = selectors.participant_status(participant=participant)
    if status == ParticipantStatus.SCREENED_OUT:
        outcome = "screened_out"
    elif status == ParticipantStatus.TIMED_OUT:
        return {"outcome": "timed_out"}
    elif selectors.questions_pending(participant=participant, phase="after"):
        return {"outcome": "questions",
                "questions_url": reverse("participation:questions", kwargs={"study_id": study.pk, "phase": "after"})}
    if outcome == "completed":
        participant = services.participant_complete(participant=participant)
    return selectors.end_context(participant=participant, outcome=outcome)


# --- the researcher's pages ------------------------------------------------------------------

@researcher_study_required
@require_GET
def study_page(request, study):
    row = selectors.settings_for_study(study=study)
    return render(request, "participation/study.html", study_context(
        study, links=selectors.join_links_for_study(study=study), link_form=JoinLinkForm(),
        settings_form=SettingsForm(instance_row=row),
        join_base=request.build_absolute_uri("/join/")))


@researcher_study_required
@require_POST
def link_create(request, study):
    form = JoinLinkForm(request.POST)
    if form.is_valid():
        try:
            link = services.join_link_create(study=study, created_by=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for message in exc.messages:
                messages.error(request, message)
        else:
            messages.success(request, f"Join link made: {request.build_absolute_uri(reverse('participation:join', args=[link.token]))}")
    else:
        for field, errs in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errs)}")
    return redirect("participation:study", study_id=study.pk)


@researcher_study_required
@require_GET
def link_preview(request, study, link_id: int):
    """What a participant sees first through this link (the consent page, in the study's language),
    for the researcher: nothing is stored, no participant is made, no seat is taken."""
    link = get_object_or_404(JoinLink, pk=link_id, study=study)
    consent = selectors.settings_for_study(study=study)
    with translation.override(study.language or None):  # in the participants' language, for this page only
        return render(request, "participation/consent.html", {
            "study": study, "consent_text": consent.consent_text if consent else "", "carried": [],
            "preview_of": link, "back_url": reverse("participation:study", kwargs={"study_id": study.pk})})


@researcher_study_required
@require_POST
def link_close(request, study, link_id: int):
    link = get_object_or_404(JoinLink, pk=link_id, study=study)
    services.join_link_close(link=link)
    messages.success(request, "The link is closed: nobody new can join through it.")
    return redirect("participation:study", study_id=study.pk)


@researcher_study_required
@require_POST
def settings_save(request, study):
    form = SettingsForm(request.POST)
    if form.is_valid():
        try:
            services.participation_settings_update(study=study, **form.cleaned_data)
        except ValidationError as exc:
            for field, errs in exc.message_dict.items():
                messages.error(request, f"{field}: {'; '.join(errs)}")
        else:
            messages.success(request, "Consent text and questions saved.")
    else:
        for field, errs in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errs)}")
    return redirect("participation:study", study_id=study.pk)


@researcher_study_required
@require_GET
def participants(request, study):
    sort = request.GET.get("sort", "joined_at")
    rows = selectors.participants_rows(study=study, sort=sort)
    columns = selectors.answer_columns(study=study)
    for r in rows:
        r["answer_cells"] = [r["answers"].get(p, {}).get(n, "") for p, n in columns]
    counts = {s.value: sum(r["status"] == s.value for r in rows) for s in ParticipantStatus}
    return render(request, "participation/participants.html", study_context(
        study, rows=rows, sort=sort, sorts=selectors.PARTICIPANT_SORTS, answer_columns=[f"{p}:{n}" for p, n in columns],
        counts=counts, statuses=ParticipantStatus))


@researcher_study_required
@require_GET
def participants_csv(request, study):
    return csv_response(selectors.participants_export_rows(study=study),
                        f"{slugify(study.name) or 'study'}-participants.csv")


def questions_json(questions: list) -> str:
    return json.dumps(questions, indent=2, ensure_ascii=False) if questions else ""
