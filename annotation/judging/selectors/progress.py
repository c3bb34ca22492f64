"""The researcher's view of a study's judging: progress per judge and per system."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import Count, Max, Q

from annotation.enums import Role, SystemKind
from annotation.models import Study

from ..models import (
    Assignment,
    AssignmentItem,
    ComparisonItem,
    ComparisonJudgment,
    EsaItem,
    EsaJudgment,
    Judgment,
    RankingItem,
    RankingJudgment,
)
from .exclusions import judges_excluded


def study_has_judgments(*, study: Study) -> bool:
    return (
        Judgment.objects.filter(study=study).exists()
        or ComparisonJudgment.objects.filter(study=study).exists()
        or EsaJudgment.objects.filter(study=study).exists()
        or RankingJudgment.objects.filter(study=study).exists()
    )


def study_progress(*, study: Study) -> dict:
    """Per judge: done/total and last submission; per system: items and latest judgments.

    Returns ``{"judges": [...], "systems": [...], "done": n, "total": n, "judgments": n,
    "revisions": n, "status": str}``.
    """
    judges = []
    excluded = judges_excluded(study=study)
    per_assignment = (
        Assignment.objects.filter(study=study)
        .select_related("judge")
        .annotate(done=Count("items", filter=Q(items__done_at__isnull=False)))
        .order_by("judge__username")
    )
    last = dict(
        Judgment.objects.filter(study=study)
        .values("judge_id")
        .annotate(t=Max("submitted_at"))
        .values_list("judge_id", "t")
    )
    # Side-by-side studies count answered pairs (their assignments hold pairs, not items).
    cmp_done = dict(
        ComparisonItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .values_list("assignment_id", "n")
    )
    # ESA and ranking studies likewise count annotated ESA items and ranked sets.
    esa_done = dict(
        EsaItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .values_list("assignment_id", "n")
    )
    rank_done = dict(
        RankingItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .values_list("assignment_id", "n")
    )
    for model in (EsaJudgment, RankingJudgment):
        last.update(
            model.objects.filter(study=study)
            .values("judge_id")
            .annotate(t=Max("submitted_at"))
            .values_list("judge_id", "t")
        )
    for a in per_assignment:
        a.done += cmp_done.get(a.pk, 0) + esa_done.get(a.pk, 0) + rank_done.get(a.pk, 0)
        judges.append(
            {
                "judge": a.judge.username,
                "done": a.done,
                "total": a.n_items,
                "percent": int(100 * a.done / a.n_items) if a.n_items else 0,
                "last_submitted_at": last.get(a.judge_id),
                "excluded": a.judge.username in excluded,
                "joined_late": a.joined_late,
            }
        )
    assigned_users = {a.judge_id for a in per_assignment}
    waiting = list(
        User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE)
        .exclude(pk__in=assigned_users)
        .distinct()
        .order_by("username")
        .values_list("username", flat=True)
    )
    assigned = dict(
        AssignmentItem.objects.filter(assignment__study=study)
        .values("candidate__system__name")
        .annotate(n=Count("id"))
        .values_list("candidate__system__name", "n")
    )
    rated = dict(
        Judgment.objects.filter(study=study, is_latest=True)
        .values("item__candidate__system__name")
        .annotate(n=Count("id"))
        .values_list("item__candidate__system__name", "n")
    )
    systems = []
    for name, kind in study.systems.order_by("kind", "name").values_list("name", "kind"):
        systems.append(
            {
                "system": name,
                "kind": kind,
                "is_control": kind in SystemKind.control_kinds(),
                "assigned": assigned.get(name, 0),
                "rated": rated.get(name, 0),
            }
        )
    totals = Judgment.objects.filter(study=study).aggregate(n=Count("id"), latest=Count("id", filter=Q(is_latest=True)))
    return {
        "status": study.status,
        "judges": judges,
        "judges_without_assignment": waiting,
        "systems": systems,
        "done": sum(j["done"] for j in judges),
        "total": sum(j["total"] for j in judges),
        "judgments": totals["latest"],
        "revisions": totals["n"] - totals["latest"],
    }
