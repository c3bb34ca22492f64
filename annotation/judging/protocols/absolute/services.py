"""The absolute protocol's assignments: every judge's items at opening, a judge added
late, a join-link participant, and giving back a timed-out participant's items.

Items are candidates (controls included) keyed by (original id, system name), so the
same seed reproduces the same orders after a reset. Called through the protocol unit
(:mod:`.unit`) by the shared services, inside their transaction and locks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils.translation import gettext

from annotation.judging.services.opening import judges_per_item, study_items
from annotation.judging.services.queueing import after_judgment
from annotation.models import Study
from metrics.core.assignment import derive_seed, late_judge_items, order_items, plan_assignments

from ... import scales
from ...defaults import default_criteria
from ...enums import JudgesMode, JudgmentSource
from ...errors import JudgmentInvalid
from ...models import Assignment, JudgingDesign
from ...services.submission import SubmitResult, active_seconds_clean, key_clean, submission_store
from .assignments import assignment_write, assignment_write_opening
from .models import AssignmentItem, Judgment


def absolute_assignments_write(*, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
    """Every judge's items (:func:`metrics.core.assignment.plan_assignments`). Returns (items, items written)."""
    items, groups, pks = study_items(study)
    n_written = 0
    if judges:
        by_name = {u.username: u for u in judges}
        plan = plan_assignments(items, groups, list(by_name), seed=design.seed, judges_per_item=judges_per_item(design))
        for order in plan.orders:
            # A judge whose judgments were imported into the draft keeps them: the plan is added.
            n_written += assignment_write_opening(
                study=study, judge=by_name[order.judge], seed=order.seed, candidate_ids=[pks[i] for i in order.items]
            )
    return len(items), n_written


def _live_counts(study: Study) -> Counter:
    return Counter(
        dict(
            AssignmentItem.objects.filter(assignment__study=study)
            .values("candidate_id")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("candidate_id", "n")
        )
    )


def absolute_assignment_late(*, study: Study, design: JudgingDesign, judge: User) -> Assignment:
    """Fully crossed: every item the others have, in the judge's own seeded order. Exactly k
    per item: as many items as the lightest-loaded judge, from the items with the fewest
    judges. The caller holds the design's row lock."""
    assigned = _live_counts(study)
    # A late judge rates the items the others have (not data imported since).
    items, groups, pks = study_items(study, candidate_ids=list(assigned) if assigned else None)
    seed = derive_seed(design.seed, "order", judge.username)
    if design.judges_mode == JudgesMode.K_PER_ITEM and assigned:
        loads = Assignment.objects.filter(study=study).values_list("n_items", flat=True)
        counts = {key: assigned.get(pks[key], 0) for key in items}
        items = late_judge_items(counts, n_items=min(loads), seed=derive_seed(design.seed, "late", judge.username))
    order = order_items(items, groups, seed=seed)
    try:
        with transaction.atomic():
            return assignment_write(
                study=study, judge=judge, seed=seed, candidate_ids=[pks[i] for i in order], late=True
            )
    except IntegrityError:
        return Assignment.objects.get(study=study, judge=judge)


def absolute_assignment_for_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
) -> Assignment:
    """Fully crossed (or ``n_items`` empty): every item, in the judge's own order. Exactly k
    per item: ``n_items`` items from those with the fewest *live* judges (done or still
    held; released items count as free again)."""
    live = _live_counts(study)
    items, groups, pks = study_items(study)
    seed = derive_seed(design.seed, "order", judge.username)
    if n_items is not None and (design.judges_mode == JudgesMode.K_PER_ITEM or n_items < len(items)):
        counts = {key: live.get(pks[key], 0) for key in items}
        items = late_judge_items(
            counts, n_items=min(n_items, len(items)), seed=derive_seed(design.seed, "late", judge.username)
        )
    order = order_items(items, groups, seed=seed)
    return assignment_write(study=study, judge=judge, seed=seed, candidate_ids=[pks[i] for i in order], late=True)


def _design_criteria(study: Study) -> list[dict]:
    design = JudgingDesign.objects.filter(study=study).only("criteria").order_by().first()
    return design.criteria if design is not None else default_criteria()


def scores_clean(*, criteria: list[dict], scores: Mapping[str, object]) -> dict[str, int | float]:
    """Check one judgment's values against the design's criteria and scales.

    Every criterion needs a value on its own scale (:func:`annotation.judging.scales.value_clean`);
    unknown criteria are refused. Raises :class:`JudgmentInvalid` naming each problem.
    """
    slugs = [c["slug"] for c in criteria]
    if not isinstance(scores, Mapping):
        raise JudgmentInvalid(f"scores must map each criterion ({', '.join(slugs)}) to a value on its scale")
    errors: dict[str, list[str]] = {}
    for name in scores:
        if name not in slugs:
            errors.setdefault(str(name), []).append(f"unknown criterion; the criteria are {', '.join(slugs)}")
    out: dict[str, int | float] = {}
    for c in criteria:
        v = scores.get(c["slug"])
        if v is None or v == "":
            errors.setdefault(c["slug"], []).append(gettext("this criterion needs a value"))
            continue
        try:
            out[c["slug"]] = scales.value_clean(c["scale"], v)
        except ValueError as exc:
            errors.setdefault(c["slug"], []).append(str(exc))
    if errors:
        raise JudgmentInvalid(
            gettext("Rate every criterion on its scale — %(problems)s.")
            % {"problems": "; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items())},
            field_errors=errors,
        )
    return out


def judgment_submit(
    *,
    study: Study,
    judge: User,
    token: str,
    key: str,
    scores: Mapping[str, object],
    serve_stamp: str,
    active_seconds: float | None = None,
    source: str = JudgmentSource.API,
) -> SubmitResult:
    """Store one judge's values (one per criterion of the design) for one item of their
    assignment: the absolute protocol's submission, on :func:`submission_store`.

    Checks, in order: the key's form, the scores (every criterion of the design, each on
    its own scale: :func:`scores_clean`), the active time, then what the shared core
    checks. A new judgment runs the automatic QC screen-out
    (:func:`annotation.judging.services.queueing.after_judgment`) once it is stored.
    """
    key = key_clean(key)
    clean = scores_clean(criteria=_design_criteria(study), scores=scores)
    return submission_store(
        study=study,
        judge=judge,
        token=token,
        key=key,
        values=clean,
        serve_stamp=serve_stamp,
        active_seconds=active_seconds_clean(active_seconds),
        source=source,
        item_model=AssignmentItem,
        judgment_model=Judgment,
        after_stored=after_judgment,
    )
