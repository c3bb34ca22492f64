"""Adaptive allocation, the worker's side: recompute a study's per-system tallies and priorities
(:func:`adaptive_refresh`, run by the task at most every ``REFRESH_SECONDS``), and stop the study's
judging when the ranking is stable (:func:`adaptive_stop`)."""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from annotation.enums import SystemKind
from annotation.judging.models import Assignment
from annotation.judging.protocols.registry import protocol_for_study
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.models import Study, System
from metrics.core.adaptive import SystemTally, ranking_wrong_bound, system_priorities

from .publication import adaptive_publish

#: A judge who judged (or opened the instructions) this recently may be rating the item on their
#: screen when the study stops: the stop keeps that one item so that their judgment is stored.
STOP_GRACE_SECONDS = 600

#: Passes of the stop's release over items that a submission held (they are done after it).
RELEASE_PASSES = 3


@dataclass(frozen=True)
class Tallies:
    """What the refresh reads from the judgments that count."""

    systems: dict[str, SystemTally]
    judgments: int  # genuine judgments counted (latest revisions)
    per_judge: Counter  # judge id → judgments counted

    @property
    def judges(self) -> int:
        return len(self.per_judge)

    @property
    def largest_share(self) -> float | None:
        total = sum(self.per_judge.values())
        return max(self.per_judge.values()) / total if total else None


def _tallies(study: Study, criterion: str) -> Tallies:
    """Per genuine system: (n, Σ score, Σ score²) of the latest judgments on ``criterion``, from
    the judges who count: those a researcher excluded and those screened out are left out, as
    every statistic of the study leaves them out."""
    systems = list(
        System.objects.filter(study=study).exclude(kind__in=SystemKind.control_kinds()).values_list("name", flat=True)
    )
    acc = {s: [0, 0.0, 0.0] for s in systems}
    n_all = 0
    per_judge: Counter = Counter()
    judgments = protocol_for_study(study=study).judgments_of_study(study=study)  # a unit with adaptive_allocation
    rows = judgments.filter(is_latest=True).exclude(item__candidate__system__kind__in=SystemKind.control_kinds())
    excluded = judges_excluded(study=study)
    if excluded:
        rows = rows.exclude(judge__username__in=excluded)
    for system, values, judge in rows.values_list("item__candidate__system__name", "values", "judge_id").iterator(
        chunk_size=5000
    ):
        n_all += 1
        per_judge[judge] += 1
        value = (values or {}).get(criterion)
        if system in acc and isinstance(value, int | float) and not isinstance(value, bool):
            a = acc[system]
            a[0] += 1
            a[1] += float(value)
            a[2] += float(value) ** 2
    return Tallies({s: SystemTally(int(n), t, q) for s, (n, t, q) in acc.items()}, n_all, per_judge)


def stop_held_because(*, allocation, tallies: Tallies) -> str:
    """Why a stable ranking may not stop the study yet ("": it may): too few judgments, too few
    judges, or one judge holding too large a share of the evidence."""
    if tallies.judgments < allocation.min_judgments:
        return f"{tallies.judgments} of the {allocation.min_judgments} judgments needed"
    if tallies.judges < allocation.min_judges:
        return f"{tallies.judges} of the {allocation.min_judges} judges needed"
    share = tallies.largest_share
    if share is not None and share > allocation.max_judge_share:
        return f"one judge gave {share:.0%} of the judgments (at most {allocation.max_judge_share:.0%})"
    return ""


def adaptive_refresh(*, study: Study) -> dict:
    """Recompute the study's priorities and ranking-wrong bound; stop the study when it is stable.

    Returns ``{"priorities", "wrong_bound", "judgments", "judges", "stopped", "held"}``. The stop
    needs the bound at most the level, ``min_judgments`` judgments, ``min_judges`` judges and no
    judge above ``max_judge_share`` of them (``held`` says which is missing). Stopping releases
    every judge's unrated items (:func:`adaptive_stop`): their judgments stay, judges and
    participants see that they have finished.
    """
    from .models import AdaptiveAllocation

    allocation = AdaptiveAllocation.objects.get(study=study)
    tallies = _tallies(study, allocation.criterion)
    n = tallies.judgments
    priorities = system_priorities(tallies.systems)
    bound = ranking_wrong_bound(tallies.systems)
    held = stop_held_because(allocation=allocation, tallies=tallies)
    stable = (
        allocation.enabled
        and allocation.stop_when_stable
        and allocation.stopped_at is None
        and bound <= allocation.level
        and not held
    )
    AdaptiveAllocation.objects.filter(pk=allocation.pk).update(
        priorities={s: (1e12 if math.isinf(p) else p) for s, p in priorities.items()},
        wrong_bound=bound,
        judgments_seen=n,
        judges_seen=tallies.judges,
        largest_judge_share=tallies.largest_share,
        refreshed_at=timezone.now(),
        updated_at=timezone.now(),
    )
    stopped = False
    if stable:
        stopped = adaptive_stop(
            study=study,
            reason=(
                f"the ranking is stable: P(wrong) ≤ {bound:.3g} ≤ {allocation.level:g}"
                f" after {n} judgments by {tallies.judges} judges"
            ),
        ).stopped
    adaptive_publish()
    return {
        "priorities": priorities,
        "wrong_bound": bound,
        "judgments": n,
        "judges": tallies.judges,
        "stopped": stopped,
        "held": held,
    }


@dataclass(frozen=True)
class StopResult:
    stopped: bool  # False: the study had stopped already (another refresh stopped it)
    released: int  # unrated items given back
    left: int  # unrated items kept: on an active judge's screen, or still being submitted


def adaptive_stop(*, study: Study, reason: str) -> StopResult:
    """Stop the study's judging here: mark it stopped, then release every judge's unrated items.

    Safe while judges submit (the stop of issue 38 broke a foreign key and deadlocked a judge):
    the mark is one conditional update (two refreshes stop once), published at once so that
    the hot path stops reordering; the release is one short transaction per assignment that
    never waits on an item (:meth:`~annotation.judging.protocols.base.JudgingProtocol.items_release_unrated`).
    A judge active in the last :data:`STOP_GRACE_SECONDS` keeps the item on their screen, and an
    item being submitted is skipped: both judgments are stored, and the judge has finished after
    them. Items skipped because a submission held them are tried again a few times.
    """
    from .models import AdaptiveAllocation

    now = timezone.now()
    claimed = AdaptiveAllocation.objects.filter(study=study, stopped_at__isnull=True).update(
        stopped_at=now, stop_reason=reason, updated_at=now
    )
    if not claimed:
        return StopResult(False, 0, 0)
    adaptive_publish()  # the hot path stops reordering this study's items
    unit = protocol_for_study(study=study)
    since = now - timedelta(seconds=STOP_GRACE_SECONDS)
    released, left = 0, {}
    pending = list(Assignment.objects.filter(study=study).order_by("pk"))
    for attempt in range(RELEASE_PASSES):
        if attempt:
            time.sleep(0.2 * attempt)  # let the submissions that held items commit
        retry = []
        for assignment in pending:
            active = (assignment.instructions_seen_at is not None and assignment.instructions_seen_at >= since) or (
                (last := unit.last_judgment_at(assignment=assignment)) is not None and last >= since
            )
            n, unrated = unit.items_release_unrated(assignment=assignment, keep_next=active)
            released += n
            left[assignment.pk] = unrated
            if unrated > int(active):
                retry.append(assignment)
        pending = retry
        if not pending:
            break
    return StopResult(True, released, sum(left.values()))
