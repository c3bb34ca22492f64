"""The absolute protocol's assignments: every judge's items at opening, a judge added
late, a join-link participant, and giving back a timed-out participant's items.

Items are candidates (controls included) keyed by (original id, system name), so the
same seed reproduces the same orders after a reset. Called through the protocol unit
(:mod:`.unit`) by the shared services, inside their transaction and locks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Unpack

from django.contrib.auth.models import User
from django.utils.translation import gettext

from annotation.judging.services.item_orders import (
    candidate_order_late,
    candidate_order_participant,
    candidate_orders_opening,
)
from annotation.judging.services.queueing import after_judgment
from annotation.models import Study

from ... import scales
from ...defaults import default_criteria
from ...errors import JudgmentInvalid
from ...models import Assignment, JudgingDesign
from ...services.submission import Envelope, SubmitResult, key_clean, submission_store
from .assignments import assignment_write, assignment_write_opening
from .models import AssignmentItem, Judgment


def absolute_assignments_write(*, study: Study, design: JudgingDesign, judges: list[User]) -> tuple[int, int]:
    """Every judge's items (:func:`candidate_orders_opening`). Returns (items, items written)."""
    n_items, orders = candidate_orders_opening(study=study, design=design, judges=judges)
    # A judge whose judgments were imported into the draft keeps them: the plan is added.
    n_written = sum(
        assignment_write_opening(study=study, judge=o.judge, seed=o.seed, candidate_ids=o.candidate_ids) for o in orders
    )
    return n_items, n_written


def absolute_assignment_late(*, study: Study, design: JudgingDesign, judge: User) -> Assignment:
    """A judge added after opening (:func:`candidate_order_late`). The caller holds the
    design's row lock."""
    o = candidate_order_late(study=study, design=design, judge=judge, item_model=AssignmentItem)
    return assignment_write(study=study, judge=judge, seed=o.seed, candidate_ids=o.candidate_ids, late=True)


def absolute_assignment_for_participant(
    *, study: Study, design: JudgingDesign, judge: User, n_items: int | None
) -> Assignment:
    """A join-link participant's items (:func:`candidate_order_participant`)."""
    o = candidate_order_participant(study=study, design=design, judge=judge, n_items=n_items, item_model=AssignmentItem)
    return assignment_write(study=study, judge=judge, seed=o.seed, candidate_ids=o.candidate_ids, late=True)


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


def judgment_submit(*, scores: Mapping[str, object], **envelope: Unpack[Envelope]) -> SubmitResult:
    """Store one judge's values (one per criterion of the design) for one item of their
    assignment: the absolute protocol's submission, on :func:`submission_store`.

    Checks, in order: the key's form, the scores (every criterion of the design, each on
    its own scale: :func:`scores_clean`), the active time, then what the shared core
    checks. A new judgment runs the automatic QC screen-out
    (:func:`annotation.judging.services.queueing.after_judgment`) once it is stored.
    """
    key_clean(envelope["key"])
    clean = scores_clean(criteria=_design_criteria(envelope["study"]), scores=scores)
    return submission_store(
        values=clean, item_model=AssignmentItem, judgment_model=Judgment, after_stored=after_judgment, **envelope
    )
