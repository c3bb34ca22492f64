"""A judge's assignment after opening: judges added late, join-link participants (built
on arrival, released when they time out), and the instructions' "seen" mark."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.enums import Role
from annotation.judging.services.opening import judge_users
from annotation.models import Study, StudyMembership

from ..models import Assignment, JudgingDesign
from ..protocols.registry import protocol_for_design, protocol_for_study


def assignment_ensure_for_judge(*, study: Study, judge: User) -> Assignment | None:
    """The judge's assignment, built now if the study was opened after they were added.

    Returns None if judging has not been opened or the user is not a judge of the
    study. Fully crossed: the late judge gets every item in their own seeded order.
    Exactly k per item: they get as many items as the lightest-loaded judge, taken
    from the items with the fewest judges (so some items gain a (k+1)-th judge;
    nobody loses one). Safe to call concurrently: one assignment per judge.
    """
    existing = Assignment.objects.filter(study=study, judge=judge).first()
    if existing is not None:
        # While a background opening is writing assignments the design is not frozen yet:
        # a judge's list is not theirs until every list is written.
        return (
            existing
            if (existing.joined_late or JudgingDesign.objects.filter(study=study, opened_at__isnull=False).exists())
            else None
        )
    if not StudyMembership.objects.filter(study=study, user=judge, role=Role.JUDGE).exists():
        return None
    with transaction.atomic():
        # The design row serialises late builds, so k-mode counts are read consistently.
        design = JudgingDesign.objects.select_for_update().filter(study=study).first()
        if design is None or not design.is_frozen:
            return None
        existing = Assignment.objects.filter(study=study, judge=judge).first()
        if existing is not None:
            return existing
        try:
            with transaction.atomic():  # a savepoint: the protocol's rows, all or none
                return protocol_for_design(design).assignment_late(study=study, design=design, judge=judge)
        except IntegrityError:  # a concurrent request wrote this judge's assignment first
            return Assignment.objects.get(study=study, judge=judge)


def assignments_ensure_all(*, study: Study) -> int:
    """Build assignments for every judge of an open study who has none. Returns how many."""
    n = 0
    have = set(Assignment.objects.filter(study=study).values_list("judge_id", flat=True))
    for judge in judge_users(study):
        if judge.pk not in have and assignment_ensure_for_judge(study=study, judge=judge) is not None:
            n += 1
    return n


@transaction.atomic
def instructions_mark_seen(*, assignment: Assignment) -> None:
    if assignment.instructions_seen_at is None:
        assignment.instructions_seen_at = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, instructions_seen_at__isnull=True).update(
            instructions_seen_at=assignment.instructions_seen_at
        )


# --- join-link participants (annotation.participation) ------------------------------------


def assignment_build_for_participant(*, study: Study, judge: User, n_items: int | None) -> Assignment | None:
    """Build the assignment of a judge who just came through a join link; None if judging is not open.

    Fully crossed (or ``n_items`` empty): every item the study's judges rate, in the
    judge's own seeded order. Exactly k per item: ``n_items`` items taken from those
    with the fewest *live* judges — assigned items that were done or are still held
    (a timed-out participant's unfinished items were deleted by
    :func:`assignment_release_unfinished`, so they count again as free). The design
    row is locked, so two participants arriving together see each other's items.
    """
    with transaction.atomic():
        design = JudgingDesign.objects.select_for_update().filter(study=study).first()
        if design is None or not design.is_frozen:
            return None
        existing = Assignment.objects.filter(study=study, judge=judge).first()
        if existing is not None:
            return existing
        return protocol_for_design(design).assignment_for_participant(
            study=study, design=design, judge=judge, n_items=n_items
        )


@transaction.atomic
def assignment_release_unfinished(*, assignment: Assignment) -> int:
    """Give back the items ``assignment`` has not rated yet (its judge left); return how many.

    Rated items and their judgments stay. The released rows are deleted, so the next
    participant to arrive can be given those items (k per item keeps balancing).
    """
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    return protocol_for_study(study=Study(pk=assignment.study_id)).assignment_release_unfinished(assignment=assignment)
