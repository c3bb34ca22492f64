"""What the open-job tests share (test_open_job*.py): a study's controls and judges' orders by
stable keys, the counts of rows opening writes, and what opening in one transaction builds.
The three_judges fixture is in conftest.py."""

from __future__ import annotations

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.services.opening import study_judging_open, study_judging_reset
from annotation.models import Candidate, System


def snapshot(study):
    """Controls and every judge's order, by stable keys (not database ids)."""
    controls = sorted(
        Candidate.objects.filter(original__study=study, system__name__startswith="control:").values_list(
            "original__external_id", "system__name", "text"
        )
    )
    orders = {}
    for a in Assignment.objects.filter(study=study).select_related("judge"):
        orders[a.judge.username] = (
            a.seed,
            a.joined_late,
            list(
                AssignmentItem.objects.filter(assignment=a)
                .order_by("position")
                .values_list("candidate__original__external_id", "candidate__system__name")
            ),
        )
    return controls, orders


def counts(study):
    return (
        System.objects.filter(study=study, name__startswith="control:").count(),
        Candidate.objects.filter(original__study=study, system__name__startswith="control:").count(),
        Assignment.objects.filter(study=study).count(),
        AssignmentItem.objects.filter(assignment__study=study).count(),
    )


def reference(study):
    """What opening in one transaction builds for this study (then undone)."""
    summary = study_judging_open(study=study)
    snap = snapshot(study)
    study_judging_reset(study=study)
    return summary, snap
