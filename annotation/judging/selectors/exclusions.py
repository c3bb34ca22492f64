"""Which judges are left out of the statistics: excluded by a researcher (with the
history of decisions) or screened out."""

from __future__ import annotations

from annotation.models import Study

from ..models import Assignment, JudgeExclusion


def judges_excluded(*, study: Study) -> set[str]:
    """Usernames of judges whose latest exclusion decision is 'excluded', and of judges
    screened out (training, attention checks, automatic QC: never counted)."""
    state: dict[str, bool] = {}
    for username, excluded in (
        JudgeExclusion.objects.filter(study=study)
        .order_by("judge__username", "-created_at", "-id")
        .values_list("judge__username", "excluded")
    ):
        state.setdefault(username, excluded)
    return {u for u, e in state.items() if e} | judges_screened_out_names(study=study)


def judges_screened_out_names(*, study: Study) -> set[str]:
    return set(
        Assignment.objects.filter(study=study, screened_out_at__isnull=False).values_list("judge__username", flat=True)
    )


def judge_exclusion_history(*, study: Study) -> list[JudgeExclusion]:
    return list(
        JudgeExclusion.objects.filter(study=study).select_related("judge", "decided_by").order_by("-created_at", "-id")
    )
