"""Writes for field studies: join links, participants joining and resuming, answers, timeouts.

Who may do what is the views' and APIs' business; these functions check the study's
state (open, link usable, cap, platform id reuse) and keep the all-or-nothing rules.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Min, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.enums import Platform, Role, StudyStatus
from annotation.judging.models import Assignment
from annotation.judging.protocols.registry import protocol_for_study, protocols_all
from annotation.judging.services.assignments import assignment_build_for_participant, assignment_release_unfinished
from annotation.models import JoinLink, Participant, ParticipationSettings, Study
from annotation.services.membership import study_member_add

from .questions import answers_clean, questions_errors
from .selectors import join_link_seat_frees_at

#: MTurk's value of assignmentId while a worker only previews a HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
#: Where MTurk may send a worker's form (its turkSubmitTo parameter); anything else is refused.
MTURK_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"

_PROLIFIC_ID = re.compile(r"^[0-9a-fA-F]{24}$")
_MTURK_ID = re.compile(r"^[A-Z0-9]{10,40}$")


class JoinRefused(Exception):
    """A join link (or resume link) that cannot admit this person now; ``message`` is for them, ``status`` HTTP.

    ``retry_at``: when a place may free up (a full link whose seats can still expire), else None.
    """

    def __init__(self, message: str, status: int = 410, retry_at: datetime | None = None, full: bool = False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_at = retry_at
        self.full = full


class AlreadyJoined(JoinRefused):
    """The platform id has a participant in this study already (``participant``): resume, never a second one."""

    def __init__(self, participant: Participant):
        super().__init__(_("You have already taken part in this study."), status=409)
        self.participant = participant


@dataclass(frozen=True)
class PlatformIds:
    """What a crowd platform put in the link's URL, checked. ``preview``: MTurk's HIT preview."""

    platform_id: str = ""
    study_id: str = ""
    session_id: str = ""
    submit_to: str = ""
    preview: bool = False


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _code() -> str:
    return secrets.token_hex(4).upper()


# --- researcher side -----------------------------------------------------------------------


@transaction.atomic
def participation_settings_update(
    *, study: Study, consent_text: str, questions_before: list, questions_after: list
) -> ParticipationSettings:
    """Set the consent text and the questions asked before and after the work (checked, all or nothing)."""
    errors = {}
    for field, qs in (("questions_before", questions_before), ("questions_after", questions_after)):
        if problems := questions_errors(qs):
            errors[field] = problems
    if errors:
        raise ValidationError(errors)
    row, _created = ParticipationSettings.objects.select_for_update().get_or_create(study=study)
    row.consent_text = consent_text.strip()
    row.questions_before = questions_before
    row.questions_after = questions_after
    row.full_clean()
    row.save()
    return row


def _check_completion_url(url: str) -> None:
    if url and not re.match(r"^https?://[^\s]+$", url):
        raise ValidationError({"completion_url": "Give an http(s) address (it may contain {code})."})


@transaction.atomic
def join_link_create(
    *,
    study: Study,
    role: str,
    platform: str = Platform.LINK,
    created_by: User | None = None,
    label: str = "",
    max_participants: int | None = None,
    ends_at: datetime | None = None,
    timeout_minutes: int = 60,
    items_per_participant: int | None = None,
    completion_url: str = "",
    completion_code: str = "",
    screen_out_code: str = "",
) -> JoinLink:
    """Make a join link for ``role`` (judge or annotator). Codes are generated unless given (Prolific's own).

    A Prolific link without a completion URL sends finished participants to Prolific's
    completion page with the code.
    """
    if role not in (Role.JUDGE, Role.ANNOTATOR):
        raise ValidationError({"role": "A join link is for judges or annotators."})
    if platform not in Platform.values:
        raise ValidationError({"platform": f"platform must be one of {', '.join(Platform.values)}"})
    if ends_at is not None and ends_at <= timezone.now():
        raise ValidationError({"ends_at": "The end date must be in the future."})
    if timeout_minutes < 1:
        raise ValidationError({"timeout_minutes": "The timeout is at least one minute."})
    if items_per_participant is not None and items_per_participant < 1:
        raise ValidationError({"items_per_participant": "Give at least one item, or leave it empty (every item)."})
    if platform == Platform.PROLIFIC and not completion_url:
        completion_url = PROLIFIC_COMPLETION_URL
    _check_completion_url(completion_url)
    for field, code in (("completion_code", completion_code), ("screen_out_code", screen_out_code)):
        if code and not re.match(r"^[A-Za-z0-9_-]{4,64}$", code):
            raise ValidationError({field: "A code is 4–64 letters, digits, - or _."})
    link = JoinLink(
        study=study,
        role=role,
        platform=platform,
        token=secrets.token_urlsafe(18),
        label=label.strip(),
        max_participants=max_participants,
        ends_at=ends_at,
        timeout_minutes=timeout_minutes,
        items_per_participant=items_per_participant if role == Role.JUDGE else None,
        completion_url=completion_url,
        completion_code=completion_code or _code(),
        screen_out_code=screen_out_code or _code(),
        created_by=created_by,
    )
    link.full_clean()
    link.save()
    return link


@transaction.atomic
def join_link_close(*, link: JoinLink) -> JoinLink:
    """Admit nobody new through ``link`` (people already in can go on)."""
    link = JoinLink.objects.select_for_update().get(pk=link.pk)
    if link.closed_at is None:
        link.closed_at = timezone.now()
        link.save(update_fields=["closed_at", "updated_at"])
    return link


# --- the participant's side ---------------------------------------------------------------


def platform_ids_parse(*, platform: str, params) -> PlatformIds:
    """Read and check the platform's URL parameters. Raises :class:`JoinRefused` (400) if they are malformed."""
    bad = JoinRefused(
        _("This link is incomplete or was changed. Open it again from the study's page on the platform."), status=400
    )
    if platform == Platform.PROLIFIC:
        pid, study_id, session = (params.get(k, "") for k in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
        if not all(_PROLIFIC_ID.match(v or "") for v in (pid, study_id, session)):
            raise bad
        return PlatformIds(platform_id=pid.lower(), study_id=study_id.lower(), session_id=session.lower())
    if platform == Platform.MTURK:
        worker, assignment, hit = (params.get(k, "") for k in ("workerId", "assignmentId", "hitId"))
        if assignment == MTURK_PREVIEW:
            return PlatformIds(preview=True)
        submit_to = params.get("turkSubmitTo", "").rstrip("/")
        if not all(_MTURK_ID.match(v or "") for v in (worker, assignment, hit)) or (
            submit_to and submit_to not in MTURK_SUBMIT_HOSTS
        ):
            raise bad
        return PlatformIds(
            platform_id=worker, study_id=hit, session_id=assignment, submit_to=submit_to or MTURK_SUBMIT_HOSTS[0]
        )
    return PlatformIds()


def join_link_refusal(*, link: JoinLink) -> JoinRefused | None:
    """Why ``link`` admits nobody new now (None: it does). Timed-out participants do not count against the cap.

    A full link whose seats may still expire says when (``retry_at``,
    :func:`~annotation.participation.selectors.join_link_seat_frees_at`).
    """
    if link.closed_at is not None:
        return JoinRefused(_("This study is closed to new participants. Thank you for your interest."))
    if link.ends_at is not None and link.ends_at <= timezone.now():
        return JoinRefused(_("This study has ended. Thank you for your interest."))
    if (
        link.max_participants is not None
        and link.participants.filter(timed_out_at__isnull=True).count() >= link.max_participants
    ):
        retry_at = join_link_seat_frees_at(link=link)
        if retry_at is None:
            return JoinRefused(
                _("This study is full: every place has been taken. Thank you for your interest."), full=True
            )
        return JoinRefused(
            _("This study is full at the moment. A place may free up later: please try again after %(time)s UTC.")
            % {"time": retry_at.strftime("%H:%M")},
            retry_at=retry_at,
            full=True,
        )
    if link.role == Role.JUDGE and link.study.status != StudyStatus.OPEN:
        return JoinRefused(_("This study is not open at the moment. Please try again later."), status=409)
    return None


def join_link_admission(*, link: JoinLink) -> JoinRefused | None:
    """:func:`join_link_refusal`, after freeing the link's expired seats when it looks full.

    Seats taken by people who never came back (an invented platform id costs nothing)
    expire after the link's timeout; Celery beat frees them every
    ``PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS``, and a join to a link that looks full
    frees them first, so nobody is turned away by a seat that has already expired.
    """
    refusal = join_link_refusal(link=link)
    if refusal is not None and refusal.full and participants_release_timed_out(study=link.study):
        refusal = join_link_refusal(link=link)
    return refusal


def participant_session_matches(*, participant: Participant, ids: PlatformIds) -> bool:
    """Whether ``ids`` carry the platform's own session of ``participant`` (Prolific SESSION_ID and STUDY_ID,
    MTurk assignmentId and hitId), as stored when they joined.

    A platform id alone (PROLIFIC_PID, workerId) is not a secret: it appears in exports,
    messages and screenshots. The session id is made by the platform for this one
    submission and is handed only to the participant's own browser, so it is what a
    platform link may resume with (besides this browser's session, the signed resume
    cookie and the personal resume link).
    """
    if not ids.platform_id or ids.platform_id != participant.platform_id or not participant.platform_session_id:
        return False
    return (
        secrets.compare_digest(ids.session_id, participant.platform_session_id)
        and ids.study_id == participant.platform_study_id
    )


def participant_for_platform_id(*, study: Study, platform: str, platform_id: str) -> Participant | None:
    if not platform_id:
        return None
    return (
        Participant.objects.select_related("user", "link")
        .filter(study=study, platform=platform, platform_id=platform_id)
        .first()
    )


def _pseudonym() -> str:
    while True:
        name = f"p-{secrets.token_hex(5)}"
        if not User.objects.filter(username=name).exists():
            return name


def participant_join(*, link: JoinLink, ids: PlatformIds) -> tuple[Participant, str]:
    """Admit one person through ``link`` after they accepted the consent text; return (participant, resume token).

    Makes a pseudonymous account (no name, no email, no usable password), makes it a
    member through ``study_member_add``, and builds a judge's items (see
    :func:`~annotation.judging.services.assignment_build_for_participant`) or hands an
    annotator their pairs. First releases the items of participants of the study who
    timed out, so the newcomer can be given them. The link row is locked, so the cap
    holds when many arrive at once. The resume token is returned once; only its hash
    is stored. Raises :class:`JoinRefused` (closed, ended, full, not open) or
    :class:`AlreadyJoined` (platform id already used: the caller decides whether this
    browser may resume that participant, :func:`participant_session_matches`).
    """
    participants_release_timed_out(study=link.study)
    with transaction.atomic():
        link = JoinLink.objects.select_for_update().select_related("study").get(pk=link.pk)
        if (refusal := join_link_refusal(link=link)) is not None:
            raise refusal
        if ids.preview:
            raise JoinRefused(_("Accept the HIT first to take part."), status=400)
        if known := participant_for_platform_id(study=link.study, platform=link.platform, platform_id=ids.platform_id):
            raise AlreadyJoined(known)
        user = User(username=_pseudonym())
        user.set_unusable_password()
        user.save()
        token = secrets.token_urlsafe(32)
        participant = Participant.objects.create(
            study=link.study,
            link=link,
            user=user,
            role=link.role,
            platform=link.platform,
            platform_id=ids.platform_id,
            platform_study_id=ids.study_id,
            platform_session_id=ids.session_id,
            mturk_submit_to=ids.submit_to,
            resume_token_hash=token_hash(token),
            consented_at=timezone.now(),
        )
        study_member_add(study=link.study, user=user, role=link.role)
        if link.role == Role.JUDGE:
            if (
                assignment_build_for_participant(study=link.study, judge=user, n_items=link.items_per_participant)
                is None
            ):
                raise JoinRefused(_("This study is not open at the moment. Please try again later."), status=409)
        else:
            from annotation.alignment.services.assignments import assignments_create

            assignments_create(study=link.study, annotators=[user])
    return participant, token


def participant_resume(*, token: str) -> Participant:
    """The participant whose personal resume link this is. Raises :class:`JoinRefused` (404)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise JoinRefused(_("This resume link is not valid."), status=404)
    participant = (
        Participant.objects.select_related("user", "study", "link").filter(resume_token_hash=token_hash(token)).first()
    )
    if participant is None or not participant.user.is_active:
        raise JoinRefused(_("This resume link is not valid."), status=404)
    return participant


@transaction.atomic
def participant_answers_save(*, participant: Participant, phase: str, data: dict) -> dict[str, str]:
    """Store the answers to the ``phase`` ("before"/"after") questions; return errors by question (nothing stored then)."""
    settings_row = ParticipationSettings.objects.filter(study=participant.study).first()
    questions = getattr(settings_row, f"questions_{phase}", []) if settings_row else []
    answers, errors = answers_clean(questions, data)
    if errors:
        return errors
    participant = Participant.objects.select_for_update().get(pk=participant.pk)
    participant.answers = {**participant.answers, phase: answers}
    participant.save(update_fields=["answers", "updated_at"])
    return {}


@transaction.atomic
def participant_complete(*, participant: Participant) -> Participant:
    """Record that the participant reached the end (idempotent: the first time counts)."""
    participant = Participant.objects.select_for_update().get(pk=participant.pk)
    if participant.completed_at is None:
        participant.completed_at = timezone.now()
        participant.save(update_fields=["completed_at", "updated_at"])
    return participant


def participants_release_timed_out(*, study: Study | None = None, now: datetime | None = None) -> int:
    """Release the unfinished items of judge participants idle longer than their link's timeout.

    Idle means: no judgment submitted (and no join) for ``timeout_minutes``. Their
    done work stays; ``timed_out_at`` is set and they get a "time ran out" page if
    they come back. Annotators who saved no work within the timeout time out too
    (their seat frees). Returns how many participants timed out. Run by Celery beat
    every ``PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS`` (``participation.release_timed_out``),
    by ``manage.py release_timed_out``, and by a join to the study.
    """
    now = now or timezone.now()
    qs = Participant.objects.filter(role=Role.JUDGE, completed_at__isnull=True, timed_out_at__isnull=True)
    if study is not None:
        qs = qs.filter(study=study)
    # One query: each candidate's last judgment, for everyone who joined before the shortest timeout.
    shortest = qs.aggregate(m=Min("link__timeout_minutes"))["m"]
    if shortest is None:
        return 0
    # Whatever the study's protocol, and imported judgments of another one too: every unit's
    # latest submission, one subquery each (a participant judging anything is not idle).
    lasts = {
        f"last_{i}": Subquery(unit.last_judgment_query(study_id=OuterRef("study_id"), judge_id=OuterRef("user_id")))
        for i, unit in enumerate(protocols_all())
    }
    idle = (
        qs.filter(consented_at__lte=now - timedelta(minutes=shortest))
        .annotate(**lasts)
        .values("pk", "consented_at", "link__timeout_minutes", "study_id", "user_id", *lasts)
    )
    n = 0
    for row in idle:
        pk, study_id, user_id, timeout = row["pk"], row["study_id"], row["user_id"], row["link__timeout_minutes"]
        active_at = max(filter(None, (row["consented_at"], *(row[name] for name in lasts))))
        if active_at > now - timedelta(minutes=timeout):
            continue
        p = Participant(pk=pk, study_id=study_id, user_id=user_id)
        if getattr(Assignment.objects.filter(study_id=p.study_id, judge_id=p.user_id).first(), "screened_out_at", None):
            continue
        with transaction.atomic():
            locked = Participant.objects.select_for_update().get(pk=p.pk)
            if locked.timed_out_at is not None or locked.completed_at is not None:
                continue
            assignment = Assignment.objects.filter(study_id=p.study_id, judge_id=p.user_id).first()
            if assignment is not None and not protocol_for_study(study=Study(pk=p.study_id)).items_remaining(
                assignment=assignment
            ):
                continue  # everything answered: they finished, they are not idle
            if assignment is not None:
                assignment_release_unfinished(assignment=assignment)
            locked.timed_out_at = now
            locked.save(update_fields=["timed_out_at", "updated_at"])
            n += 1
    return n + _annotator_seats_release(study=study, now=now)


def _annotator_seats_release(*, study: Study | None, now: datetime) -> int:
    """Time out annotator participants who saved no work at all within their link's timeout (their seat frees).

    Every annotator of a study aligns every pair, so there are no items to hand on;
    an annotator with any draft or submission keeps their seat.
    """
    from annotation.alignment.models import AlignmentAssignment

    qs = Participant.objects.filter(role=Role.ANNOTATOR, completed_at__isnull=True, timed_out_at__isnull=True)
    if study is not None:
        qs = qs.filter(study=study)
    working = AlignmentAssignment.objects.filter(
        annotator_id=OuterRef("user_id"), pair__study_id=OuterRef("study_id")
    ).filter(Q(draft_saved_at__isnull=False) | Q(submitted_at__isnull=False))
    n = 0
    for pk, consented_at, timeout in qs.exclude(Exists(working)).values_list(
        "pk", "consented_at", "link__timeout_minutes"
    ):
        if consented_at > now - timedelta(minutes=timeout):
            continue
        n += (
            Participant.objects.filter(pk=pk, timed_out_at__isnull=True, completed_at__isnull=True)
            .exclude(Exists(working))
            .update(timed_out_at=now, updated_at=now)
        )
    return n
