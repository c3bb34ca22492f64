"""Field-study pages: the participant's join, consent, questions, resume and end; the researcher's
join links, consent/questions settings and participants table.

Participant pages show only the study's ``participant_title`` and the researcher's texts:
never the study's name, a system, a control, or anything about other participants.
"""

from __future__ import annotations

import json
import math
import time

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
from django.utils import timezone, translation
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.enums import ParticipantStatus, Platform, Role
from annotation.judging.protocols.registry import protocol_for_study
from annotation.models import JoinLink, Participant, Study
from annotation.web import (
    csv_response,
    participant_page,
    researcher_study_required,
    study_context,
    study_language_activate,
)
from config.auth import client_ip

from . import selectors, services
from .forms import AnswersForm, JoinLinkForm, SettingsForm

BACKEND = "django.contrib.auth.backends.ModelBackend"
#: Platform parameters a join page carries from its URL into the consent form.
PLATFORM_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId", "turkSubmitTo")


#: This browser's proof that it is a study's participant, besides its session: a cookie signed with
#: SECRET_KEY holding the participant's id (it survives a sign-out or an expired session).
RESUME_COOKIE = "paraeval_participant_{study}"
RESUME_COOKIE_SALT = "paraeval.participation.resume"
RESUME_COOKIE_MAX_AGE = 90 * 24 * 3600
#: How long an anonymous visitor's session keeps the platform ids of a join link they opened.
PARAMS_SESSION_SECONDS = 6 * 3600


def _refused(request, message: str, status: int, study: Study | None = None, retry_after: int | None = None):
    response = render(request, "participation/refused.html", {"message": message, "study": study}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(max(1, retry_after))
    return response


def _refusal(request, exc: services.JoinRefused, study: Study | None = None):
    retry_after = None
    if exc.retry_at is not None:
        retry_after = math.ceil((exc.retry_at - timezone.now()).total_seconds())
    return _refused(request, exc.message, exc.status, study, retry_after)


def _continue(participant: Participant):
    return redirect("participation:continue", study_id=participant.study_id)


def _signed_in(request, participant: Participant, response):
    """Sign this browser in as ``participant`` (on a POST only: never from a cross-site GET) and give it
    the signed resume cookie."""
    if not (request.user.is_authenticated and request.user.pk == participant.user_id):
        login(request, participant.user, backend=BACKEND)
        request.session.set_expiry(None)  # the participant's session lasts as any other (SESSION_COOKIE_AGE)
    response.set_signed_cookie(
        RESUME_COOKIE.format(study=participant.study_id),
        str(participant.pk),
        salt=RESUME_COOKIE_SALT,
        max_age=RESUME_COOKIE_MAX_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


def _cookie_participant_id(request, study: Study) -> int | None:
    value = request.get_signed_cookie(
        RESUME_COOKIE.format(study=study.pk), default=None, salt=RESUME_COOKIE_SALT, max_age=RESUME_COOKIE_MAX_AGE
    )
    return int(value) if value and value.isdigit() else None


def _rate_allowed(key: str, limit: int, window: int) -> int | None:
    """None when one more event fits ``limit`` per ``window`` seconds under ``key``; else seconds to wait."""
    if not limit:
        return None
    bucket = int(time.time() // window)
    full_key = f"paraeval:{key}:{bucket}"
    cache.add(full_key, 0, timeout=window + 5)
    try:
        count = cache.incr(full_key)
    except ValueError:  # expired between add and incr
        cache.set(full_key, 1, timeout=window + 5)
        count = 1
    return None if count <= limit else window * (bucket + 1) - int(time.time())


def _join_rate_refusal(request, link: JoinLink) -> tuple[str, int] | None:
    """Joins per link per minute (all addresses) and per address per hour: (message, seconds to wait) or None."""
    wait = _rate_allowed(f"join-link:{link.pk}", settings.PARAEVAL_JOIN_PER_LINK_PER_MINUTE, 60)
    if wait is not None:
        return _("Many people are joining right now. Please try again in a minute."), wait
    wait = _rate_allowed(f"join:{client_ip(request)}", settings.PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR, 3600)
    if wait is not None:
        return _("Too many people joined from your network in the last hour. Please try again later."), wait
    return None


def _params_key(link: JoinLink) -> str:
    return f"paraeval:join-params:{link.token}"


def _may_resume(request, participant: Participant, ids: services.PlatformIds) -> bool:
    """Whether this browser proves it is ``participant``: its session, its signed resume cookie, or the
    platform's own session id stored when they joined. A platform id alone is never enough."""
    return (
        (request.user.is_authenticated and request.user.pk == participant.user_id)
        or _cookie_participant_id(request, participant.study) == participant.pk
        or services.participant_session_matches(participant=participant, ids=ids)
    )


def _resume_or_refuse(request, participant: Participant, ids: services.PlatformIds):
    """A join link reached someone who already joined: resume them (sign-in on POST only) or refuse."""
    study = participant.study
    if not _may_resume(request, participant, ids):
        return _refused(
            request,
            _(
                "This study was already started with this id in another session. To go on, use "
                "your personal resume link, or open the study again from the platform."
            ),
            409,
            study,
        )
    if request.user.is_authenticated and request.user.pk == participant.user_id:
        return _continue(participant)
    if request.method != "POST":
        # A GET never signs in: a cross-site link must not swap the account this browser is signed in to.
        return render(request, "participation/resume.html", {"study": study, "from_join": True})
    request.session.pop(_params_key(participant.link), None)
    return _signed_in(request, participant, _continue(participant))


@participant_page
@never_cache
@require_http_methods(["GET", "POST"])
def join(request, token: str):
    """GET: the consent page (MTurk's preview: a preview). POST: accept (join), resume, or decline (nothing stored).

    The platform's ids in the address are kept in the session and the browser is sent on
    to the bare link, so that they stay out of access logs, the history and Referer headers.
    """
    link = JoinLink.objects.select_related("study").filter(token=token).first()
    if link is None:
        return _refused(request, _("This link is not valid. Check that you copied all of it."), 404)
    study = link.study
    study_language_activate(study)  # the rest of the page (refusals too) speaks the study's language
    if request.method == "GET" and any(k in request.GET for k in PLATFORM_PARAMS):
        try:
            ids = services.platform_ids_parse(platform=link.platform, params=request.GET)
        except services.JoinRefused as exc:
            return _refusal(request, exc, study)
        if ids.preview:
            return render(request, "participation/preview.html", {"study": study})
        if link.platform != Platform.LINK:
            request.session[_params_key(link)] = {k: request.GET[k] for k in PLATFORM_PARAMS if request.GET.get(k)}
            if not request.user.is_authenticated:
                # Someone who neither agrees nor declines leaves their ids for this long only.
                request.session.set_expiry(PARAMS_SESSION_SECONDS)
        return redirect("participation:join", token=link.token)
    if request.method == "POST" and any(request.POST.get(k) for k in PLATFORM_PARAMS):
        params = request.POST
    else:
        params = request.session.get(_params_key(link), {})
    # This browser's own participant (its session or its signed resume cookie).
    own = selectors.participant_for_user(study=study, user=request.user) or selectors.participant_by_id(
        study=study, pk=_cookie_participant_id(request, study)
    )
    if own is not None and not params and not (request.method == "POST" and request.POST.get("action") == "decline"):
        return _resume_or_refuse(request, own, services.PlatformIds())  # the bare link, opened again
    try:
        ids = services.platform_ids_parse(platform=link.platform, params=params)
    except services.JoinRefused as exc:
        return _refusal(request, exc, study)
    if ids.preview:
        return render(request, "participation/preview.html", {"study": study})
    if request.method == "POST" and request.POST.get("action") == "decline":
        request.session.pop(_params_key(link), None)
        return render(request, "participation/declined.html", {"study": study})
    # Someone who joined already: this browser must prove it is them; a platform id alone never will.
    if ids.platform_id:
        known = services.participant_for_platform_id(study=study, platform=link.platform, platform_id=ids.platform_id)
    else:
        known = own
    if known is not None:
        return _resume_or_refuse(request, known, ids)
    refusal = services.join_link_admission(link=link)
    if refusal is not None:
        return _refusal(request, refusal, study)
    if request.method == "GET" or request.POST.get("action") != "accept":
        consent = selectors.settings_for_study(study=study)
        carried = [(k, params[k]) for k in PLATFORM_PARAMS if params.get(k)]
        return render(
            request,
            "participation/consent.html",
            {
                "study": study,
                "consent_text": consent.consent_text if consent else "",
                "carried": carried,
                "signed_in_elsewhere": request.user.is_authenticated,
            },
        )
    if (limited := _join_rate_refusal(request, link)) is not None:
        return _refused(request, limited[0], 429, study, retry_after=limited[1])
    try:
        participant, resume_token = services.participant_join(link=link, ids=ids)
    except services.AlreadyJoined as exc:  # a second tab (or another link) accepted first
        return _resume_or_refuse(request, exc.participant, ids)
    except services.JoinRefused as exc:
        return _refusal(request, exc, study)
    except IntegrityError:
        # The same platform id accepted twice at the same moment (two tabs, two links): the other one won.
        known = services.participant_for_platform_id(study=study, platform=link.platform, platform_id=ids.platform_id)
        if known is None:
            raise
        return _resume_or_refuse(request, known, ids)
    request.session.pop(_params_key(link), None)
    # Rendered (not redirected): the resume link exists only in this response; only its hash is stored.
    response = render(
        request,
        "participation/welcome.html",
        {
            "study": study,
            "resume_url": request.build_absolute_uri(reverse("participation:resume", args=[resume_token])),
            "next_url": reverse("participation:continue", kwargs={"study_id": study.pk}),
        },
    )
    return _signed_in(request, participant, response)


@participant_page
@never_cache
@require_http_methods(["GET", "POST"])
def resume(request, token: str):
    """A participant's personal link back in (any browser). GET asks, POST signs in."""
    try:
        participant = services.participant_resume(token=token)
    except services.JoinRefused as exc:
        return _refusal(request, exc)
    study_language_activate(participant.study)
    if request.method == "POST":
        return _signed_in(request, participant, _continue(participant))
    return render(request, "participation/resume.html", {"study": participant.study})


def _participant_or_404(request, study_id: int) -> Participant:
    participant = (
        Participant.objects.select_related("study", "link").filter(study_id=study_id, user=request.user).first()
    )
    if participant is None:
        raise Http404("You are not a participant of this study.")
    study_language_activate(participant.study)  # inside a participant_page: the study's language
    return participant


def _work_url(participant: Participant) -> str:
    if participant.role == Role.JUDGE:  # the judge page of the study's protocol
        return reverse(
            protocol_for_study(study=participant.study).judge_page, kwargs={"study_id": participant.study_id}
        )
    return reverse("alignment:home")


@participant_page
@login_required
@require_GET
def continue_(request, study_id: int):
    """Where a participant stands: questions first, then the work (or a timed-out page)."""
    participant = _participant_or_404(request, study_id)
    if selectors.participant_status(participant=participant) == ParticipantStatus.TIMED_OUT:
        return render(
            request,
            "participation/timed_out.html",
            {"study": participant.study, "timed_out_end": {"outcome": "timed_out"}},
        )
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
            return (
                redirect("participation:continue", study_id=study_id)
                if phase == "before"
                else redirect(
                    _work_url(participant)
                    if participant.role == Role.ANNOTATOR
                    else reverse("judging:finished", kwargs={"study_id": study_id})
                )
            )
        # The service's messages replace Django's own: add_error needs a cleaned form (an empty
        # POST, or any POST before is_valid, has no cleaned_data and add_error would raise).
        form.is_valid()
        form.errors.clear()
        for name, message in errors.items():
            form.add_error(name, message)
    return render(request, "participation/questions.html", {"study": participant.study, "form": form, "phase": phase})


# --- the researcher's pages ------------------------------------------------------------------


@researcher_study_required
@require_GET
def study_page(request, study):
    row = selectors.settings_for_study(study=study)
    return render(
        request,
        "participation/study.html",
        study_context(
            study,
            links=selectors.join_links_for_study(study=study),
            link_form=JoinLinkForm(),
            settings_form=SettingsForm(instance_row=row),
            join_base=request.build_absolute_uri("/join/"),
        ),
    )


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
            messages.success(
                request,
                f"Join link made: {request.build_absolute_uri(reverse('participation:join', args=[link.token]))}",
            )
    else:
        for field, errs in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(e) for e in errs)}")
    return redirect("participation:study", study_id=study.pk)


@researcher_study_required
@require_GET
def link_preview(request, study, link_id: int):
    """What a participant sees first through this link (the consent page, in the study's language),
    for the researcher: nothing is stored, no participant is made, no seat is taken."""
    link = get_object_or_404(JoinLink, pk=link_id, study=study)
    consent = selectors.settings_for_study(study=study)
    with translation.override(study.language or None):  # in the participants' language, for this page only
        return render(
            request,
            "participation/consent.html",
            {
                "study": study,
                "consent_text": consent.consent_text if consent else "",
                "carried": [],
                "preview_of": link,
                "back_url": reverse("participation:study", kwargs={"study_id": study.pk}),
            },
        )


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
        for field, form_errs in form.errors.items():
            messages.error(request, f"{field}: {' '.join(str(e) for e in form_errs)}")
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
    return render(
        request,
        "participation/participants.html",
        study_context(
            study,
            rows=rows,
            sort=sort,
            sorts=selectors.PARTICIPANT_SORTS,
            answer_columns=[f"{p}:{n}" for p, n in columns],
            counts=counts,
            statuses=ParticipantStatus,
        ),
    )


@researcher_study_required
@require_GET
def participants_csv(request, study):
    return csv_response(
        selectors.participants_export_rows(study=study), f"{slugify(study.name) or 'study'}-participants.csv"
    )


def questions_json(questions: list) -> str:
    return json.dumps(questions, indent=2, ensure_ascii=False) if questions else ""
