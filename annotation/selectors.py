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


def study_members(*, study: Study) -> QuerySet[StudyMembership]:
    return StudyMembership.objects.filter(study=study).select_related("user").order_by("role", "user__username")


def import_jobs_for_study(*, study: Study, limit: int = 10) -> QuerySet[ImportJob]:
    return ImportJob.objects.filter(study=study).order_by("-created_at")[:limit]
