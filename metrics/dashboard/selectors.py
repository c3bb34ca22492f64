"""Reads of the dashboard: the study's version stamp and the live (cheap) figures.

The live figures are counts the database answers with a few aggregates: progress per
judge and per item, seats and join links, active time, the projection of finish and
cost, and quality as it comes (each judge's QC verdict with its control tests, attention
checks, screen-outs with the rule that fired). They are computed by the worker with the
heavy answers and cached with them (:mod:`metrics.dashboard.services`), never per poll.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal
from typing import cast

from django.db.models import Count, Max, Min, Q, Sum
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.enums import JudgesMode
from annotation.judging.models import Assignment, AttentionCheck
from annotation.judging.protocols.registry import protocol_for_study
from annotation.judging.selectors.design import design_for_study
from annotation.judging.selectors.progress import assigned_per_item, done_per_item, study_progress
from annotation.judging.selectors.qc import judge_qc, judgments_fingerprint
from annotation.models import JoinLink, Participant, Study
from metrics.reports.selectors import current_metric_run_ids

from .models import Dashboard

#: The window the judging pace is measured over (judgments per hour) for the projection.
PACE_WINDOW = timedelta(minutes=30)


def dashboard_for_study(*, study: Study) -> Dashboard | None:
    return Dashboard.objects.filter(study=study).first()


def dashboard_version(*, study: Study) -> str:
    """A stamp that changes when anything the dashboard shows changes: judgments (added,
    revised, excluded, screened out: :func:`judgments_fingerprint`), assignments and released
    items, attention answers, participants and join links, and finished metric runs."""
    # Items are counted through their assignments' n_items (kept by every protocol when items are
    # written, imported or released, with updated_at): counting the item rows themselves scanned
    # every assigned item of the study (175,000 at 500 judges: 250 ms of PostgreSQL per stamp).
    parts = {
        "judgments": judgments_fingerprint(study=study),
        "assignments": list(
            Assignment.objects.filter(study=study)
            .aggregate(n=Count("id"), last=Max("updated_at"), items=Sum("n_items"))
            .values()
        ),
        "attention": AttentionCheck.objects.filter(assignment__study=study, answered_at__isnull=False).count(),
        "participants": list(
            Participant.objects.filter(study=study).aggregate(n=Count("id"), last=Max("updated_at")).values()
        ),
        "links": list(JoinLink.objects.filter(study=study).aggregate(n=Count("id"), last=Max("updated_at")).values()),
        "runs": current_metric_run_ids(study=study),
        "status": study.status,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _coverage(study: Study, k: int | None) -> dict:
    """Per item (a candidate, a ranked set, a pair: as the study's protocol names them): how
    many judges have answered it, against k (fully crossed: every judge)."""
    done = done_per_item(study=study)
    assigned = assigned_per_item(study=study)
    n_items = len(assigned)
    target = k or (Assignment.objects.filter(study=study).count() or 1)
    histogram = Counter(min(done.get(c, 0), target) for c in assigned)
    reached = sum(min(done.get(c, 0), target) for c in assigned)
    return {
        "items": n_items,
        "k": target,
        "items_complete": sum(1 for c in assigned if done.get(c, 0) >= target),
        "coverage": round(reached / (n_items * target), 4) if n_items else 0.0,
        "histogram": [{"judges": j, "items": histogram.get(j, 0)} for j in range(target + 1)],
    }


def _links(study: Study) -> list[dict]:
    now = timezone.now()
    out = []
    for link in (
        JoinLink.objects.filter(study=study)
        .annotate(
            n=Count("participants"),
            live=Count("participants", filter=Q(participants__timed_out_at__isnull=True)),
            completed=Count("participants", filter=Q(participants__completed_at__isnull=False)),
        )
        .order_by("created_at")
    ):
        state = (
            "closed"
            if link.closed_at
            else "ended"
            if link.ends_at and link.ends_at <= now
            else "full"
            if link.max_participants is not None and link.live >= link.max_participants
            else "open"
        )
        out.append(
            {
                "id": link.pk,
                "label": link.label or f"{link.get_platform_display()} link",
                "platform": link.platform,
                "role": link.role,
                "state": state,
                "seats": link.max_participants,
                "taken": link.live,
                "joined": link.n,
                "completed": link.completed,
                "seats_left": None if link.max_participants is None else max(0, link.max_participants - link.live),
            }
        )
    return out


def _time_and_pace(study: Study) -> dict:
    latest = protocol_for_study(study=study).latest_judgments(study=study)
    # No None (excluded in the query), which django-stubs cannot tell from the nullable field.
    active = cast(
        list[float],
        list(latest.exclude(active_seconds__isnull=True).order_by().values_list("active_seconds", flat=True)),
    )
    span = latest.aggregate(first=Min("submitted_at"), last=Max("submitted_at"))
    since = timezone.now() - PACE_WINDOW
    recent = latest.filter(submitted_at__gte=since).count()
    return {
        "active_seconds_median": round(statistics.median(active), 2) if active else None,
        "active_seconds_mean": round(statistics.fmean(active), 2) if active else None,
        "active_hours_total": round(sum(active) / 3600, 3) if active else 0.0,
        "first_judgment_at": span["first"],
        "last_judgment_at": span["last"],
        "judgments_last_window": recent,
        "window_minutes": int(PACE_WINDOW.total_seconds() // 60),
    }


def _projection(*, done: int, total: int, pace: dict, rate: Decimal, currency: str, now: datetime) -> dict:
    """Finish time at the recent pace (judgments in the last window, else since the first one)
    and cost at the per-item rate: spent (done × rate) and projected (total × rate)."""
    per_hour = None
    if pace["judgments_last_window"]:
        per_hour = pace["judgments_last_window"] / (PACE_WINDOW.total_seconds() / 3600)
    elif (
        pace["first_judgment_at"] and pace["last_judgment_at"] and pace["last_judgment_at"] > pace["first_judgment_at"]
    ):
        hours = (pace["last_judgment_at"] - pace["first_judgment_at"]).total_seconds() / 3600
        per_hour = done / hours if hours > 0 else None
    left = max(0, total - done)
    finish = now + timedelta(hours=left / per_hour) if per_hour and left else (now if not left and total else None)
    return {
        "per_hour": round(per_hour, 1) if per_hour else None,
        "items_left": left,
        "finish_at": finish,
        "rate": str(rate),
        "currency": currency,
        "cost_spent": str((rate * done).quantize(Decimal("0.01"))),
        "cost_projected": str((rate * total).quantize(Decimal("0.01"))),
    }


def dashboard_qc(*, study: Study) -> list[dict]:
    """Each judge's QC verdict, control tests (p-values), attention checks and screen-out rule
    (the worker computes them with the answers)."""
    attention: dict[str, dict] = {}
    for name, passed in AttentionCheck.objects.filter(assignment__study=study, answered_at__isnull=False).values_list(
        "assignment__judge__username", "passed"
    ):
        row = attention.setdefault(name, {"answered": 0, "failed": 0})
        row["answered"] += 1
        row["failed"] += passed is False
    rows = []
    for r in judge_qc(study=study):
        qc = r["qc"]
        # The verdict of the judge's judgments, whatever the protocol (judge_qc asks it).
        verdict = "screened out" if r["screened_out"] else "excluded" if r["excluded"] else r["verdict"]
        rows.append(
            {
                "judge": r["judge"],
                "verdict": verdict,
                "excluded": r["excluded"],
                "flags": r["flags"],
                "controls": qc.n_controls if qc else r["own_controls"],
                "tests": [
                    {
                        "name": t.name,
                        "criterion": t.criterion,
                        "pvalue": t.pvalue,
                        "passed": t.passed,
                        "n_control": t.n_control,
                    }
                    for t in qc.tests
                ]
                if qc
                else [],
                "attention": attention.get(r["judge"], {"answered": 0, "failed": 0}),
                "screened_out": (
                    {"rule": r["screened_out"][0], "reason": r["screened_out"][1]} if r["screened_out"] else None
                ),
            }
        )
    return rows


def dashboard_live(
    *, study: Study, rate: Decimal = Decimal("0"), currency: str = "GBP", qc: list[dict] | None = None
) -> dict:
    """Everything but the heavy answers (see the module docstring). JSON-able after ``jsonable``.

    ``qc``: the judges' QC rows to show, computed with the answers (the worker passes the last
    ones between two computations of the answers); None computes them now."""
    now = timezone.now()
    progress = study_progress(study=study)
    design = design_for_study(study=study)
    k = design.judges_per_item if design and design.judges_mode == JudgesMode.K_PER_ITEM else None
    per_judge = protocol_for_study(study=study).latest_by_judge(study=study)
    judges = [
        {
            **j,
            "judgments": per_judge.get(j["judge"], (0, None))[0],
            "active_seconds": round(per_judge.get(j["judge"], (0, None))[1] or 0.0, 1),
        }
        for j in progress["judges"]
    ]
    pace = _time_and_pace(study)
    genuine = [s for s in progress["systems"] if not s["is_control"]]
    return {
        "status": progress["status"],
        "protocol": design.protocol if design else None,
        "totals": {
            "done": progress["done"],
            "total": progress["total"],
            "judgments": progress["judgments"],
            "revisions": progress["revisions"],
            "judges": len(judges),
            "waiting": progress["judges_without_assignment"],
        },
        "judges": judges,
        "systems": genuine,
        "coverage": _coverage(study, k),
        "links": _links(study),
        "time": pace,
        "projection": _projection(
            done=progress["done"], total=progress["total"], pace=pace, rate=rate, currency=currency, now=now
        ),
        "qc": dashboard_qc(study=study) if qc is None else qc,
        "controls_systems": [s["system"] for s in progress["systems"] if s["kind"] in SystemKind.control_kinds()],
    }
