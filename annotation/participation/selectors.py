"""Reads for field studies: a participant's status and end-of-study context, the participants table."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from urllib.parse import quote

from django.db.models import Count, Q

from annotation.enums import ParticipantStatus, Platform, Role
from annotation.judging.models import Assignment
from annotation.judging.protocols.registry import protocol_for_study, protocols_all
from annotation.judging.selectors.qc import judge_qc
from annotation.models import JoinLink, Participant, ParticipationSettings, Study

#: Outcomes :func:`end_context` knows.
OUTCOMES = ("completed", "screened_out")


def participant_for_user(*, study: Study, user) -> Participant | None:
    if not getattr(user, "is_authenticated", False):
        return None
    return Participant.objects.select_related("link", "study").filter(study=study, user=user).first()


def participant_by_id(*, study: Study, pk: int | None) -> Participant | None:
    if pk is None:
        return None
    return Participant.objects.select_related("link", "study", "user").filter(study=study, pk=pk).first()


def settings_for_study(*, study: Study) -> ParticipationSettings | None:
    return ParticipationSettings.objects.filter(study=study).first()


def questions_for(*, study: Study, phase: str) -> list[dict]:
    row = settings_for_study(study=study)
    return list(getattr(row, f"questions_{phase}", []) or []) if row else []


def questions_pending(*, participant: Participant, phase: str) -> bool:
    """Whether the participant still has to answer the ``phase`` questions."""
    return bool(questions_for(study=participant.study, phase=phase)) and phase not in (participant.answers or {})


def _assignment(participant: Participant) -> Assignment | None:
    return Assignment.objects.filter(study_id=participant.study_id, judge_id=participant.user_id).first()


def participant_status(*, participant: Participant, assignment: Assignment | None = None) -> ParticipantStatus:
    """active, completed, screened out (``Assignment.screened_out_at``, set by screening) or timed out."""
    if participant.role == Role.JUDGE:
        assignment = assignment or _assignment(participant)
        if getattr(assignment, "screened_out_at", None):
            return ParticipantStatus.SCREENED_OUT
    if participant.completed_at is not None:
        return ParticipantStatus.COMPLETED
    if participant.timed_out_at is not None:
        return ParticipantStatus.TIMED_OUT
    return ParticipantStatus.ACTIVE


def end_context(*, participant: Participant, outcome: str) -> dict:
    """What the end of the study shows ``participant`` for ``outcome`` ("completed" or "screened_out").

    Returns ``{"outcome", "code", "platform", "redirect_url", "mturk": {"action", "assignment_id"} | None}``:
    the code to show, and where to send them — the link's completion URL with ``{code}``
    filled in (Prolific's completion page by default), or MTurk's external-submit form.
    Render it with ``templates/annotation/_end_code.html``.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}")
    link = participant.link
    code = link.completion_code if outcome == "completed" else link.screen_out_code
    ctx: dict[str, object] = {
        "outcome": outcome,
        "code": code,
        "platform": link.platform,
        "redirect_url": "",
        "mturk": None,
        "platform_name": Platform(link.platform).label if link.platform != Platform.LINK else "",
    }
    if link.platform == Platform.MTURK:
        ctx["mturk"] = {
            "action": f"{participant.mturk_submit_to}/mturk/externalSubmit",
            "assignment_id": participant.platform_session_id,
        }
    elif link.completion_url:
        ctx["redirect_url"] = link.completion_url.replace("{code}", quote(code))
    return ctx


def join_link_seat_frees_at(*, link: JoinLink) -> datetime | None:
    """The earliest moment a live seat of ``link`` may expire (None: no seat can, e.g. every one completed).

    A seat expires when its participant stayed idle for the link's timeout: a judge
    since joining or their last judgment (screened-out judges keep their seat), an
    annotator who has saved no work since joining
    (:func:`~annotation.participation.services.participants_release_timed_out`).
    """
    from annotation.alignment.models import AlignmentAssignment

    live = list(
        Participant.objects.filter(link=link, timed_out_at__isnull=True, completed_at__isnull=True).values_list(
            "user_id", "role", "consented_at"
        )
    )
    if not live:
        return None
    users = [u for u, _role, _at in live]
    # Whatever the study's protocol: every unit's latest submission (one grouped query each).
    last_judgment: dict[int, datetime] = {}
    for unit in protocols_all():
        for judge_id, at in unit.last_judgment_by_judge(study_id=link.study_id, judge_ids=users).items():
            last_judgment[judge_id] = max(at, last_judgment.get(judge_id, at))
    screened = set(
        Assignment.objects.filter(
            study_id=link.study_id, judge_id__in=users, screened_out_at__isnull=False
        ).values_list("judge_id", flat=True)
    )
    working = set(
        AlignmentAssignment.objects.filter(pair__study_id=link.study_id, annotator_id__in=users)
        .filter(Q(draft_saved_at__isnull=False) | Q(submitted_at__isnull=False))
        .values_list("annotator_id", flat=True)
    )
    frees = [
        max(filter(None, (at, last_judgment.get(u))))
        for u, role, at in live
        if u not in screened and not (role == Role.ANNOTATOR and u in working)
    ]
    return min(frees) + timedelta(minutes=link.timeout_minutes) if frees else None


def join_links_for_study(*, study: Study) -> list[JoinLink]:
    return list(
        JoinLink.objects.filter(study=study)
        .annotate(
            n_participants=Count("participants"),
            n_live=Count("participants", filter=Q(participants__timed_out_at__isnull=True)),
        )
        .order_by("-created_at")
    )


PARTICIPANT_COLUMNS = (
    "pseudonym",
    "role",
    "platform",
    "platform_id",
    "platform_study_id",
    "platform_session_id",
    "status",
    "joined_at",
    "items_done",
    "items_total",
    "active_seconds",
    "qc_verdict",
    "completion_code",
    "screen_out_rule",
    "screen_out_reason",
)

#: Sort keys the participants page offers.
PARTICIPANT_SORTS = ("joined_at", "pseudonym", "status", "items_done", "active_seconds")


def _qc_verdicts(study: Study) -> dict[str, str]:
    out = {}
    # judge_qc gives every protocol's verdict (its criteria QC or its own control checks).
    for row in judge_qc(study=study):
        if row["excluded"]:
            verdict = "excluded"
        elif row["flags"]:
            verdict = f"{row['verdict']}: " + ", ".join(row["flags"])
        else:
            verdict = row["verdict"]
        out[row["judge"]] = verdict
    return out


def participants_rows(*, study: Study, sort: str = "joined_at") -> list[dict]:
    """One dict per participant of ``study`` (columns :data:`PARTICIPANT_COLUMNS` + ``answers``).

    ``active_seconds`` sums the latest judgments' visible-and-focused time; the
    completion code is the one the participant was shown (screen-out code when
    screened out, none while active or timed out).
    """
    participants = list(Participant.objects.filter(study=study).select_related("user", "link"))
    if not participants:
        return []
    users = [p.user_id for p in participants]
    assignments = {a.judge_id: a for a in Assignment.objects.filter(study=study, judge_id__in=users)}
    progress = protocol_for_study(study=study).progress_by_judge(study=study)  # pairs or items, as judged
    verdicts = _qc_verdicts(study) if assignments else {}
    rows = []
    for p in participants:
        a = assignments.get(p.user_id)
        status = participant_status(participant=p, assignment=a)
        code = {
            ParticipantStatus.COMPLETED: p.link.completion_code,
            ParticipantStatus.SCREENED_OUT: p.link.screen_out_code,
        }.get(status, "")
        rows.append(
            {
                "pseudonym": p.user.username,
                "role": p.role,
                "platform": p.platform,
                "platform_id": p.platform_id,
                "platform_study_id": p.platform_study_id,
                "platform_session_id": p.platform_session_id,
                "status": str(status),
                "joined_at": p.consented_at,
                "items_done": progress.get(p.user_id, (0, 0, 0.0))[0] if a else 0,
                "items_total": progress.get(p.user_id, (0, 0, 0.0))[1] if a else 0,
                "active_seconds": round(progress.get(p.user_id, (0, 0, 0.0))[2], 1),
                "qc_verdict": verdicts.get(p.user.username, "") if p.role == Role.JUDGE else "",
                "completion_code": code,
                "answers": p.answers or {},
                # Why a participant was screened out (the rule and its reason, as the screening stored them).
                "screen_out_rule": (getattr(a, "screened_out_rule", "") or "")
                if status == ParticipantStatus.SCREENED_OUT
                else "",
                "screen_out_reason": (getattr(a, "screened_out_reason", "") or "")
                if status == ParticipantStatus.SCREENED_OUT
                else "",
            }
        )
    key = sort.lstrip("-") if sort.lstrip("-") in PARTICIPANT_SORTS else "joined_at"
    rows.sort(key=lambda r: (r[key], r["pseudonym"]), reverse=sort.startswith("-"))
    return rows


def answer_columns(*, study: Study) -> list[tuple[str, str]]:
    """(phase, question name) for every question of the study, in order (export columns ``before:name``)."""
    return [(phase, q["name"]) for phase in ("before", "after") for q in questions_for(study=study, phase=phase)]


def participants_export_rows(*, study: Study) -> Iterator[list]:
    """Header then one CSV row per participant: :data:`PARTICIPANT_COLUMNS`, then one column per question."""
    columns = answer_columns(study=study)
    yield [*PARTICIPANT_COLUMNS, *(f"{phase}:{name}" for phase, name in columns)]
    for r in participants_rows(study=study):
        yield [r["joined_at"].isoformat() if c == "joined_at" else r[c] for c in PARTICIPANT_COLUMNS] + [
            r["answers"].get(phase, {}).get(name, "") for phase, name in columns
        ]
