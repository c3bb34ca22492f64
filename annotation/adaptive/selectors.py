"""Reads of adaptive allocation."""

from __future__ import annotations

from annotation.models import Study

from .models import AdaptiveAllocation


def adaptive_for_study(*, study: Study) -> AdaptiveAllocation | None:
    return AdaptiveAllocation.objects.filter(study=study).first()


def adaptive_summary(*, study: Study) -> dict:
    """What the dashboard shows: the setting, the bound on P(ranking wrong), the stop."""
    a = adaptive_for_study(study=study)
    if a is None:
        return {"enabled": False}
    return {
        "enabled": a.enabled,
        "level": a.level,
        "stop_when_stable": a.stop_when_stable,
        "min_judgments": a.min_judgments,
        "min_judges": a.min_judges,
        "max_judge_share": a.max_judge_share,
        "window": a.window,
        "criterion": a.criterion,
        "wrong_bound": a.wrong_bound,
        "judgments_seen": a.judgments_seen,
        "judges_seen": a.judges_seen,
        "largest_judge_share": a.largest_judge_share,
        "refreshed_at": a.refreshed_at.isoformat() if a.refreshed_at else None,
        "stopped_at": a.stopped_at.isoformat() if a.stopped_at else None,
        "stop_reason": a.stop_reason,
    }
