"""Reads: who may see which study, and what a study holds."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Q, QuerySet

from .enums import Role, SystemKind
from .models import Candidate, ImportJob, Original, Study, StudyMembership, System

RESEARCHERS_GROUP = "researchers"


def user_is_researcher(user: User | AnonymousUser) -> bool:
    """May this user create studies? Superusers and members of the 'researchers' group."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=RESEARCHERS_GROUP).exists()


def researcher_accounts() -> QuerySet[User]:
    """Active accounts that may create studies (superusers and the 'researchers' group), oldest first."""
    return (
        User.objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(groups__name=RESEARCHERS_GROUP))
        .distinct()
        .order_by("pk")
    )


def study_list_for_researcher(user: User) -> QuerySet[Study]:
    """Studies this user owns or manages as a researcher (all of them for superusers)."""
    qs = Study.objects.all()
    if not user.is_superuser:
        qs = qs.filter(Q(owner=user) | Q(memberships__user=user, memberships__role=Role.RESEARCHER)).distinct()
    controls = SystemKind.control_kinds()
    # Controls are paraeval's own candidates, not systems under evaluation: count apart.
    return qs.select_related("owner").annotate(
        n_originals=Count("originals", distinct=True),
        n_systems=Count("systems", filter=~Q(systems__kind__in=controls), distinct=True),
        n_controls=Count("systems", filter=Q(systems__kind__in=controls), distinct=True),
    )


def study_roles_for_user(*, study: Study, user: User) -> set[str]:
    """The roles ``user`` holds in ``study`` (owners are researchers)."""
    if not user.is_authenticated:
        return set()
    roles = set(StudyMembership.objects.filter(study=study, user=user).values_list("role", flat=True))
    if study.owner_id == user.id or user.is_superuser:
        roles.add(Role.RESEARCHER)
    return roles


def user_can_manage_study(*, study: Study, user: User) -> bool:
    return Role.RESEARCHER in study_roles_for_user(study=study, user=user)


def studies_for_member(*, user: User, role: str) -> QuerySet[Study]:
    """Studies in which ``user`` holds ``role`` (judge or annotator)."""
    return Study.objects.filter(memberships__user=user, memberships__role=role).distinct()


def language_for_member(*, user: User, role: str, default: str) -> str:
    """The page language of ``user``'s pages that list several studies (their home, the
    guidelines): the language of their studies in ``role`` when all share one, else ``default``."""
    languages = set(
        Study.objects.filter(memberships__user=user, memberships__role=role)
        .values_list("language", flat=True)
        .distinct()[:2]
    )
    return languages.pop() if len(languages) == 1 else default


def study_system_counts(*, study: Study) -> list[dict]:
    """Per system: name, kind, its human-readable ``kind_label``, ``is_control``, number of
    candidates; imported systems first."""
    rows = (
        System.objects.filter(study=study)
        .annotate(n_candidates=Count("candidates"))
        .order_by("kind", "name")
        .values("id", "name", "kind", "n_candidates")
    )
    labels = dict(SystemKind.choices)
    controls = set(SystemKind.control_kinds())
    return [r | {"kind_label": labels.get(r["kind"], r["kind"]), "is_control": r["kind"] in controls} for r in rows]


def study_counts(*, study: Study) -> dict:
    return {
        "originals": Original.objects.filter(study=study).count(),
        "systems": System.objects.filter(study=study).exclude(kind__in=SystemKind.control_kinds()).count(),
        "controls": System.objects.filter(study=study, kind__in=SystemKind.control_kinds()).count(),
        "candidates": Candidate.objects.filter(original__study=study).count(),
        "per_system": study_system_counts(study=study),
    }


def study_role_conflicts(*, study: Study) -> list[User]:
    """Accounts that are both judge and annotator of ``study`` (made before that was refused).

    While an account is listed here it may neither rate nor align in the study
    (see :func:`user_role_conflict`); a researcher resolves it by removing one role.
    """
    judges = StudyMembership.objects.filter(study=study, role=Role.JUDGE).values("user_id")
    ids = StudyMembership.objects.filter(study=study, role=Role.ANNOTATOR, user_id__in=judges).values("user_id")
    return list(User.objects.filter(pk__in=ids).order_by("username"))


def user_role_conflict(*, study: Study | int, user: User) -> bool:
    """Is ``user`` both judge and annotator of ``study``? Such an account is held out of both."""
    if not user.is_authenticated:
        return False
    study_id = study if isinstance(study, int) else study.pk
    roles = set(
        StudyMembership.objects.filter(study_id=study_id, user=user, role__in=(Role.JUDGE, Role.ANNOTATOR)).values_list(
            "role", flat=True
        )
    )
    return len(roles) == 2


#: What a held-out account is told (it names only the account's own roles).
ROLE_CONFLICT_HOLD_MESSAGE = (
    "Your account is both a judge and an annotator of this study, which is not allowed. "
    "A researcher of the study must remove one of the two roles before you can continue."
)


def study_ids_with_role_conflict(*, user: User) -> QuerySet:
    """Ids of the studies where ``user`` is both judge and annotator (a subquery)."""
    judged = StudyMembership.objects.filter(user=user, role=Role.JUDGE).values("study_id")
    return StudyMembership.objects.filter(user=user, role=Role.ANNOTATOR, study_id__in=judged).values("study_id")


def study_members(*, study: Study) -> QuerySet[StudyMembership]:
    return StudyMembership.objects.filter(study=study).select_related("user").order_by("role", "user__username")


def import_jobs_for_study(*, study: Study, limit: int = 10) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(study=study).order_by("-created_at")[:limit]
