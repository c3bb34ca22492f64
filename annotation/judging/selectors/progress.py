"""The researcher's view of a study's judging: progress per judge and per system."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

from django.contrib.auth.models import User
from django.core.cache import cache
from django.db.models import Count, Max, Q, Sum

from annotation.enums import Role, SystemKind
from annotation.models import Candidate, Study

from ..models import (
    Assignment,
    AssignmentItem,
    ComparisonItem,
    EsaItem,
    EsaJudgment,
    Judgment,
    RankingItem,
    RankingJudgment,
)
from ..protocols.registry import study_judgments_exist
from .exclusions import judges_excluded


def study_has_judgments(*, study: Study) -> bool:
    """Whether any protocol's table holds a judgment of ``study`` (the registry asks every unit)."""
    return study_judgments_exist(study=study)


#: How long the assigned counts stay cached under one assignment stamp (they are read again
#: whenever the stamp moves; this only bounds what a forgotten stamp keeps).
ASSIGNED_TTL_SECONDS = 3600


def assigned_per_candidate(*, study: Study) -> dict[int, int]:
    """Candidate id → how many assignments hold it (absolute ratings' assignment items).

    Counting them reads every assigned row of the study (175,000 at 500 judges: about 150 ms
    of PostgreSQL). They change only with the assignments, whose stamp (how many, their last
    change, their items) every protocol keeps when items are written, imported or released,
    so the counts are cached under that stamp and read once per change, not once per refresh
    of a dashboard or a progress page.
    """
    stamp = Assignment.objects.filter(study=study).aggregate(
        n=Count("id"), last=Max("updated_at"), items=Sum("n_items")
    )
    digest = hashlib.sha256(json.dumps(stamp, sort_keys=True, default=str).encode()).hexdigest()[:24]
    key = f"paraeval:assigned-per-candidate:{study.pk}:{digest}"
    found = cache.get(key)
    if found is None:
        found = dict(
            AssignmentItem.objects.filter(assignment__study=study)
            .values("candidate_id")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("candidate_id", "n")
        )
        cache.set(key, found, timeout=ASSIGNED_TTL_SECONDS)
    return found


def done_per_assignment(*, study: Study) -> dict[int, int]:
    """Assignment id → its rated items (absolute ratings), from the index of rated rows."""
    return dict(
        AssignmentItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("assignment_id", "n")
    )


def done_per_candidate(*, study: Study) -> dict[int, int]:
    """Candidate id → how many judges have rated it (first submissions), from the same index."""
    return dict(
        AssignmentItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("candidate_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("candidate_id", "n")
    )


def study_progress(*, study: Study) -> dict:
    """Per judge: done/total and last submission; per system: items and latest judgments.

    Returns ``{"judges": [...], "systems": [...], "done": n, "total": n, "judgments": n,
    "revisions": n, "status": str}``.
    """
    judges = []
    excluded = judges_excluded(study=study)
    per_assignment = list(Assignment.objects.filter(study=study).select_related("judge").order_by("judge__username"))
    item_done = done_per_assignment(study=study)
    last = dict(
        Judgment.objects.filter(study=study)
        .values("judge_id")
        .annotate(t=Max("submitted_at"))
        .order_by()
        .values_list("judge_id", "t")
    )
    # Side-by-side studies count answered pairs (their assignments hold pairs, not items).
    cmp_done = dict(
        ComparisonItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("assignment_id", "n")
    )
    # ESA and ranking studies likewise count annotated ESA items and ranked sets.
    esa_done = dict(
        EsaItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("assignment_id", "n")
    )
    rank_done = dict(
        RankingItem.objects.filter(assignment__study=study, done_at__isnull=False)
        .values("assignment_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("assignment_id", "n")
    )
    for model in (EsaJudgment, RankingJudgment):
        last.update(
            model.objects.filter(study=study)
            .values("judge_id")
            .annotate(t=Max("submitted_at"))
            .order_by()
            .values_list("judge_id", "t")
        )
    for a in per_assignment:
        done = item_done.get(a.pk, 0) + cmp_done.get(a.pk, 0) + esa_done.get(a.pk, 0) + rank_done.get(a.pk, 0)
        judges.append(
            {
                "judge": a.judge.username,
                "done": done,
                "total": a.n_items,
                "percent": int(100 * done / a.n_items) if a.n_items else 0,
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
    per_candidate = assigned_per_candidate(study=study)
    system_of = dict(Candidate.objects.filter(system__study=study).values_list("id", "system__name"))
    assigned: Counter[str] = Counter()
    for candidate_id, n in per_candidate.items():
        assigned[system_of[candidate_id]] += n
    rated = dict(
        Judgment.objects.filter(study=study, is_latest=True)
        .values("item__candidate__system__name")
        .annotate(n=Count("id"))
        .order_by()
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
