"""Excluding a judge from (or re-including them in) every statistic of a study."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from annotation.enums import Role
from annotation.models import Study, StudyMembership

from ..errors import CannotOpen
from ..models import Assignment, JudgeExclusion


@transaction.atomic
def judge_exclusion_set(
    *, study: Study, judge: User, excluded: bool, decided_by: User | None, reason: str = ""
) -> JudgeExclusion | None:
    """Exclude a judge from (or re-include them in) every statistic of the study.

    Recorded as a new :class:`JudgeExclusion` row (the history is kept); a decision
    equal to the current state records nothing and returns None. The judge's
    judgments are untouched either way.
    """
    if (
        not Assignment.objects.filter(study=study, judge=judge).exists()
        and not StudyMembership.objects.filter(study=study, user=judge, role=Role.JUDGE).exists()
    ):
        raise CannotOpen(f"{judge.username} is not a judge of this study.")
    if not excluded and Assignment.objects.filter(study=study, judge=judge, screened_out_at__isnull=False).exists():
        raise CannotOpen(f"{judge.username} was screened out by a screening rule; their judgments never count.")
    current = JudgeExclusion.objects.filter(study=study, judge=judge).order_by("-created_at", "-id").first()
    if (current.excluded if current else False) == bool(excluded):
        return None
    row = JudgeExclusion(
        study=study, judge=judge, excluded=bool(excluded), reason=reason.strip(), decided_by=decided_by
    )
    row.full_clean()
    row.save()
    return row
