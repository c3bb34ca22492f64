"""Reads: what an annotator may see, what a study's alignment data holds, the gold.

Rows become :class:`metrics.core.alignment.Alignment` values here, so that the
services and views never read the link JSON themselves.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet, Sum

from annotation.enums import Role
from annotation.models import Study, StudyMembership
from metrics.core.alignment.model import Alignment

from .enums import AssignmentStatus
from .models import (
    AlignerRun,
    AlignmentAssignment,
    AlignmentConfig,
    AlignmentGroup,
    AlignmentPair,
    AlignmentSystem,
    ScoringRun,
    SystemAlignment,
)


def links_to_alignment(pair: AlignmentPair, row) -> Alignment:
    """The ``Alignment`` of a row with ``sure``/``possible`` over ``pair``'s tokens."""
    return Alignment(
        tuple(pair.tokens1),
        tuple(pair.tokens2),
        frozenset(tuple(x) for x in row.sure),
        frozenset(tuple(x) for x in row.possible),
    )


def alignment_config_get(*, study: Study) -> AlignmentConfig:
    """The study's settings (defaults when none were saved; nothing is written)."""
    config = AlignmentConfig.objects.filter(study=study).select_related("prefill_system").first()
    return config or AlignmentConfig(study=study)


def pairs_for_study(*, study: Study) -> QuerySet[AlignmentPair]:
    return AlignmentPair.objects.filter(study=study).select_related("group").order_by("position")


def pair_tokens_for_study(*, study: Study) -> list[tuple[list[str], list[str]]]:
    """The token sequences of the study's pairs, in position order (line k of a Pharaoh file)."""
    return [(t1, t2) for t1, t2 in pairs_for_study(study=study).values_list("tokens1", "tokens2")]


def systems_for_study(*, study: Study) -> QuerySet[AlignmentSystem]:
    return AlignmentSystem.objects.filter(study=study).annotate(n_alignments=Count("alignments")).order_by("name")


def annotators_of_study(*, study: Study) -> QuerySet[User]:
    return (
        User.objects.filter(study_memberships__study=study, study_memberships__role=Role.ANNOTATOR)
        .distinct()
        .order_by("username")
    )


def user_is_study_annotator(*, study: Study, user: User) -> bool:
    return StudyMembership.objects.filter(study=study, user=user, role=Role.ANNOTATOR).exists()


def study_alignment_summary(*, study: Study) -> dict:
    """Counts for the researcher's page: groups, pairs, the largest grid, assignments by status."""
    pairs = AlignmentPair.objects.filter(study=study)
    shapes = [(len(a), len(b)) for a, b in pairs.values_list("tokens1", "tokens2")]
    by_status = dict(
        AlignmentAssignment.objects.filter(pair__study=study)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("status", "n")
    )
    return {
        "groups": AlignmentGroup.objects.filter(study=study).count(),
        "pairs": len(shapes),
        "largest": max(shapes, key=lambda s: s[0] * s[1], default=(0, 0)),
        "tokens": sum(a + b for a, b in shapes),
        "assigned": sum(by_status.values()),
        "submitted": by_status.get(AssignmentStatus.SUBMITTED, 0),
        "in_progress": by_status.get(AssignmentStatus.IN_PROGRESS, 0),
        "pairs_with_gold": pairs.filter(assignments__status=AssignmentStatus.SUBMITTED).distinct().count(),
    }


def annotator_progress(*, study: Study) -> list[dict]:
    """Per annotator of the study: assigned, submitted, mean active seconds of submitted pairs."""
    rows = (
        AlignmentAssignment.objects.filter(pair__study=study)
        .values("annotator_id", "annotator__username")
        .annotate(
            assigned=Count("id"),
            submitted=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
            active=Sum("active_seconds", filter=Q(status=AssignmentStatus.SUBMITTED)),
        )
        .order_by("annotator__username")
    )
    out = []
    for r in rows:
        mean = (r["active"] or 0) / r["submitted"] if r["submitted"] else None
        out.append(
            {
                "user_id": r["annotator_id"],
                "username": r["annotator__username"],
                "assigned": r["assigned"],
                "submitted": r["submitted"],
                "mean_active_seconds": mean,
            }
        )
    return out


# ----------------------------------------------------------------------------- annotators


def assignments_for_annotator(*, user: User) -> QuerySet[AlignmentAssignment]:
    """The user's assignments in studies where they are (still) an annotator, in task order.

    Studies where the user is also a judge are left out until a researcher removes
    one of the two roles (``annotation.selectors.user_role_conflict``).
    """
    from annotation.selectors import study_ids_with_role_conflict

    return (
        AlignmentAssignment.objects.filter(
            annotator=user,
            pair__study__memberships__user=user,
            pair__study__memberships__role=Role.ANNOTATOR,
        )
        .exclude(pair__study_id__in=study_ids_with_role_conflict(user=user))
        .select_related("pair", "pair__study", "pair__group")
        .distinct()
        .order_by("pair__study__name", "pair__position")
    )


def pair_numbers_for_annotator(*, user: User) -> dict[int, int]:
    """Assignment id → the number annotators see for its pair: its place (from 1) in their own list for that study.

    Annotators never see the researcher's pair ids: those are chosen freely and
    often say where a sentence comes from ("John 1:1 synonyms"), which would let an
    annotator who also judges tell systems apart.
    """
    numbers: dict[int, int] = {}
    counters: Counter = Counter()
    for pk, study_id in assignments_for_annotator(user=user).values_list("pk", "pair__study_id"):
        counters[study_id] += 1
        numbers[pk] = counters[study_id]
    return numbers


def assignment_for_annotator(*, assignment_id: int, user: User) -> AlignmentAssignment | None:
    """The assignment if it is ``user``'s and they are still an annotator of its study, else None."""
    return assignments_for_annotator(user=user).filter(pk=assignment_id).first()


def assignment_next_for_annotator(
    *, user: User, after: AlignmentAssignment | None = None
) -> AlignmentAssignment | None:
    """The next unsubmitted assignment: after ``after`` in the same study first, then any."""
    open_ = assignments_for_annotator(user=user).exclude(status=AssignmentStatus.SUBMITTED)
    if after is not None:
        nxt = open_.filter(pair__study=after.pair.study, pair__position__gt=after.pair.position).first()
        if nxt is not None:
            return nxt
        return open_.exclude(pk=after.pk).first()
    return open_.first()


def automatic_alignment_for(*, assignment: AlignmentAssignment) -> Alignment | None:
    """The alignment that 'Reset to automatic' restores: the assignment's pre-fill system's."""
    if assignment.prefill_system_id is None:
        return None
    row = SystemAlignment.objects.filter(system_id=assignment.prefill_system_id, pair=assignment.pair).first()
    return (
        links_to_alignment(assignment.pair, row)
        if row
        else Alignment(tuple(assignment.pair.tokens1), tuple(assignment.pair.tokens2))
    )


# ----------------------------------------------------------------------------- alignments of a study


def system_alignments(*, system: AlignmentSystem) -> dict[int, Alignment]:
    """pair id → the system's alignment."""
    rows = SystemAlignment.objects.filter(system=system).select_related("pair")
    return {r.pair_id: links_to_alignment(r.pair, r) for r in rows}


def submitted_alignments(*, study: Study) -> dict[int, dict[int, Alignment]]:
    """pair id → {annotator id → submitted alignment}."""
    out: dict[int, dict[int, Alignment]] = defaultdict(dict)
    rows = AlignmentAssignment.objects.filter(pair__study=study, status=AssignmentStatus.SUBMITTED).select_related(
        "pair"
    )
    for r in rows:
        out[r.pair_id][r.annotator_id] = links_to_alignment(r.pair, r)
    return dict(out)


def combine_gold(alignments: list[Alignment]) -> Alignment:
    """One gold alignment from the annotators' alignments of a pair.

    One annotator: theirs. Several: Och & Ney's (2003, §5) combination — sure =
    the cells every annotator marked sure, possible = every other cell anyone
    linked — so disagreement lowers a link to possible instead of dropping it.
    """
    if len(alignments) == 1:
        return alignments[0]
    sure = frozenset.intersection(*(a.sure for a in alignments))
    anything = frozenset.union(*(a.links for a in alignments))
    first = alignments[0]
    return Alignment(first.tokens1, first.tokens2, sure, anything - sure)


def gold_alignments(*, study: Study) -> dict[int, Alignment]:
    """pair id → gold alignment, for the pairs with at least one submitted alignment."""
    return {pid: combine_gold([by[k] for k in sorted(by)]) for pid, by in submitted_alignments(study=study).items()}


def scoring_runs_for_study(*, study: Study, limit: int = 20) -> QuerySet[ScoringRun]:
    return ScoringRun.objects.filter(study=study).select_related("system", "created_by").order_by("-created_at")[:limit]


def aligner_runs_for_study(*, study: Study, limit: int = 5) -> QuerySet[AlignerRun]:
    return AlignerRun.objects.filter(study=study).order_by("-created_at")[:limit]
